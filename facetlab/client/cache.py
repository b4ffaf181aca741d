"""A content-addressed response cache, so no request is paid for twice.

The key is the sha256 of (model, sampling params, template, prompt, repeat, and
the endpoint when one is set): the same question asked of the same model on the
same server in the same repeat slot is answered from disk, in this sweep or any
later one that shares the cache directory. Transport settings (timeouts) are not
part of it. An entry whose stored key is not the one asked for is not served. Where
the answer's record is a file of its own, the entry is that file, hard-linked once the
record is written (:meth:`ResponseCache.store`): one file written per answer, not two
(creating a file costs up to ~0.8 ms of kernel CPU on a busy virtual disk; a link ~0.02
ms), and a process killed in between has the record, so its trial is done. Otherwise
(records in shards, a cache on another disk) an entry of its own is written atomically
(temp file + ``os.replace``) before the record, so a process killed in between still
finds the answer on restart. Either way an entry proves itself before it is served: it
carries the digest of what was received (``received_sha256``, the records' one rule,
:func:`facetlab.jsonio.received_sha256`), and an entry whose content does not match it —
its own file, a linked record, an answer restored from an emergency file — is named,
removed and asked again, so the fresh answer replaces it.

A write that fails is tried once more; a sweep sets space aside in the cache folder
when it starts (:meth:`ResponseCache.reserve`) and frees it when a write fails for
lack of space, so the answers of the calls still in flight are cached too. An answer
no write took is kept in memory (:attr:`ResponseCache.unsaved`) and, at the end of
the run, written to an emergency file (:meth:`ResponseCache.save_unsaved`) that the
next run reads back into the cache: a full disk loses no paid answer.

Sweeps sharing a cache claim a key before paying for it (:meth:`ResponseCache.claim`,
a byte-range lock per key): a second sweep asking the same question waits for the
first's answer instead of paying again.

>>> key = cache_key("openai/gpt-5.4", {"temperature": 0}, "facet-v3", "Hi", 0)
>>> len(key)
64
"""

import contextlib
import errno
import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from facetlab.backends._common import redact_secrets, stored_reply
from facetlab.backends.base import ModelResponse, Usage
from facetlab.client.claims import claim_key
from facetlab.errors import RecordWarning
from facetlab.files import atomic_write_text
from facetlab.jsonio import digest_problem, read_json_file, received_sha256


def cache_key(
    model: str,
    params: Mapping[str, Any],
    template: str,
    prompt: str,
    repeat: int,
    *,
    endpoint: str | None = None,
) -> str:
    """sha256 hex of the canonical JSON of what determines an answer.

    ``endpoint`` (the server's base URL without credentials) is included only when
    set, so keys of sweeps against a provider's default server stay what they were.
    """
    identity: dict[str, Any] = {
        "model": model,
        "params": dict(params),
        "template": template,
        "prompt": prompt,
        "repeat": repeat,
    }
    if endpoint:
        identity["endpoint"] = endpoint
    payload = json.dumps(
        identity,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


RESERVE_BYTES = 2 * 1024 * 1024
"""Space a sweep sets aside in its cache folder for the answers of calls in flight when
the disk fills up (an entry is a few KB; 2 MB holds hundreds)."""

_RESERVE_PREFIX = ".reserve-"
_UNSAVED_PREFIX = ".unsaved-"


class CacheWriteError(OSError):
    """A cache entry could not be written the normal way; ``kept`` says where its answer is.

    ``"cache"``: written after all, into the space the sweep set aside (the disk is
    full: stop). ``"memory"``: on no disk yet (:meth:`ResponseCache.save_unsaved`
    writes it to an emergency file at the end of the run).
    """

    def __init__(self, cause: OSError, kept: str) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), cause.filename)
        self.kept = kept


