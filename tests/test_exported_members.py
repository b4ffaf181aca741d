"""The public surface of every public package, pinned (as httpx pins ``httpx.__all__``).

A name leaves or joins a package's ``__all__`` only on purpose: this test says which.
Everything the package binds from its own modules is exported or private (``_name``),
so nothing is reachable by accident. ``facetlab.craft`` pins its own surface.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import types

import pytest

import facetlab

PUBLIC: dict[str, tuple[str, ...]] = {
    "facetlab": (
        "FacetlabError", "Instance", "TrialRecord", "__version__", "arun", "build_prompt",
        "data_dir", "fetch", "get_backend", "load_instance", "load_instances", "load_trials",
        "parse_reply", "read_records", "run",
    ),
    "facetlab.analysis": (
        "DEFAULT_DISSOCIATION", "DEFAULT_SPLIT_POINT", "DEFAULT_THRESHOLD", "CellSummary",
        "FisherResult", "McNemarResult", "WilsonInterval", "bimodality_fisher", "c2",
        "fisher_exact", "group_fisher", "instance_labels", "mcnemar_exact", "mode_of",
        "model_order", "neutralized_factors", "outcomes", "p1_faithful", "p1_p2", "p3",
        "resolve_instances", "select_trials", "summarize", "usable", "weighted_faithful",
        "wilson", "with_verdicts", "write_table", "wrong_outcome",
    ),
    "facetlab.backends": (
        "DEFAULT_DECLARATION", "Backend", "BackendClass", "Declaration", "ModelRequest",
        "ModelResponse", "ModelSpec", "RetryDecision", "SamplingParams", "Usage", "available_providers",
        "backend_class", "declaration_of", "endpoint_of", "generate", "get_backend",
        "model_declaration", "parse_model_string", "provider_declaration", "register_backend",
    ),
    "facetlab.client": (
        "Answer", "CallFailed", "CallHooks", "CostMeter", "Limits", "ModelClient", "Price",
        "ProviderLimiter", "Reservation", "ResponseCache", "RetryPolicy", "Stopped",
        "cache_key", "cost_usd", "price_for", "price_key", "price_table",
    ),
    "facetlab.datasets": (
        "BASE_URL", "BIBTEX", "CITATION", "COMMIT", "DOI", "ENV_DATA_DIR", "ENV_MIRROR",
        "LICENSE", "LICENSE_URL", "REGISTRY", "REPOSITORY", "VERSION", "DataInfo",
        "DataSource", "FetchReport", "ProgressCallback", "VerifyReport", "cache_dir",
        "data_dir", "data_source", "fetch", "info", "registry", "unregistered", "verify",
    ),
    "facetlab.instances": (
        "CUE_PHRASES", "DIRECTION_WORDS", "NEUTRALIZED", "SIGNAL_WORDS",
        "ComplianceRequirement", "ComplianceSet", "Factor", "Favours", "FileKind",
        "GroundTruth", "Instance", "Issue", "Perturbation", "PerturbationSet",
        "compliance_issues", "detect_kind", "favours", "find_perturbation_set",
        "instance_issues", "json_type", "key_issues", "label_of", "load_compliance_set", "load_instance",
        "load_instances", "load_perturbation_set", "parse_issues", "perturbation_issues",
        "read_json", "read_json_file",
    ),
    "facetlab.probes": (
        "DEFAULT_TEMPLATE", "PARSERS", "PROBES", "PROBE_NAMES", "RECONSTRUCTION_QUESTION",
        "SUM_TOLERANCE", "TEMPLATES", "WEIGHTED_PROBES", "ParseResult", "Probe", "ProbeName",
        "Template", "build_prompt", "c2_prompt", "compliance_prompt", "find_yes_no",
        "get_probe", "get_template", "outcome_prompt", "parse_first_line_answer",
        "parse_label_strict", "parse_label_v3", "parse_pilot_c2_reply",
        "parse_reconstruction_reply", "parse_reply", "parse_requirements",
        "parse_weights_strict", "parse_weights_v3", "parse_yes_no", "single_factor_prompt",
        "weighted_rank_prompt",
    ),
    "facetlab.records": (
        "COLUMNS", "RECORD_FORMAT", "SOURCES", "Parsed", "RecordWarning", "TrialRecord",
        "Usage", "load_trials", "prompt_sha256", "read_record", "read_records",
        "read_sweep_records", "write_record",
    ),
    "facetlab.report": (
        "SECTIONS", "Note", "ReportOutputs", "Section", "Study", "Table", "as_paths", "describe",
    ),
    "facetlab.runner": (
        "DEFAULT_MODEL", "Cell", "Estimate", "Limits", "Plan", "Prepared", "ProbeSuite",
        "RetryPolicy", "RunOptions", "RunStats", "Sweep", "SweepConfig", "SweepResult", "Trial",
        "arun", "default_model", "describe_plan", "estimate", "execute", "load_sweep_file",
        "plan_sweep", "prepare", "run",
    ),
    "facetlab.validity": (
        "COT_REASONERS", "CRAFT", "DEFAULT_REASONERS", "HINT_REASONERS", "MATRIX_PROBES", "OUTCOMES", "PROBES",
        "ValidityResult", "craft_truth", "key_cells", "load_study", "plot_validity_matrix",
        "run_craft_column", "run_validity_study", "study_instances", "truth_of_record",
        "validity_matrix", "write_outputs",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_package_exports_what_is_pinned(name: str) -> None:
    package = importlib.import_module(name)
    assert tuple(package.__all__) == PUBLIC[name]
    for member in package.__all__:
        assert getattr(package, member) is not None, f"{name}.{member}"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_what_a_package_binds_from_itself_is_exported_or_private(name: str) -> None:
    package = importlib.import_module(name)
    unexported = sorted(
        member
        for member, value in vars(package).items()
        if not member.startswith("_")
        and not isinstance(value, types.ModuleType)
        and str(getattr(value, "__module__", "")).startswith(name + ".")
        and member not in package.__all__
    )
    assert unexported == [], f"{name} binds {unexported}: export them or make them private"


def test_the_version_is_the_package_metadata() -> None:
    assert facetlab.__version__ == importlib.metadata.version("facetlab")
    assert "__version__" in dir(facetlab)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_no_export_hides_a_module_of_its_package(name: str) -> None:
    # ``facetlab.runner.execute`` the function would hide ``facetlab.runner.execute`` the
    # module from ``import`` and ``monkeypatch`` alike
    package = importlib.import_module(name)
    modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert sorted(modules & set(package.__all__)) == []
