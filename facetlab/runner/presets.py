"""Presets: whole sweep designs by name. ``facet-v3`` is the FACET paper's design.

The ``facet-v3`` preset re-runs the paper's trials against the real providers:
its 8 model configurations (provider ids from :mod:`facetlab.models`), the
instances each probe used, and the replication the raw data shows per cell.

Replication, derived from the FACET v3 raw data layout (``results/``):

- **P1** (pilot ``C0.direct_probe_*``): one trial per (model, counterfactual
  cf-001/002/003). The pilot has duplicate files for a few cells (Opus and Sonnet
  on cf-003, Scout on cf-002); the paper counts one value per cell and they agree.
- **P2** (``weighted-probe/``, ``instance_id`` cf-001/002/003): one trial per
  (model, counterfactual); the six failed files (empty reply) were re-run and
  their reruns are the trials counted, so a fresh run needs one.
- **P3** (``weighted-probe/``, the four adversarial ids): every file is one trial,
  replications intentional — see :data:`P3_REPEATS` (108 trials in all).
- **C2** (``weighted-probe/c2/``): one trial per (model, anchor 0002/0003/0004,
  perturbed factor): 5 + 7 + 6 = 18 per model, 144 in all.

Sampling: the open-weight models ran on Bedrock at temperature 0; the closed
models ran through vendor CLIs at the provider default (no temperature control),
recorded here as ``temperature=None``. The system prompts of those CLIs were not
recorded and are not reproduced.

>>> p = get_preset("facet-v3")
>>> len(p.models), p.repeats("anthropic/claude-opus-4-6", "p3", "facet-neg-cf-001-adv", None)
(8, 6)
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from facetlab.backends.base import SamplingParams
from facetlab.errors import ConfigError
from facetlab.models import MODELS, ModelInfo, model_by_name

COUNTERFACTUALS = ("facet-neg-cf-001", "facet-neg-cf-002", "facet-neg-cf-003")
ADVERSARIAL = (
    "facet-neg-cf-001-adv",
    "facet-neg-cf-001-adv2",
    "facet-neg-cf-002-adv",
    "facet-neg-cf-003-adv",
)
C2_ANCHORS = ("facet-neg-0002", "facet-neg-0003", "facet-neg-0004")


def model_string(info: ModelInfo) -> str:
    """The facetlab model string of a paper model: ``provider/<first provider id>``."""
    return f"{info.provider}/{info.provider_ids[0]}"


# The paper's 8 model configurations, in paper order, from the one model table.
FACET_V3_MODELS: tuple[str, ...] = tuple(
    model_string(m) for m in sorted(MODELS, key=lambda m: m.order)
)

# P3 files per model on (cf-001-adv, cf-001-adv2, cf-002-adv, cf-003-adv), in the
# order of ADVERSARIAL: the weighted-probe files with that model and instance_id
# (checked against the mirror by the tests).
_P3_FILES: dict[str, tuple[int, int, int, int]] = {
    "Claude Sonnet 4.6": (6, 1, 6, 6),
    "Claude Opus 4.6": (6, 1, 6, 6),
    "GPT-5.4": (16, 6, 6, 6),
    "DeepSeek v3.2": (2, 1, 4, 2),
    "Mistral Large 3": (2, 1, 1, 2),
    "Llama 4 Maverick": (2, 1, 1, 2),
    "Llama 4 Scout": (2, 1, 1, 2),
    "Qwen3 Next 80B-A3B": (2, 1, 1, 5),
}

P3_REPEATS: dict[str, dict[str, int]] = {
    model_string(model_by_name(name)): dict(zip(ADVERSARIAL, counts, strict=True))
    for name, counts in _P3_FILES.items()
}
"""P3 replications per (model string, adversarial instance id): 108 trials in all."""


@dataclass(frozen=True)
class Preset:
    """A named sweep design."""

    name: str
    description: str
    models: tuple[str, ...]
    probes: tuple[str, ...]
    instance_ids: tuple[str, ...]
    template: str
    p3_repeats: Mapping[str, Mapping[str, int]]
    temperature_by_provider: Mapping[str, float | None]

    def instances(self, instances_dir: Path | str | None = None) -> list[Any]:
        """The preset's instances, from ``instances_dir`` or the FACET data."""
        from facetlab.instances import load_instances

        if instances_dir is None:
            return list(load_instances(list(self.instance_ids)).values())
        folder = Path(instances_dir)
        return list(load_instances([folder / f"{i}.json" for i in self.instance_ids]).values())

    def repeats(self, model: str, probe: str, instance_id: str, factor: str | None) -> int:
        """Trials per cell; 0 for cells the paper did not run."""
        if probe == "p1" or probe == "p2":
            return 1 if instance_id in COUNTERFACTUALS else 0
        if probe == "p3":
            return int(self.p3_repeats.get(model, {}).get(instance_id, 0))
        return 1 if probe == "c2" and instance_id in C2_ANCHORS and factor is not None else 0

    def params(self, max_tokens: int = 1024) -> dict[str, SamplingParams]:
        """Per-model sampling parameters (Bedrock models at temperature 0)."""
        return {
            m: SamplingParams(
                temperature=self.temperature_by_provider.get(m.partition("/")[0]),
                max_tokens=max_tokens,
            )
            for m in self.models
        }


FACET_V3 = Preset(
    name="facet-v3",
    description="The FACET paper's design: P1, P2, P3 and C2 on its 8 models.",
    models=FACET_V3_MODELS,
    probes=("p1", "p2", "p3", "c2"),
    instance_ids=(*C2_ANCHORS, *COUNTERFACTUALS, *ADVERSARIAL),
    template="facet-v3",
    p3_repeats=P3_REPEATS,
    temperature_by_provider={"bedrock": 0.0, "anthropic": None, "openai": None},
)

PRESETS: dict[str, Preset] = {FACET_V3.name: FACET_V3}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None
