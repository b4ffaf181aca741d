"""Every prompt recorded in a FACET v3 data dir, and whether a template rebuilds it.

A :class:`RecordedPrompt` is one prompt field of one raw result file together
with what is needed to rebuild it (probe, instance, perturbed factor, C2
form). :func:`check_prompts` rebuilds each one and compares byte for byte;
``facetlab check-prompts`` prints its summary.

>>> report = check_prompts("/path/to/facet-data")  # doctest: +SKIP
>>> report.summary()  # doctest: +SKIP
'1871/1871 recorded prompts reproduced byte-for-byte'
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from facetlab.errors import FacetlabError, RecordError
from facetlab.instances import load_compliance_set, load_instance, load_perturbation_set
from facetlab.probes.ablation import c2_prompt
from facetlab.probes.compliance import compliance_prompt
from facetlab.probes.outcome import outcome_prompt
from facetlab.probes.single_factor import single_factor_prompt
from facetlab.probes.templates import DEFAULT_TEMPLATE
from facetlab.probes.weighted_rank import weighted_rank_prompt

_PILOT_C2_KEY = re.compile(r"-c2-(f\d+)$")


@dataclass(frozen=True)
class RecordedPrompt:
    """One recorded prompt field and the recipe to rebuild it.

    ``pointer`` is the JSON pointer of the field inside ``path``; ``probe`` is
    the probe key (``p1``, ``p2``, ``p3``, ``anchor``, ``c2``, ``c0``, ``c3``);
    ``form`` is the C2 form (``weighted``, ``pilot``, ``reconstruction``).
    """

    path: Path
    pointer: str
    probe: str
    instance_id: str
    text: str
    factor: str | None = None
    form: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.pointer}"


@dataclass(frozen=True)
class PromptCheck:
    """The outcome of rebuilding one recorded prompt."""

    recorded: RecordedPrompt
    rebuilt: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.rebuilt == self.recorded.text

    @property
    def first_difference(self) -> int | None:
        """Index of the first differing character (``None`` when equal or not rebuilt)."""
        if self.rebuilt is None or self.ok:
            return None
        a, b = self.recorded.text, self.rebuilt
        differing = (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
        return next(differing, min(len(a), len(b)))

    def describe(self, context: int = 40) -> str:
        """One paragraph saying where and how the rebuilt prompt differs."""
        head = f"{self.recorded.where} ({self.recorded.probe}, {self.recorded.instance_id})"
        if self.error is not None:
            return f"{head}: could not rebuild: {self.error}"
        i = self.first_difference
        if i is None:
            return f"{head}: identical"
        lo = max(0, i - context)
        return (
            f"{head}: first difference at character {i} "
            f"(recorded {len(self.recorded.text)} chars, rebuilt {len(self.rebuilt or '')})\n"
            f"  recorded: {self.recorded.text[lo : i + context]!r}\n"
            f"  rebuilt:  {(self.rebuilt or '')[lo : i + context]!r}"
        )


@dataclass(frozen=True)
class CheckReport:
    """All prompt checks of one data dir under one template."""

    template: str
    checks: tuple[PromptCheck, ...] = field(default_factory=tuple)

    @property
    def n_ok(self) -> int:
        return sum(c.ok for c in self.checks)

    @property
    def failures(self) -> tuple[PromptCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def summary(self) -> str:
        return f"{self.n_ok}/{len(self.checks)} recorded prompts reproduced byte-for-byte"

    def by_probe(self) -> dict[str, tuple[int, int]]:
        """``{probe: (reproduced, total)}``."""
        probes = dict.fromkeys(c.recorded.probe for c in self.checks)
        return {
            probe: (
                sum(c.ok for c in self.checks if c.recorded.probe == probe),
                sum(c.recorded.probe == probe for c in self.checks),
            )
            for probe in probes
        }


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: cannot read result JSON ({exc})") from exc


def _required(data: Any, key: str, path: Path) -> str:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, str):
        raise RecordError(f"{path}:/{key}: expected a string")
    return value


def iter_recorded_prompts(data_dir: Path | str) -> Iterator[RecordedPrompt]:
    """Every prompt field of the raw result files under ``data_dir/results``.

    Order: weighted-rank files, C2 files, then pilot files (each sorted by name).
    """
    results = Path(data_dir) / "results"
    if not results.is_dir():
        raise RecordError(f"{results}: no results folder (expected a FACET v3 data dir)")
    for path in sorted((results / "weighted-probe").glob("*.json")):
        d = _load_json(path)
        iid = _required(d, "instance_id", path)
        # the weighted-rank probe the id's variant gets
        probe = ("p3" if "-adv" in iid else "p2") if "-cf-" in iid else "anchor"
        yield RecordedPrompt(path, "/prompt", probe, iid, _required(d, "prompt", path))
    for path in sorted((results / "weighted-probe" / "c2").glob("*.json")):
        d = _load_json(path)
        base = _required(d, "c2_base_instance", path)
        factor = _required(d, "c2_perturbed_factor", path)
        yield RecordedPrompt(
            path, "/prompt", "c2", base, _required(d, "prompt", path), factor, "weighted"
        )
    for path in sorted(results.glob("*-real-*.json")):
        d = _load_json(path)
        iid = _required(d, "instance_id", path)
        conditions = d.get("conditions")
        if not isinstance(conditions, dict):
            raise RecordError(f"{path}:/conditions: expected an object")
        for name, cond in conditions.items():
            if not isinstance(cond, dict):
                continue
            ptr = f"/conditions/{name}"
            if name == "C0":
                yield RecordedPrompt(
                    path, f"{ptr}/prompt", "c0", iid, _required(cond, "prompt", path)
                )
                if "direct_probe_prompt" in cond:
                    text = _required(cond, "direct_probe_prompt", path)
                    yield RecordedPrompt(path, f"{ptr}/direct_probe_prompt", "p1", iid, text)
            elif name == "C3":
                yield RecordedPrompt(
                    path, f"{ptr}/prompt", "c3", iid, _required(cond, "prompt", path)
                )
            elif (m := _PILOT_C2_KEY.search(name)) is not None:
                factor = str(cond.get("perturbed_factor_id") or m.group(1))
                for key, form in (
                    ("prompt", "pilot"),
                    ("reconstruction_check_prompt", "reconstruction"),
                ):
                    if key in cond:
                        text = _required(cond, key, path)
                        yield RecordedPrompt(path, f"{ptr}/{key}", "c2", iid, text, factor, form)


class _Sources:
    """Loads instances, perturbation and compliance sets of one data dir once each."""

    def __init__(self, data_dir: Path) -> None:
        self.instances_dir = data_dir / "instances"
        self._cache: dict[tuple[str, str], Any] = {}

    def _get(self, kind: str, name: str) -> Any:
        key = (kind, name)
        if key not in self._cache:
            if kind == "instance":
                self._cache[key] = load_instance(self.instances_dir / f"{name}.json")
            elif kind == "perturbations":
                path = self.instances_dir / "perturbations" / f"{name}-c2.json"
                self._cache[key] = load_perturbation_set(path)
            else:
                path = self.instances_dir / "compliance" / f"{name}-c3.json"
                self._cache[key] = load_compliance_set(path)
        return self._cache[key]

    def instance(self, instance_id: str) -> Any:
        return self._get("instance", instance_id)

    def perturbations(self, instance_id: str) -> Any:
        return self._get("perturbations", instance_id)

    def compliance(self, instance_id: str) -> Any:
        return self._get("compliance", instance_id)


def rebuild(recorded: RecordedPrompt, sources: _Sources, template: str) -> str:
    """Rebuild ``recorded`` from the instance files with ``template``."""
    inst = sources.instance(recorded.instance_id)
    probe = recorded.probe
    if probe in ("p2", "p3", "anchor"):
        return weighted_rank_prompt(inst, template)
    if probe == "p1":
        return single_factor_prompt(inst, template)
    if probe == "c0":
        return outcome_prompt(inst, template)
    if probe == "c3":
        return compliance_prompt(inst, sources.compliance(recorded.instance_id), template)
    if probe == "c2":
        return c2_prompt(
            inst,
            recorded.factor,
            sources.perturbations(recorded.instance_id),
            template,
            form=recorded.form or "weighted",
        )
    raise RecordError(f"{recorded.where}: no rebuild rule for probe {probe!r}")


def check_prompts(data_dir: Path | str, template: str = DEFAULT_TEMPLATE) -> CheckReport:
    """Rebuild every recorded prompt under ``data_dir`` and compare byte for byte."""
    root = Path(data_dir)
    sources = _Sources(root)
    checks: list[PromptCheck] = []
    for recorded in iter_recorded_prompts(root):
        try:
            checks.append(PromptCheck(recorded, rebuild(recorded, sources, template)))
        except FacetlabError as exc:
            checks.append(PromptCheck(recorded, None, str(exc)))
    return CheckReport(template=template, checks=tuple(checks))
