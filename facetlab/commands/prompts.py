"""CLI commands ``facetlab check-prompts`` and ``facetlab prompt``.

``check-prompts`` rebuilds every prompt recorded in a FACET data dir with one
template and compares byte for byte; ``prompt`` prints one prompt.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from facetlab.errors import FacetlabError

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="FACET data dir (holds instances/ and results/); default: the facetlab data dir.",
        file_okay=False,
    ),
]
TemplateOption = Annotated[
    str, typer.Option("--template", "-t", help="Prompt template: facet-v3 or facetlab-v1.")
]


def _data_dir(data_dir: Path | None) -> Path:
    if data_dir is not None:
        return data_dir
    from facetlab.datasets import data_dir as default_data_dir

    return default_data_dir()


def _fail(message: str) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


def check_prompts_command(
    data_dir: DataDirOption = None,
    template: TemplateOption = "facet-v3",
    show: Annotated[
        int, typer.Option("--show", help="How many mismatches to describe in detail.")
    ] = 5,
) -> None:
    """Rebuild every recorded FACET prompt and compare byte for byte (exit 1 on any mismatch)."""
    from facetlab.probes.recorded import check_prompts
    from facetlab.probes.templates import get_template

    try:
        get_template(template)
        report = check_prompts(_data_dir(data_dir), template)
    except FacetlabError as exc:
        raise _fail(str(exc)) from exc
    for probe, (ok, total) in sorted(report.by_probe().items()):
        typer.echo(f"  {probe:<7} {ok}/{total}")
    for check in report.failures[:show]:
        typer.echo(check.describe(), err=True)
    if len(report.failures) > show:
        typer.echo(f"... and {len(report.failures) - show} more mismatches", err=True)
    typer.echo(report.summary())
    if report.failures or not report.checks:
        raise typer.Exit(code=1)


def _load_instance(data_root: Path | None, instance: str) -> tuple[Any, list[Path]]:
    """The instance, and the folders its C2 / C3 files may be in: beside the instance
    file and its domain folder (a file's folder and, for a file in a sub-folder such as
    ``perturbations/``, the one above), else the FACET data's ``instances/``."""
    from facetlab.instances import load_instance

    path = Path(instance)
    if path.suffix == ".json" and path.is_file():
        folder = path.resolve().parent
        return load_instance(path), [folder, folder.parent]
    root = _data_dir(data_root)
    candidate = root / "instances" / f"{instance}.json"
    if not candidate.is_file():
        raise _fail(f"instance {instance!r}: no {candidate} (give an instance id or a JSON file)")
    return load_instance(candidate), [root / "instances"]


def _companion(folders: list[Path], sub: str, name: str) -> Path:
    """``<folder>/<sub>/<name>`` or ``<folder>/<name>``, in the first folder that has it;
    else a one-line error saying where it looked."""
    places = [p for f in dict.fromkeys(folders) for p in (f / sub / name, f / name)]
    found = next((p for p in places if p.is_file()), None)
    if found is None:
        raise _fail(f"no {name} in {', '.join(str(p.parent) for p in places)}")
    return found


def prompt_command(
    probe: Annotated[
        str, typer.Option("--probe", "-p", help="p1, p2, p3, anchor, c2, c0, c3 or h1.")
    ],
    instance: Annotated[
        str, typer.Option("--instance", "-i", help="Instance id (e.g. facet-neg-cf-001) or file.")
    ],
    factor: Annotated[
        str | None, typer.Option("--factor", "-f", help="C2: the ablated factor, fK or FK.")
    ] = None,
    template: TemplateOption = "facet-v3",
    form: Annotated[
        str, typer.Option("--form", help="C2 form: weighted, pilot or reconstruction.")
    ] = "weighted",
    c3_form: Annotated[
        str | None, typer.Option("--c3-form", help="C3 wording: legacy or strict (default: auto).")
    ] = None,
    hint: Annotated[
        str | None,
        typer.Option("--hint", help="H1: the hint kind to plant (default: the unhinted control)."),
    ] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Print one prompt exactly as it would be sent (no trailing newline added)."""
    from facetlab.instances import load_compliance_set, load_perturbation_set
    from facetlab.probes import build_prompt, get_probe

    try:
        chosen = get_probe(probe)
        inst, folders = _load_instance(data_dir, instance)
        iid = inst.instance_id
        extra: dict[str, Any] = {}
        perturbations = None
        if chosen.name == "c2":
            if factor is None:
                raise _fail("C2 needs --factor (e.g. --factor f3)")
            if inst.base_instance_id:  # C2 rewrites a base instance's factors
                raise _fail(f"{iid} is a variant: C2 rewrites its base {inst.base_instance_id}")
            perturbations = load_perturbation_set(
                _companion(folders, "perturbations", f"{iid}-c2.json")
            )
            extra["form"] = form
        elif chosen.name == "c3":
            extra["compliance"] = load_compliance_set(
                _companion(folders, "compliance", f"{iid}-c3.json")
            )
            extra["c3_form"] = c3_form
        if hint is not None and chosen.name != "h1":
            raise _fail(f"--hint is for h1, not {chosen.name}")
        if hint is not None:  # the sweep's own cells: the prompt as it is sent
            from facetlab.probes.hint import UNHINTED, hint_cells, load_hints

            cells = {k: text for k, text, _ in hint_cells(inst, load_hints(folders[0]), template)}
            if hint not in cells or hint == UNHINTED:
                kinds = ", ".join(k for k in cells if k != UNHINTED)
                raise _fail(f"no hint kind {hint!r}; this domain's kinds: {kinds}")
            typer.echo(cells[hint], nl=False)
            return
        text = build_prompt(
            chosen,
            inst,
            template=template,
            factor=factor,
            perturbations=perturbations,
            **extra,
        )
    except FacetlabError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(text, nl=False)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``facetlab`` app."""
    app.command("check-prompts")(check_prompts_command)
    app.command("prompt")(prompt_command)
