"""Claims on cache keys: one task or process pays for an answer, the others wait.

Claims are byte-range locks on one file per cache folder (``.claims``); these tests hold
a claim in another process, kill it, and check that nothing per key is left on disk.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from facetlab.client.cache import ResponseCache, cache_key
from facetlab.client.claims import CLAIMS_FILE, claim_key

KEY = cache_key("openai/m", {}, "facet-v3", "a prompt", 0)
OTHER = cache_key("openai/m", {}, "facet-v3", "another prompt", 0)


def _hold_in_child(root: Path, key: str) -> subprocess.Popen[str]:
    """A child process that claims ``key``, says so, and sleeps."""
    code = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from pathlib import Path
        from facetlab.client.claims import claim_key

        async def main():
            async with claim_key(Path({str(root)!r}), {key!r}):
                print("held", flush=True)
                time.sleep(60)

        asyncio.run(main())
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def test_tasks_of_one_process_take_a_key_in_turn(tmp_path: Path) -> None:
    order: list[str] = []

    async def task(name: str) -> None:
        async with claim_key(tmp_path, KEY, poll_s=0.01):
            order.append(f"{name} in")
            await asyncio.sleep(0.05)
            order.append(f"{name} out")

    async def main() -> None:
        await asyncio.gather(task("a"), task("b"))

    asyncio.run(main())
    assert order in (["a in", "a out", "b in", "b out"], ["b in", "b out", "a in", "a out"])


def test_two_spellings_of_one_folder_are_one_claim(tmp_path: Path) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "cache")
    entered: list[str] = []

    async def main() -> None:
        async with claim_key(tmp_path / "cache", KEY):
            waiter = asyncio.ensure_future(_enter(tmp_path / "link", entered))
            await asyncio.sleep(0.1)
            assert entered == []  # the same key through the symlink waits
        await asyncio.wait_for(waiter, 2)

    asyncio.run(main())
    assert entered == ["in"]


async def _enter(root: Path, entered: list[str], key: str = KEY) -> None:
    async with claim_key(root, key, poll_s=0.01):
        entered.append("in")


@pytest.mark.slow
def test_a_key_held_by_another_process_waits_and_its_death_frees_it(tmp_path: Path) -> None:
    child = _hold_in_child(tmp_path, KEY)
    try:

        async def attempt(key: str, wait_s: float) -> bool:
            entered: list[str] = []
            try:
                await asyncio.wait_for(_enter(tmp_path, entered, key), wait_s)
            except asyncio.TimeoutError:
                return False
            return entered == ["in"]

        assert asyncio.run(attempt(OTHER, 2.0))  # another key is free
        assert not asyncio.run(attempt(KEY, 0.3))  # this one is held over there
        child.send_signal(signal.SIGKILL)  # no clean-up runs in the child
        child.wait(5)
        start = time.monotonic()
        assert asyncio.run(attempt(KEY, 2.0))  # the kernel dropped the dead process's lock
        assert time.monotonic() - start < 1.0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_claims_leave_one_file_not_one_per_key(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    keys = [cache_key("openai/m", {}, "t", f"prompt {i}", 0) for i in range(200)]

    async def main() -> None:
        for key in keys:
            async with cache.claim(key):
                pass

    asyncio.run(main())
    left = sorted(p.relative_to(cache.root).as_posix() for p in cache.root.rglob("*"))
    assert left == [CLAIMS_FILE]
    assert os.stat(cache.root / CLAIMS_FILE).st_size == 0  # locks need no bytes on disk
