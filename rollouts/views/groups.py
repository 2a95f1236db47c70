"""One group's table (the group page and its JSON twin share it): the members read once, sorted
as the query string asks, the sample the user came from (`from`), and two members compared
word by word (`a`, `b`). Every link keeps the others' parameters, so it all works without JS."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from ..conf import conf
from ..presentation import (
    SORTS,
    compile_mask,
    member_row,
    present_sample,
    shared_label,
    sort_rows,
    summarize_rows,
    word_diff,
)
from ..store import BadRequest, Catalog, NotFound, StepIndex, group_rows, group_summary, step_name
from ..web import app_url, int_param, url_maker
from .twins import GroupTwin

GROUP_MAX_SAMPLES = 64  # members read and listed; a bigger group says how many it leaves out
_NO_POSITION = -1
_MAX_POSITION = 2**62


def open_group(
    catalog: Catalog, bucket: str, filename: str, group: int
) -> tuple[StepIndex, dict[str, Any], list[int]]:
    """The step's index, the group's summary from the columns, and its readable positions."""
    index = catalog.open_step(bucket, filename)
    columns = catalog.columns(index)
    rows = group_rows(columns, index.invalid).get(group)
    if not rows:
        raise NotFound(f"step {step_name(filename)} has no group {group}")
    return index, group_summary(columns, group, rows), rows


def _choice(request: HttpRequest, name: str, allowed: list[str], default: str) -> str:
    value = request.GET.get(name) or default
    if value not in allowed:
        raise BadRequest(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def group_table(
    request: HttpRequest, catalog: Catalog, bucket: str, step: str, filename: str, group: int
) -> tuple[GroupTwin, dict[int, dict[str, Any]]]:
    """The table as JSON-able data (the twin as it is), and per shown position the texts only
    the page draws."""
    index, summary, positions = open_group(catalog, bucket, filename, group)
    sort = _choice(request, "sort", list(SORTS), "position")
    first_order = SORTS[sort] if "sort" in request.GET else "asc"
    order = _choice(request, "order", ["asc", "desc"], first_order)
    came_from = int_param(request, "from", _NO_POSITION, 0, _MAX_POSITION)
    pair = [int_param(request, side, _NO_POSITION, 0, _MAX_POSITION) for side in ("a", "b")]
    shown = positions[:GROUP_MAX_SAMPLES]
    mask = compile_mask(conf.MASK_STR)
    sample_url = url_maker(request, "sample", "position", bucket=bucket, step=step)
    rows, texts = [], {}
    for position in shown:
        record = index.read(position)
        values = record.decoded.values()
        row = member_row(position, record.line, values)
        row["url"] = sample_url(position)
        row["warnings"] = record.decoded.warnings
        row["flags"] = catalog.flags_of(index, position) or []  # the columns are decoded
        rows.append(row)
        presented = present_sample(
            {k: values[k] for k in ("prompt", "response") if k in values}, mask
        )
        texts[position] = {
            "raw_response": values.get("response"),
            **{section.name: section for section in presented.texts},
        }
    for side, position in zip("ab", pair, strict=True):
        if position != _NO_POSITION and position not in texts:
            raise BadRequest(f"{side} must be a shown sample of group {group}, got {position}")
    state = {"sort": sort, "order": order, "from": came_from, "a": pair[0], "b": pair[1]}

    def link(**changes: Any) -> str:
        params = {**state, **changes}
        if params["sort"] == "position" and params["order"] == "asc":
            params.pop("sort"), params.pop("order")
        kept = {k: v for k, v in params.items() if v not in (None, _NO_POSITION)}
        return "?" + urlencode(kept) if kept else "?"

    partner = came_from if came_from in texts else shown[0]
    for row in rows:
        row["is_from"] = row["position"] == came_from
        other = row["position"] if row["position"] != partner else None
        row["compare_url"] = link(a=partner, b=other) if other is not None else None
    table: GroupTwin = {
        "subdir": bucket,
        "filename": filename,
        "group": summary["group"],
        "samples": summary["samples"],
        "n": summary["n"],
        "mean": summary["mean"],
        "std": summary["std"],
        "min": summary["min"],
        "max": summary["max"],
        "zero_signal": summary["zero_signal"],
        "success": summary["success"],
        "summary": summarize_rows(rows),
        "label": shared_label(rows),
        "sort": sort,
        "order": order,
        "from": came_from if came_from != _NO_POSITION else None,
        "from_in_group": came_from in texts,
        "shown": len(rows),
        "cut": len(positions) > len(shown),
        "positions": positions,
        "members": sort_rows(rows, sort, order),
        "columns": [
            {
                "key": key,
                "sorted": order if key == sort else None,
                "url": link(sort=key, order=_next_order(key, sort, order)),
            }
            for key in SORTS
        ],
        "compare": _compare(rows, texts, pair),
        "json_url": app_url(request, "api-group", bucket=bucket, filename=filename, group=group)
        + link().rstrip("?"),
    }
    return table, texts


def _next_order(key: str, sort: str, order: str) -> str:
    """A header link: the column's own first order, or the other one when it is sorted already."""
    if key != sort:
        return SORTS[key]
    return "asc" if order == "desc" else "desc"


def _compare(
    rows: list[dict[str, Any]], texts: dict[int, dict[str, Any]], pair: list[int]
) -> dict[str, Any] | None:
    if _NO_POSITION in pair:
        return None
    by_position = {row["position"]: row for row in rows}
    a, b = (texts[p]["raw_response"] for p in pair)
    return {
        "a": by_position[pair[0]],
        "b": by_position[pair[1]],
        "diff": word_diff(a if isinstance(a, str) else "", b if isinstance(b, str) else ""),
    }
