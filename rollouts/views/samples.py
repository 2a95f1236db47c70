"""The sample pages of a step and their JSON twins, built from one context.

A page's whole state is in its URL: bucket and step in the path, the sample as its line
position (stable while the file grows, unlike its rank in a sorted list), and the selection
(sort, order, filters, range) in the query string.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect

from ..conf import conf
from ..presentation import compile_mask, present_sample, reward_scale, sample_identity
from ..store import (
    CATEGORICAL_KEYS,
    BadRequest,
    Catalog,
    NotFound,
    Selection,
    StepIndex,
    UnreadableLine,
    line_as_json,
    rank_of,
    step_filename,
)
from ..web import (
    JSON_TYPE,
    app_url,
    get_catalog,
    json_response,
    query_suffix,
    sample_url,
    selection_of,
    step_url,
    with_raw,
)
from .decorators import Redirect, api, page, render_sample_page
from .header import header_context
from .sample_extras import sample_extras
from .sample_flags import sample_flags
from .sample_twin import sample_twin
from .twins import Choices

# Steps up to this size get their columns before the first page (well under 0.1 s), so small
# steps never show a provisional ordering; bigger ones show the first sample at once instead.
INLINE_COLUMNS_BYTES = 32 * 1024 * 1024


def ordering_of(catalog: Catalog, index: StepIndex, selection: Selection) -> Sequence[int]:
    """Positions in the page's order. A big step in file order opens at once, without waiting
    for its columns (decoded in the background meanwhile)."""
    if selection.is_file_order and index.identity.size > INLINE_COLUMNS_BYTES:
        catalog.prepare_columns(index)
        return catalog.ordering(index, selection, wait=False)
    return catalog.ordering(index, selection)


def sample_context(
    request: HttpRequest, bucket: str, step: str, position: int | None, *, twin: bool = False
) -> tuple[dict[str, Any], int]:
    """Everything the sample page (or, with `twin`, its JSON twin) shows, and the HTTP status.

    Raises `Redirect` to the step's first matching sample when the URL names a sample that
    the selection leaves out.
    """
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, step)
    selection = selection_of(request)
    filename = step_filename(step)
    # A page needs its sample and the next one: a big step opens before the scan reaches its
    # end (the JSON twin always counts every record).
    index = catalog.open_step(bucket, filename, None if twin else (position or 0) + 1)
    ordering = ordering_of(catalog, index, selection)
    step_link = step_url(request, bucket, step)
    suffix = query_suffix(selection)
    context.update(
        {
            "query": selection,
            "filename": filename,
            "records": len(index),
            "total": len(ordering),
            "counting": not index.complete,  # "of 1,024+": the rest of the file is being scanned
            "columns_ready": index.columns_ready,
            "invalid": index.invalid_lines(),
            "partial_tail_bytes": index.partial_tail_bytes,
            "step_url": step_link + suffix,
            "form_url": step_link,
            "json_url": app_url(request, "api-view-step", bucket=bucket, step=step) + suffix,
            "sample": None,
            "error": None,
        }
    )
    if not index.complete:  # the live poll reports the step "grown" until it is counted
        context["step_size_bytes"] = index.committed
    if index.columns_ready:  # once per version of the file (Catalog.stats keeps it)
        context["summary"] = catalog.stats(index)
    if selection.range is not None:
        context["clear_range_url"] = step_link + query_suffix(selection, range="")
    if selection.flag is not None:
        context["clear_flag_url"] = step_link + query_suffix(selection, flag="")
    if not ordering:
        if selection.filters or selection.range:
            conditions = ", ".join(selection.conditions())
            context["error"] = f"No samples in this step match {conditions}"
        elif len(index) == 0:  # news, not an error: a live run has just created the file
            context["empty"] = f"Step {step} has no samples yet."
        else:
            context["error"] = f"No line of step {step} could be read."
        context["choices"] = choices_of(index, None, selection)
        return context, HTTPStatus.OK

    if position is None:
        position = ordering[0]
    rank = rank_of(ordering, position)
    if rank is None:
        if position >= len(index) or position < 0:
            raise NotFound(f"step {step} has no sample at position {position}")
        if position in index.invalid:  # a link to it, made before the line was known bad
            return _unreadable(
                context, index, selection, index.lines[position], index.invalid[position]
            )
        first = "api-view-step" if twin else "step"
        raise Redirect(app_url(request, first, bucket=bucket, step=step) + suffix)

    def url_at(r: int) -> str:
        return sample_url(request, bucket, step, ordering[r]) + suffix

    last = len(ordering) - 1
    here = sample_url(request, bucket, step, position)
    context.update(
        {
            "position": position,
            "rank": rank + 1,
            "page_url": url_at(rank),
            "json_url": app_url(
                request, "api-view-sample", bucket=bucket, step=step, position=position
            )
            + suffix,
            "form_action": here,
            "clear_range_url": here + query_suffix(selection, range=""),
            "clear_flag_url": here + query_suffix(selection, flag=""),
            "first_url": url_at(0),
            "last_url": url_at(last),
            "prev_url": url_at(rank - 1) if rank > 0 else None,
            "next_url": url_at(rank + 1) if rank < last else None,
            "neighbours": {
                "first": ordering[0],
                "prev": ordering[rank - 1] if rank > 0 else None,
                "next": ordering[rank + 1] if rank < last else None,
                "last": ordering[last],
            },
        }
    )
    try:
        record = index.read(position)
    except UnreadableLine as exc:
        return _unreadable(context, index, selection, exc.line, exc.reason)
    decoded = record.decoded
    values = decoded.values()
    context["line"] = record.line
    context["warnings"] = decoded.warnings
    scale = reward_scale(context.get("summary"))
    context["sample"] = present_sample(values, compile_mask(conf.MASK_STR), scale=scale)
    context["identity"] = sample_identity(
        values,
        rank=rank + 1,
        total=len(ordering),
        order=", ".join(
            [selection.sort_label if selection.sort else "file order", *selection.conditions()]
        ),
        line=record.line,
        file=f"{bucket}/{filename}",
        position=position,
    )
    context["sample_json"] = line_as_json(decoded, record.data)
    group = values.get("group_index")
    if isinstance(group, int) and not isinstance(group, bool) and group >= 0:
        context["group_index"] = group
        group_url = app_url(request, "group", bucket=bucket, step=step, group=group)
        context["group_url"] = f"{group_url}?from={position}"  # the group page marks this one
    context["choices"] = choices_of(index, values, selection)
    flagged = sample_flags(catalog, index, ordering, rank, selection)
    context["flags"] = flagged["flags"]
    for side in ("prev", "next"):
        at = flagged[f"{side}_flagged"]
        context[f"{side}_flagged_url"] = (
            sample_url(request, bucket, step, at) + suffix if at is not None else None
        )
    context.update(sample_extras(request, bucket, step, position, selection, values))
    return context, HTTPStatus.OK


def _unreadable(
    context: dict[str, Any], index: StepIndex, selection: Selection, line: int, reason: str
) -> tuple[dict[str, Any], int]:
    context["error"] = f"Line {line} of step {context['step']} could not be read: {reason}"
    context["error_line"] = line
    context["choices"] = choices_of(index, None, selection)
    return context, HTTPStatus.UNPROCESSABLE_ENTITY


def choices_of(index: StepIndex, sample: dict[str, Any] | None, selection: Selection) -> Choices:
    """Sort columns and filter values for the controls.

    Before the column pass has finished, the shown sample's own numeric fields stand in, so the
    controls are usable on a step that is still being indexed.
    """
    columns = index.columns if index.columns_ready else None
    if columns is not None:
        sorts = sorted(columns.numeric)
        values = {name: list(columns.categories.get(name, [])) for name in CATEGORICAL_KEYS}
    else:
        sample = sample or {}
        numbers = {k: v for k, v in sample.items() if _is_number(v)}
        reward = sample.get("reward")
        if isinstance(reward, dict):  # an object reward is sorted by its components
            numbers.update({f"reward.{k}": v for k, v in reward.items() if _is_number(v)})
        sorts = sorted(numbers)
        values = {
            name: [sample[name]] if isinstance(sample.get(name), str) else []
            for name in CATEGORICAL_KEYS
        }
    if selection.sort and selection.sort not in sorts:
        sorts.append(selection.sort)
    for name, wanted in selection.filters:
        if wanted not in values[name]:
            values[name].append(wanted)
    return {
        "sorts": sorts,
        "statuses": sorted(values["status"]),
        "datasets": sorted(values["dataset"]),
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- pages -------------------------------------------------------------------------------------
@page
def step_page(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    wanted = request.GET.get("i")
    if wanted:
        return _jump(request, bucket, step, wanted)
    context, status = sample_context(request, bucket, step, None)
    return render_sample_page(request, context, status)


def _jump(request: HttpRequest, bucket: str, step: str, wanted: str) -> HttpResponse:
    """`?i=K`: the K-th sample (1-based) of the current ordering, as its own URL."""
    catalog = get_catalog(request)
    selection = selection_of(request)
    index = catalog.open_step(bucket, step_filename(step))
    ordering = ordering_of(catalog, index, selection)
    text = wanted.strip()
    # ASCII digits only (int() also takes other scripts and "1_000"); 5,000 digits raise.
    if not (text.removeprefix("-").isdigit() and text.isascii() and len(text) <= 18):
        raise BadRequest(f"sample number must be an integer, got {wanted[:40]!r}")
    rank = int(text)
    if not ordering:
        raise NotFound(f"step {step} has no samples to jump to")
    rank = min(max(rank, 1), len(ordering))  # typing 9999 means "the last one"
    url = sample_url(request, bucket, step, ordering[rank - 1])
    return HttpResponseRedirect(url + query_suffix(selection))


@page
def sample_page(request: HttpRequest, bucket: str, step: str, position: int) -> HttpResponse:
    context, status = sample_context(request, bucket, step, position)
    return render_sample_page(request, context, status)


# -- JSON twins --------------------------------------------------------------------------------
def _twin(request: HttpRequest, bucket: str, step: str, position: int | None) -> HttpResponse:
    context, status = sample_context(request, bucket, step, position, twin=True)
    data = sample_twin(context)
    if context["sample"] is None:
        return json_response(data, status)
    body = with_raw(data, "sample", context["sample_json"])
    return HttpResponse(body, status=status, content_type=JSON_TYPE)


@api("GET", "HEAD")
def api_view_step(request: HttpRequest, bucket: str, step: str) -> HttpResponseBase:
    return _twin(request, bucket, step, None)


@api("GET", "HEAD")
def api_view_sample(
    request: HttpRequest, bucket: str, step: str, position: int
) -> HttpResponseBase:
    return _twin(request, bucket, step, position)