class ResponseCache:
    """Responses on disk, one JSON file per key under ``root/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.unsaved: dict[str, str] = {}
        """Entries (key -> JSON) of paid answers no write took: see :meth:`save_unsaved`."""
        self.full: OSError | None = None
        """The first failed write, if any."""
        self._reserve: Path | None = None

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        """The stored response, or ``None`` (a corrupt entry counts as a miss)."""
        path = self._path(key)
        try:
            os.stat(path)
        except OSError:  # none (the common case: one cheap system call), or unreachable
            return None
        raw, problem = read_json_file(path, expect=dict)  # bounded: a hostile entry is a miss
        if problem is not None:
            if path.is_file():  # a bad entry (not a missing one) is said, then asked again
                warnings.warn(
                    f"{path}: skipped on resume, not readable from the cache ({problem}); "
                    "its trial is run again",
                    RecordWarning,
                    stacklevel=2,
                )
            return None
        try:
            if raw.get("key") != key:
                return None  # copied or renamed from another trial: not this answer
            if (edited := digest_problem(raw)) is not None:  # never served: asked, replaced
                warnings.warn(
                    f"{path}: not served from the cache, {edited}; its trial is asked again "
                    "and the entry replaced",
                    RecordWarning,
                    stacklevel=2,
                )
                path.unlink(missing_ok=True)
                return None
            if str(raw.get("format", "")).startswith("facetlab.record/"):  # a linked record
                raw = {**raw, "text": raw["raw_response"], "model_id": raw["model_id_reported"]}
            usage = raw.get("usage") or {}
            return stored_reply(
                ModelResponse(
                    text=str(raw["text"]),
                    model_id=str(raw["model_id"] or ""),
                    usage=Usage(
                        usage.get("input_tokens"),
                        usage.get("output_tokens"),
                        usage.get("cached_input_tokens"),
                        usage.get("reasoning_tokens"),
                    ),
                    stop_reason=raw.get("stop_reason"),
                    latency_s=raw.get("latency_s"),
                    refusal=bool(raw.get("refusal", False)),
                    provider_request_id=raw.get("provider_request_id"),
                    thinking=raw.get("thinking"),
                )
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put(self, key: str, response: ModelResponse, *, batch: bool = False) -> None:
        """Store a paid response (``batch`` notes it was billed at the batch rate)."""
        entry = {
            "key": key,
            "text": response.text,
            "model_id": response.model_id,
            "usage": asdict(response.usage),
            "stop_reason": response.stop_reason,
            "latency_s": response.latency_s,
            "refusal": response.refusal,
            "provider_request_id": response.provider_request_id,
            "thinking": response.thinking,
            "batch": batch,
        }
        stored = json.loads(redact_secrets(json.dumps(entry, ensure_ascii=False)))
        stored["received_sha256"] = received_sha256(stored)  # proves itself when served
        self._store(key, json.dumps(stored, ensure_ascii=False))

    def store(
        self, key: str, response: ModelResponse, record: Path | None = None, *, batch: bool = False
    ) -> None:
        """Keep a paid answer: as a hard link to ``record``, the file its record was just
        written to, where the file system allows it (same disk); else as an entry of its own
        (:meth:`put`)."""
        if record is not None:
            path = self._path(key)
            try:
                try:
                    os.link(record, path)
                except FileNotFoundError:  # its folder first (made only when missing)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    os.link(record, path)
                return
            except FileExistsError:
                return  # this answer is there already
            except OSError:
                pass  # another disk, a file system without links: an entry of its own
        self.put(key, response, batch=batch)

    def _store(self, key: str, text: str) -> None:
        """Write an entry: once more on failure, then into the reserved space; else keep it
        in memory. Raises :class:`CacheWriteError` (the sweep stops) unless the first
        or second write worked."""
        path = self._path(key)
        for _ in range(2):  # the second for a passing failure (space freed, a flaky mount)
            try:
                atomic_write_text(path, text, durable=False)  # the record is durable
                self.unsaved.pop(key, None)
                return
            except OSError as failed:
                self.full, cause = self.full or failed, failed
        if self._release_reserve():
            try:
                atomic_write_text(path, text, durable=False)  # the record is durable
                self.unsaved.pop(key, None)
            except OSError as third:
                cause = third
            else:
                raise CacheWriteError(cause, "cache") from None
        self.unsaved[key] = text
        raise CacheWriteError(cause, "memory") from None

    def reserve(self, nbytes: int = RESERVE_BYTES) -> None:
        """Set ``nbytes`` aside in the cache folder for the answers in flight when the disk
        fills up; read back answers an earlier run left in emergency files."""
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)
            self._remove_stale_reserves()
            self.restore_unsaved()
            path = self.root / f"{_RESERVE_PREFIX}{os.getpid()}"
            with open(path, "wb") as handle:  # real blocks, not a sparse file
                try:
                    os.posix_fallocate(handle.fileno(), 0, nbytes)
                except (AttributeError, OSError):  # no fallocate here: write zeros
                    handle.write(b"\0" * nbytes)
            self._reserve = path

    def release(self) -> None:
        """Give the reserved space back (end of a run)."""
        self._release_reserve()

    def _release_reserve(self) -> bool:
        path, self._reserve = self._reserve, None
        if path is None:
            return False
        with contextlib.suppress(OSError):
            path.unlink()
            return True
        return False

    def _remove_stale_reserves(self) -> None:
        for path in self.root.glob(f"{_RESERVE_PREFIX}*"):
            pid = path.name[len(_RESERVE_PREFIX) :]
            if pid.isdigit() and not _alive(int(pid)):
                path.unlink(missing_ok=True)

    def _emergency_places(self) -> list[Path]:
        """Where unsaved answers go, in order: the cache folder (a failed write may have
        left room), then the system's temp folder and the home folder (often another disk),
        under a name derived from this cache's path so the next run finds them."""
        tag = hashlib.sha256(str(self.root.resolve()).encode()).hexdigest()[:16]
        return [
            self.root,
            Path(tempfile.gettempdir()) / f"facetlab-unsaved-{tag}",
            Path.home() / ".facetlab-unsaved" / tag,
        ]

    def save_unsaved(self) -> str | None:
        """Write the answers no cache write took to an emergency file; say where (or that
        nothing could hold them). None when every paid answer reached the cache."""
        if not self.unsaved:
            return None
        for key in list(self.unsaved):  # space may have come back (a freed reserve, a deleted file)
            with contextlib.suppress(OSError):
                atomic_write_text(self._path(key), self.unsaved[key])
                del self.unsaved[key]
        if not self.unsaved:
            return None
        entries = "[" + ",\n".join(self.unsaved.values()) + "]\n"
        name = f"{_UNSAVED_PREFIX}{os.getpid()}-{hashlib.sha256(entries.encode()).hexdigest()[:8]}.json"
        for folder in self._emergency_places():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                atomic_write_text(folder / name, entries)
            except OSError:
                continue
            count = len(self.unsaved)
            self.unsaved.clear()
            return (
                f"{count} answer(s) paid for are in the emergency file {folder / name} "
                "(the next run reads them back into the cache)"
            )
        return (
            f"{len(self.unsaved)} answer(s) paid for could not be written to the cache, the "
            "records or an emergency file (no writable folder)"
        )

    def restore_unsaved(self) -> int:
        """Move the answers of emergency files back into the cache; how many."""
        restored = 0
        for folder in self._emergency_places():
            for path in sorted(folder.glob(f"{_UNSAVED_PREFIX}*.json")) if folder.is_dir() else []:
                raw, problem = read_json_file(path, expect=list)
                if problem is not None:
                    warnings.warn(
                        f"{path}: not readable ({problem}); left as is", RecordWarning, stacklevel=2
                    )
                    continue
                for entry in raw:
                    key = entry.get("key") if isinstance(entry, dict) else None
                    if isinstance(key, str) and len(key) == 64 and key not in self:
                        atomic_write_text(self._path(key), json.dumps(entry, ensure_ascii=False))
                        restored += 1
                path.unlink()
        return restored

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def claim(self, key: str, *, poll_s: float = 0.05) -> AbstractAsyncContextManager[None]:
        """Hold ``key``'s claim across processes (:mod:`facetlab.client.claims`).

        Waits (without blocking the event loop) while another sweep holds it: that
        sweep is paying for this answer, which is then read from the cache.
        """
        return claim_key(self.root, key, poll_s=poll_s)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as exc:  # EPERM: it exists, owned by someone else
        return exc.errno == errno.EPERM
    return True
