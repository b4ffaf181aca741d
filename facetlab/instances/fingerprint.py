"""Fingerprints of instance content: what a trial record says it was built from.

A fingerprint is the sha256 of a document's content in canonical JSON (keys sorted,
no insignificant whitespace, absent and ``null`` fields alike), so re-indenting or
re-ordering a file keeps it, while any edit to a text, a direction or an answer
changes it. Records carry the fingerprints of the instance and (C2) the perturbation
entry a trial was built from; reports compare them with the files they are given.

>>> from facetlab.instances.schema import Instance
>>> doc = {"instance_id": "x", "doctrine": "d", "case_background": "b", "question": "q?",
...     "ground_truth": {"answer": "no", "rationale": "r"},
...     "factors": [{"factor_id": "f1", "text": "t", "directionality": "toward_yes"},
...                 {"factor_id": "f2", "text": "u", "directionality": "toward_no"}]}
>>> a = Instance.model_validate(doc)
>>> b = Instance.model_validate({**doc, "title": None})
>>> content_sha256(a) == content_sha256(b), len(content_sha256(a))
(True, 64)
>>> content_sha256(a) == content_sha256(a.with_factor_text("F1", "other"))
False
"""

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from facetlab.instances.schema import ComplianceSet, Instance, Perturbation

__all__ = ["compliance_of", "content_sha256", "perturbation_of", "source_file", "with_compliance"]


def content_sha256(document: BaseModel | Mapping[str, Any]) -> str:
    """sha256 hex digest of a document's content in canonical JSON (see the module doc)."""
    data = (
        document.model_dump(mode="json", exclude_none=True)
        if isinstance(document, BaseModel)
        else {k: v for k, v in document.items() if v is not None}
    )
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def perturbation_of(instance: object) -> Perturbation | None:
    """The C2 perturbation entry an instance was built with (:meth:`Perturbation.apply`)."""
    found = getattr(instance, "_perturbation", None)
    return found if isinstance(found, Perturbation) else None


def source_file(instance: Instance) -> Path | None:
    """The file an instance was loaded from (:func:`facetlab.instances.load_instances`)."""
    return instance._source_file


def with_compliance(instance: Any, compliance: Any) -> Any:
    """``instance`` carrying the C3 compliance set a prompt was built with (a copy; not
    content), so the record can fingerprint it; other objects are returned as they are."""
    if not isinstance(instance, Instance) or not isinstance(compliance, ComplianceSet):
        return instance
    copy = instance.model_copy()
    copy._compliance = compliance
    return copy


def compliance_of(instance: object) -> ComplianceSet | None:
    """The C3 compliance set an instance was built with (:func:`with_compliance`)."""
    found = getattr(instance, "_compliance", None)
    return found if isinstance(found, ComplianceSet) else None
