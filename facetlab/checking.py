"""Check instance, C2 perturbation and C3 compliance files; report every problem at once.

Each problem names the file, the JSON pointer of the offending value and what
was expected, like a compiler diagnostic::

    instances/triage-0001.json:/factors/2/text: error: expected non-empty text

Checks: the file parses as JSON (else line and column), required fields are
present with the right types, an instance has at least 2 factors (a warning
below 5), factor ids are unique, texts are not empty, a counterfactual has
exactly one neutralized factor, and a perturbation or compliance set names a
known base instance and only that instance's factors. Base instances are
looked up among the files being checked and in the local FACET data, if it is
already present (validation never downloads).

Example:
    >>> from facetlab.checking import validate_paths
    >>> for problem in validate_paths(["instances/"]):  # doctest: +SKIP
    ...     print(problem)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from facetlab.datasets import ENV_MIRROR, cache_dir
from facetlab.errors import InstanceError
from facetlab.instances import (
    ComplianceSet,
    FileKind,
    Instance,
    Issue,
    PerturbationSet,
    compliance_issues,
    detect_kind,
    instance_issues,
    json_type,
    key_issues,
    parse_issues,
    perturbation_issues,
    read_json_file,
)
from facetlab.instances.directionality import reversal_problem
from facetlab.instances.domain import (
    DOMAIN_FILE,
    HINTS_FILE,
    domain_file_issues,
    domain_settings,
    read_domain_file,
    with_domain_vocabulary,
)
from facetlab.instances.rewrites import cue_phrases_in
from facetlab.names import check_safe_id
from facetlab.probes.hint import hint_file_issues, read_hints_file
from facetlab.probes.templates import DEFAULT_TEMPLATE, TEMPLATES

__all__ = [
    "Problem",
    "ValidationReport",
    "cue_phrases_in",
    "json_schema",
    "text_warnings",
    "validate",
    "validate_paths",
    "vocabulary_warnings",
]

Severity = Literal["error", "warning"]

_PLACES_SHOWN = 3  # places named on a grouped line before "and N more"


def _places(problems: Sequence[Problem]) -> str:
    shown = [f"{p.file}:{p.pointer}" if p.pointer else p.file for p in problems]
    more = len(shown) - _PLACES_SHOWN
    return ", ".join(shown[:_PLACES_SHOWN]) + (f" and {more} more" if more > 0 else "")


_MODELS: dict[FileKind, type[BaseModel]] = {
    "instance": Instance,
    "perturbations": PerturbationSet,
    "compliance": ComplianceSet,
}


_KIND_NAMES: dict[FileKind, str] = {
    "instance": "an instance file",
    "perturbations": "a C2 perturbation file",
    "compliance": "a C3 compliance file",
}


@dataclass(frozen=True)
class Problem:
    """One problem in one file, at one JSON pointer (``""`` is the whole document)."""

    file: str
    pointer: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.pointer}" if self.pointer else self.file
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class ValidationReport:
    """Every file checked and every problem found."""

    files: tuple[str, ...]
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.problems if p.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return self.errors == 0

    def lines(self) -> list[str]:
        """One line per cause: a problem found in one place as :class:`Problem` prints it;
        the same message in several places once, with the count and the first places.
        ``domain.json`` problems come first (they cause others)."""
        causes: dict[tuple[str, str], list[Problem]] = {}
        for p in sorted(self.problems, key=lambda p: not p.file.endswith(DOMAIN_FILE)):
            causes.setdefault((p.severity, p.message), []).append(p)
        return [
            str(places[0]) if len(places) == 1 else
            f"{severity} in {len(places)} places: {message} ({_places(places)})"
            for (severity, message), places in causes.items()
        ]  # fmt: skip

    def summary(self) -> str:
        def plural(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        return (
            f"{plural(len(self.files), 'file')} checked: "
            f"{plural(self.errors, 'error')}, {plural(self.warnings, 'warning')}"
        )


@dataclass
class _Parsed:
    file: str
    path: Path
    kind: FileKind
    model: BaseModel | None


def _collect(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[tuple[str, Path]], list[Problem]]:
    """Files to check (folders searched recursively for ``*.json``), and missing paths."""
    files: list[tuple[str, Path]] = []
    problems: list[Problem] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*.json")
                if not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            candidates = [(str(p), p) for p in found]
        elif os.path.lexists(path):  # a FIFO or a broken link is refused when read
            candidates = [(str(raw), path)]
        else:
            problems.append(
                Problem(str(raw), "", "error", "no such file or folder (expected JSON files)")
            )
            continue
        for shown, p in candidates:
            try:
                key = p.resolve()
            except (OSError, RuntimeError):  # a symlink loop: reported when read
                key = p
            if key not in seen:
                seen.add(key)
                files.append((shown, p))
    return files, problems


def _with_file(file: str, issues: Iterable[Issue]) -> list[Problem]:
    return [Problem(file, i.pointer, i.severity, i.message) for i in issues]


def _parse(file: str, path: Path) -> tuple[_Parsed | None, list[Problem]]:
    reader = read_hints_file if path.name == HINTS_FILE else read_json_file
    data, problem = reader(path)
    if problem is not None:
        return None, [Problem(file, "", "error", problem)]
    if path.name == DOMAIN_FILE:
        return None, _domain_file_problems(file, path)
    if path.name == HINTS_FILE:  # the H1 hint kinds (facetlab.probes.hint)
        return None, _with_file(file, hint_file_issues(data))
    kind = detect_kind(path, data)
    if not isinstance(data, dict):
        message = f"expected a JSON object ({_KIND_NAMES[kind]}), got {json_type(data)}"
        return None, [Problem(file, "", "error", message)]
    found: list[Problem] = []
    if kind == "instance":  # the folder's domain.json declares the shared vocabulary
        try:
            domain = domain_settings(path.parent)
        except InstanceError:  # its problems are reported once, at the file itself
            domain = domain_settings(path.parent, lenient=True)
            message = f"its folder's {DOMAIN_FILE} has errors (reported there): fix them first"
            found.append(Problem(file, "", "error", message))
        data = with_domain_vocabulary(data, domain)
    model_cls = _MODELS[kind]
    try:
        model = model_cls.model_validate(data)
    except ValidationError as exc:
        parsed = _Parsed(file, path, kind, None)
        found += _with_file(file, parse_issues(exc, model_cls))
        # Keep the id so that other files can still name this instance as their base.
        assert isinstance(data, dict)
        return parsed if isinstance(data.get("instance_id"), str) else None, found
    return _Parsed(file, path, kind, model), found


def _domain_file_problems(file: str, path: Path) -> list[Problem]:
    """A ``domain.json``: every problem (unknown keys first), and every declared word's
    reversal (CRAFT's negation)."""
    data, _ = read_json_file(path)
    issues = domain_file_issues(data) or vocabulary_warnings(
        read_domain_file(path).directionality_vocabulary
    )
    return _with_file(file, issues)


def vocabulary_warnings(vocabulary: dict[str, Any] | None) -> list[Issue]:
    """A warning for every declared word that CRAFT's negation cannot reverse.

    ``facetlab validity`` negates a factor by swapping ``toward_X`` and ``against_X``;
    a word without such a pair keeps its direction when negated, which silently
    changes the CRAFT column (see ``docs/instances.md``).
    """
    return [
        Issue(
            f"/directionality_vocabulary/{word}",
            "warning",
            f"{why}; expected toward_X / against_X pairs (a negated factor would keep "
            "its direction in facetlab validity's CRAFT column)",
        )
        for word in vocabulary or {}
        if (why := reversal_problem(word, vocabulary)) is not None
    ]


def _local_facet_instances() -> list[Path]:
    """FACET instance files already on disk (mirror or cache); never downloads."""
    folders = [cache_dir() / "instances"]
    if mirror := os.environ.get(ENV_MIRROR):
        folders.append(Path(mirror) / "instances")
    return [p for folder in folders if folder.is_dir() for p in sorted(folder.glob("*.json"))]


def validate(
    paths: Sequence[str | os.PathLike[str]], *, use_facet_data: bool = True
) -> ValidationReport:
    """Check every instance, perturbation and compliance file under ``paths``.

    ``use_facet_data`` lets perturbation and compliance files name FACET v3
    instances that are not among ``paths`` (only if the data is already local).

    Example:
        >>> report = validate(["tests/fixtures/broken_instances"])  # doctest: +SKIP
        >>> report.summary(), report.ok  # doctest: +SKIP
        ('17 files checked: 14 errors, 3 warnings', False)
    """
    files, problems = _collect(paths)
    parsed: list[_Parsed] = []
    for file, path in files:
        item, found = _parse(file, path)
        problems.extend(found)
        if item is not None:
            parsed.append(item)

    # Instances by id: the checked files first, then the local FACET data. Every copy of
    # a duplicated id is kept by folder, so a C2 file is checked against its own domain's.
    known: dict[str, Instance | None] = {}
    origin: dict[str, str] = {}
    copies: dict[tuple[str, Path], Instance | None] = {}
    for item in parsed:
        if item.kind != "instance":
            continue
        instance_id = (
            item.model.instance_id if isinstance(item.model, Instance) else _read_id(item.path)
        )
        if instance_id is None:
            continue
        model_or_none = item.model if isinstance(item.model, Instance) else None
        copies.setdefault((instance_id, item.path.parent.resolve()), model_or_none)
        if instance_id in origin:
            problems.append(
                Problem(
                    item.file,
                    "/instance_id",
                    "error",
                    f"duplicate instance_id {instance_id!r} (also in {origin[instance_id]}); "
                    "expected unique ids across the checked folders",
                )
            )
            continue
        origin[instance_id] = item.file
        known[instance_id] = model_or_none
    if use_facet_data:
        for path in _local_facet_instances():
            try:
                facet = Instance.model_validate_json(path.read_bytes())
            except (OSError, ValidationError):
                continue
            known.setdefault(facet.instance_id, facet)

    for item in parsed:
        model = item.model
        if model is not None:
            problems.extend(_with_file(item.file, key_issues(model)))
        if isinstance(model, Instance):
            problems += _with_file(
                item.file,
                [
                    *instance_issues(model),
                    *text_warnings(model),
                    *_reversal_warnings(model, item.path),
                ],
            )
            if (unsafe := check_safe_id(model.instance_id)) is not None:
                problems.append(
                    Problem(item.file, "/instance_id", "error", f"instance_id {unsafe}")
                )
        elif isinstance(model, (PerturbationSet, ComplianceSet)):
            base_id = model.base_instance_id
            if base_id not in known:
                problems.append(
                    Problem(
                        item.file,
                        "/base_instance_id",
                        "error",
                        f"unknown base instance {base_id!r}; expected the instance_id of an "
                        "instance among the checked files or in the FACET data",
                    )
                )
            base = _own_copy(copies, base_id, item.path) or known.get(base_id)
            if isinstance(model, PerturbationSet):
                problems += _with_file(
                    item.file, [*perturbation_issues(model, base), *text_warnings(model)]
                )
            else:
                problems.extend(_with_file(item.file, compliance_issues(model, base)))

    searched = [Path(p).resolve() for p in paths if Path(p).is_dir()]  # folders, not files
    problems.extend(_key_cell_warnings(parsed, searched))
    order = {file: i for i, (file, _) in enumerate(files)}
    problems.sort(key=lambda p: order.get(p.file, -1))  # stable: keeps per-file order
    return ValidationReport(tuple(f for f, _ in files), tuple(problems))


# --------------------------------------------------------------------------- authoring lint


def _cue_issue(pointer: str, text: str, what: str) -> list[Issue]:
    found = list(dict.fromkeys(cue_phrases_in(text)))
    if not found:
        return []
    quoted = ", ".join(repr(c) for c in found)
    return [
        Issue(
            pointer,
            "warning",
            f"{what} contains the cue phrase(s) {quoted}, which tell the model the factor was "
            "neutralized; expected cue-free wording (rewrite the facts so they point neither way)",
        )
    ]


def _cut_issue(pointer: str, text: str) -> list[Issue]:
    template = TEMPLATES[DEFAULT_TEMPLATE]
    cuts = {"P1": template.p1_cut, "weighted-rank": template.weighted_cut}
    limits = {probe: c for probe, c in cuts.items() if c is not None}
    if not limits or len(text) <= min(limits.values()):
        return []
    shortest = min(limits.values())
    where = " and ".join(f"{c} characters in {probe} prompts" for probe, c in limits.items())
    lost = text[shortest:].strip()
    tail = lost if len(lost) <= 40 else "…" + lost[-40:]
    return [
        Issue(
            pointer,
            "warning",
            f"text is {len(text)} characters; the default template ({template.name}) cuts "
            f"factor text at {where}, so a prompt drops {tail!r}; expected at most "
            f"{shortest} characters (or run with --template facetlab-v1)",
        )
    ]


def text_warnings(document: Instance | PerturbationSet) -> list[Issue]:
    """Authoring warnings about texts: cue phrases where the text should be cue-free
    (adversarial rewrites, C2 neutral rewrites) and factor text the default template cuts.

    >>> from facetlab.instances import PerturbationSet
    >>> pset = PerturbationSet.model_validate({"base_instance_id": "x", "perturbations": [
    ...     {"variant_id": "x-c2-f1", "perturbed_factor_id": "f1",
    ...      "neutral_rewrite": "This is not a decisive point."}]})
    >>> [(i.pointer, i.severity) for i in text_warnings(pset)]
    [('/perturbations/0/neutral_rewrite', 'warning')]
    """
    issues: list[Issue] = []
    if isinstance(document, PerturbationSet):
        for i, p in enumerate(document.perturbations):
            pointer = f"/perturbations/{i}/neutral_rewrite"
            issues += _cue_issue(pointer, p.neutral_rewrite, "the C2 neutral rewrite")
            issues += _cut_issue(pointer, p.neutral_rewrite)
        return issues
    for i, factor in enumerate(document.factors):
        pointer = f"/factors/{i}/text"
        if document.is_adversarial:
            issues += _cue_issue(pointer, factor.text, "an adversarial rewrite's factor text")
        issues += _cut_issue(pointer, factor.text)
    return issues


def _reversal_warnings(instance: Instance, path: Path) -> list[Issue]:
    """Direction words the file declares (or uses) that CRAFT's negation cannot reverse.

    Words declared in the folder's ``domain.json`` are reported there, once.
    """
    vocabulary = instance.directionality_vocabulary or {}
    shared = domain_settings(path.parent, lenient=True).directionality_vocabulary or {}
    own = {w: v for w, v in vocabulary.items() if w not in shared or shared[w] != v}
    issues = [
        i
        for i in vocabulary_warnings(vocabulary)
        if i.pointer.removeprefix("/directionality_vocabulary/") in own
    ]
    declared = {w.strip().lower() for w in vocabulary}
    for n, factor in enumerate(instance.factors):
        word = factor.directionality.strip().lower()
        if word in declared:
            continue  # reported at its declaration
        if (why := reversal_problem(factor.directionality, vocabulary)) is not None:
            issues.append(Issue(f"/factors/{n}/directionality", "warning", why))
    return issues


def _key_cell_warnings(parsed: Sequence[_Parsed], searched: Sequence[Path]) -> list[Problem]:
    """A warning per domain folder (under a folder given to validate) that lacks what a
    validity key cell needs: without counterfactuals, adversarial rewrites or C2 files
    those cells have no trial."""
    folders: dict[Path, list[Instance]] = {}
    psets: set[Path] = set()
    for item in parsed:
        here = item.path.parent.resolve()
        if isinstance(item.model, Instance):
            if any(here == d or d in here.parents for d in searched):
                folders.setdefault(here, []).append(item.model)
        elif isinstance(item.model, PerturbationSet):
            psets.add(here.parent)
    problems: list[Problem] = []
    for folder, instances in folders.items():
        variants = any(i.is_counterfactual or i.is_adversarial for i in instances)
        if not variants and folder not in psets:
            continue  # base instances only: not (yet) a domain for the probes
        lacks = {
            "no counterfactual (the P1/P2 cells of wadd+canonical and cue)": not any(
                i.is_counterfactual and i.neutralized_label for i in instances
            ),
            "no adversarial rewrite (the P3 cell of cue)": not any(
                i.is_adversarial for i in instances
            ),
            "no C2 perturbation file (the C2 cell of lex+theater)": folder not in psets,
        }
        if missing := [what for what, lacking in lacks.items() if lacking]:
            problems.append(
                Problem(
                    str(folder),
                    "",
                    "warning",
                    f"{'; '.join(missing)}: facetlab validity's key cells would have no trials "
                    "here; expected a counterfactual, its -adv rewrite and a C2 file",
                )
            )
    return problems


def _own_copy(
    copies: dict[tuple[str, Path], Instance | None], instance_id: str, companion: Path
) -> Instance | None:
    """The copy of ``instance_id`` in the companion file's domain folder (the folder that
    holds its ``perturbations/`` or ``compliance/`` folder, or its own folder), if any."""
    here = companion.parent.resolve()
    found = (copies.get((instance_id, folder)) for folder in (here.parent, here))
    return next((copy for copy in found if copy is not None), None)


def _read_id(path: Path) -> str | None:
    data, _ = read_json_file(path)
    value = data.get("instance_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def validate_paths(paths: Sequence[str | os.PathLike[str]]) -> list[Problem]:
    """Every problem in the files under ``paths`` (see :func:`validate`)."""
    return list(validate(paths).problems)


def json_schema(kind: FileKind = "instance") -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of an instance, perturbation or compliance file.

    Example:
        >>> json_schema()["required"][:3]
        ['instance_id', 'doctrine', 'case_background']
    """
    schema = _MODELS[kind].model_json_schema()
    titles = {
        "instance": "facetlab instance",
        "perturbations": "facetlab C2 perturbation set",
        "compliance": "facetlab C3 compliance set",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": titles[kind],
    }
