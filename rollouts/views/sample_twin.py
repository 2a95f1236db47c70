"""The sample page's JSON twin (`api/view/...`): the page's context, as `sample_context` builds
it for both, read key by key into a `SampleTwin`. The line's own JSON (`sample`) is added after,
as its bytes (`responses.with_raw`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..store import Selection
from .twins import SampleTwin


def sample_twin(context: dict[str, Any]) -> SampleTwin:
    """The sample page's context (`samples.sample_context`) as its twin, but for `sample`."""
    query: Selection = context["query"]
    twin: SampleTwin = {
        "data_dir": context["data_dir"],
        "bucket": context["bucket"],
        "step": context["step"],
        "filename": context["filename"],
        "records": context["records"],
        "total": context["total"],
        "columns_ready": context["columns_ready"],
        "invalid": context["invalid"],
        "partial_tail_bytes": context["partial_tail_bytes"],
        # None before a sample is placed in the ordering (an empty or unmatched step)
        "position": context.get("position"),
        "rank": context.get("rank"),
        "line": context.get("line"),
        "warnings": context.get("warnings"),
        "neighbours": context.get("neighbours"),
        "error": context["error"],
        "error_line": context.get("error_line"),
        "empty": context.get("empty"),
        "tokens": context.get("tokens"),
        "prompt_id": context.get("prompt_id"),
        **query.as_json(),  # sort, order, filters, range
        "steps": [{"step": s["step"], "name": s["name"]} for s in context["steps"]],
        "buckets": [b["name"] for b in context["buckets"]],
        "choices": context["choices"],
        "urls": {
            "page": context.get("page_url"),
            "json": context.get("json_url"),
            "first": context.get("first_url"),
            "prev": context.get("prev_url"),
            "next": context.get("next_url"),
            "last": context.get("last_url"),
            "prev_flagged": context.get("prev_flagged_url"),
            "next_flagged": context.get("next_flagged_url"),
        },
    }
    presented = context["sample"]
    if presented is not None:
        twin["info"] = [asdict(row) for row in presented.info]
        twin["flags"] = context.get("flags")
        twin["identity"] = context["identity"]
        twin["verdict"] = presented.verdict.as_json() if presented.verdict else None
        twin["rendered"] = {
            s.name: asdict(s.rendered) for s in presented.texts if s.rendered is not None
        }
    return twin
