"""The study's design: which reasoners, probes and instances, run through which suite, written where."""

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from facetlab.errors import ConfigError
from facetlab.instances import Instance, load_instances
from facetlab.reasoners.simulated import parse_reasoner
from facetlab.runner.suite import FacetSuite

DEFAULT_REASONERS: tuple[str, ...] = (
    "wadd",
    "wadd+canonical",
    "lex",
    "lex+theater",
    "cue",
    "mixture?p_lex=0.3",
    "wadd?noise=5&format_noise=0.2",
)
"""Every decision rule and reporting style, plus a noisy honest reasoner."""

HINT_REASONERS: tuple[str, ...] = ("hint-silent", "hint-verbal", "hint-ignore", "hint-thinks")
"""WADD reasoners with each H1 hint behaviour; a study with any of them runs H1 for all."""


COT_REASONERS: tuple[str, ...] = ("wadd+cot-decorative", "wadd+cot-dependent", "wadd+cot-mixed")
"""WADD reasoners of each reasoning dependence; the study asks COT, then COTX, of each."""

PROBES: tuple[str, ...] = ("P1", "P2", "P3", "C2")


DEFAULT_OUT = Path("_build") / "interactive" / "probe_validity"
"""Where a study writes unless told: a build folder, so committed results are never appended to."""


def study_instances(
    instances_dir: Path | str | None = None, instance_ids: Iterable[str] | None = None
) -> list[Instance]:
    """The counterfactuals, their adversarial rewrites and their anchors (base instances).

    For FACET v3: ``facet-neg-cf-001..003``, the four ``-adv`` rewrites and the
    anchors ``facet-neg-0002..0004``. ``instance_ids`` restricts the set (ids
    must exist in the folder).

    >>> [i.instance_id for i in study_instances(instance_ids=["facet-neg-cf-002"])]  # doctest: +SKIP
    ['facet-neg-cf-002']
    """
    every = load_instances(instances_folder(instances_dir))
    if instance_ids is None:
        chosen = study_set(every)
    else:
        wanted = list(instance_ids)
        missing = [i for i in wanted if i not in every]
        if missing:
            raise ConfigError(
                f"instance id(s) {', '.join(missing)} not in {instances_dir or 'the FACET data'}"
            )
        chosen = [every[i] for i in wanted]
    if not chosen:
        raise ConfigError(
            f"{instances_dir or 'the FACET data'}: no counterfactual instances "
            "(the study needs instances with a neutralized factor)"
        )
    return chosen


def study_set(every: Mapping[str, Instance]) -> list[Instance]:
    """Every counterfactual (with its adversarial rewrites) and every anchor one names."""
    anchors = {i.base_instance_id for i in every.values() if i.base_instance_id}
    return [i for i in every.values() if i.is_counterfactual or i.instance_id in anchors]


class StudySuite(FacetSuite):
    """The FACET probes, restricted to the trials that have a verdict.

    P1 runs only where a factor is neutralized (on an anchor it has nothing to
    check); C2 runs only on anchors, as in the paper.
    """

    def applies_to(self, probe: str, instance: Any) -> bool:
        """The paper's rule for ``probe``, minus the trials without a verdict."""
        if probe == "p1" and getattr(instance, "neutralized_label", None) is None:
            return False
        if probe == "c2" and getattr(instance, "is_counterfactual", False):
            return False
        return super().applies_to(probe, instance)


def instances_folder(instances_dir: Path | str | None) -> Path | None:
    """An instances folder as a Path; None (or "") means the FACET v3 data."""
    return Path(instances_dir) if instances_dir else None


def reasoner_slug(reasoner: str) -> str:
    """A folder name for a reasoner spec: ``"mixture?p_lex=0.3"`` → ``"mixture_p_lex=0.3"``."""
    return re.sub(r"[^A-Za-z0-9+=.\-]+", "_", reasoner).strip("_")


def reasoner_spec(reasoner: str) -> str:
    """``reasoner`` without its ``simulated/`` prefix, checked (a clear ConfigError up front)."""
    spec = reasoner.removeprefix("simulated/")
    parse_reasoner(spec)
    return spec
