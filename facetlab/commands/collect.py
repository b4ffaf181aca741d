"""CLI command: ``facetlab collect DIR`` (record the answers of a sweep's open provider batches)."""

from pathlib import Path
from typing import Annotated

import typer

from facetlab.commands import fail


def collect_command(
    ctx: typer.Context,
    out: Annotated[Path, typer.Argument(help="The sweep folder a `facetlab run --batch` wrote.")],
    wait: Annotated[
        float,
        typer.Option("--wait", min=0.0, help="Seconds to wait for open batches to end."),
    ] = 0.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No live progress.")] = False,
) -> None:
    """Collect the provider batches a `facetlab run --batch` submitted: every ended batch's
    answers are recorded (failed requests as failed trials); open ones stay for later.

    It re-runs the sweep's recorded command (``sweep.json``) with ``--batch``, submitting
    nothing new: run it from the folder the sweep was started in (relative paths).
    """
    from facetlab.runner._sweepfile import read_sweep_json
    from facetlab.runner.batch import BATCHES_FILE

    if not (out / BATCHES_FILE).is_file():
        fail(f"{out}: no {BATCHES_FILE} (no batch was submitted to it)")
    try:
        doc = read_sweep_json(out)
    except Exception as exc:  # an unreadable sweep.json: one line
        fail(f"{out}/sweep.json: {str(exc).splitlines()[0]}")
    argv = (doc or {}).get("command")
    if not isinstance(argv, list) or argv[:2] != ["facetlab", "run"]:
        fail(
            f"{out}/sweep.json records no `facetlab run` command (a sweep started from "
            "Python): collect by calling facetlab.run(...) again with "
            "options=RunOptions(batch=True, batch_submit=False)"
        )
    args = _with_out([str(a) for a in argv[2:]], out)
    args += ["--batch", "--collect-only", "--batch-wait", str(wait)] + (
        ["--quiet"] if quiet else []
    )
    assert ctx.parent is not None  # a sub-command of the facetlab group
    group = ctx.parent.command
    run = group.get_command(ctx.parent, "run") if isinstance(group, typer.core.TyperGroup) else None
    if run is None:
        raise typer.Exit(code=2)
    code = run.main(args=args, prog_name="facetlab run", standalone_mode=False)
    raise typer.Exit(code=code if isinstance(code, int) else 0)


def _with_out(args: list[str], out: Path) -> list[str]:
    """The recorded arguments with ``--out`` set to ``out`` and ``--batch`` given once."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("--out", "-o", "--batch-wait"):
            skip = True
            continue
        if arg.startswith("--out=") or arg == "--batch" or arg.startswith("--batch-wait="):
            continue
        kept.append(arg)
    return [*kept, "--out", str(out)]


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command("collect")(collect_command)
