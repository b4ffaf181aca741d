"""Model strings checked before a sweep starts (dry runs included).

Offline backends (``simulated``, ``replay``) cost nothing to build, so they are
built up front: a misspelt reasoner or recorded model fails at once with a
did-you-mean, and a replay sweep whose trials have no recording is refused
before it records a column of failures. For paid providers an unknown model id
is not an error (new models appear every month) but gets a note with the closest
known id.

>>> did_you_mean("claude-sonet-4-6", ["claude-sonnet-4-6", "gpt-5.4"])
"; did you mean 'claude-sonnet-4-6'?"
"""

import difflib
import importlib
from collections.abc import Iterable, Mapping, Sequence

from facetlab.backends import parse_model_string, provider_declaration
from facetlab.backends.base import Backend
from facetlab.errors import ConfigError
from facetlab.runner.plan import Trial

SHOWN_MISSING = 5


def did_you_mean(name: str, candidates: Iterable[str], *, prefix: str = "") -> str:
    """``"; did you mean '<closest>'?"`` or ``""`` when nothing is close."""
    by_lower = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"; did you mean '{prefix}{by_lower[close[0]]}'?" if close else ""


def _candidates(provider: str) -> list[str]:
    """Names a provider's model ids are checked against: its own list, else the price table's."""
    listing = provider_declaration(provider).model_names
    if listing:
        module_name, _, attr = listing.partition(":")
        names = getattr(importlib.import_module(module_name), attr)
        return list(names() if callable(names) else names)
    from facetlab.client.pricing import price_table
    from facetlab.models import MODELS

    return sorted({i for m in MODELS for i in m.provider_ids} | set(price_table()))


def build_offline(models: Mapping[str, str]) -> dict[str, Backend]:
    """Backends of the offline model strings (identity -> backend); a did-you-mean on error.

    ``models`` maps each identity to the model string it was given as.
    """
    from facetlab.backends import get_backend  # looked up now: tests replace it

    built: dict[str, Backend] = {}
    for identity, original in models.items():
        spec = parse_model_string(identity)
        if not provider_declaration(spec.provider).offline:
            continue
        try:
            built[identity] = get_backend(original)
        except ConfigError as exc:
            head = spec.model.split("+", 1)[0]  # a combined reasoner: the first part
            hint = did_you_mean(head, _candidates(spec.provider), prefix=f"{spec.provider}/")
            raise ConfigError(f"{exc}{hint}") from None
    return built


def check_replay_coverage(trials: Iterable[Trial], backends: Mapping[str, Backend]) -> None:
    """A ConfigError when a replay model has no recording for some of its trials."""
    from facetlab.reasoners.replay import ReplayBackend

    replayed = {m: b for m, b in backends.items() if isinstance(b, ReplayBackend)}
    if not replayed:
        return
    missing_of: dict[str, list[Trial]] = {}
    for t in trials:  # one pass: a plan builds its trials as it is iterated
        replay = replayed.get(t.model)
        if replay is not None and len(replay.recordings(t.prompt)) <= t.repeat:
            missing_of.setdefault(t.model, []).append(t)
    for model, missing in missing_of.items():
        shown = ", ".join(
            f"{t.probe.upper()} {t.instance_id} r{t.repeat}" for t in missing[:SHOWN_MISSING]
        )
        more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
        raise ConfigError(
            f"{model}: no recording for {len(missing)} of the sweep's trials ({shown}{more}); "
            "replay answers only what FACET v3 recorded: run the recorded instances and "
            "probes (template facet-v3, repeats as recorded), or use simulated/... instead"
        )


def unknown_model_notes(models: Sequence[str], *, local: bool) -> list[str]:
    """Notes for paid-provider model ids facetlab does not know (with the closest known id).

    ``local`` (a ``--base-url`` is set): any id may exist there, so no notes.
    """
    notes: list[str] = []
    for model in models:
        spec = parse_model_string(model)
        # free: offline or local, where any id may exist
        if local or "base_url" in spec.options or provider_declaration(spec.provider).free:
            continue
        known = _candidates(spec.provider)
        bare = spec.model
        for prefix in ("us.", "eu.", "apac.", "global."):
            bare = bare.removeprefix(prefix)
        if spec.model in known or bare in known:
            continue
        hint = did_you_mean(spec.model, known, prefix=f"{spec.provider}/")
        notes.append(f"note: {model} is not a model facetlab knows (no price){hint}")
    return notes
