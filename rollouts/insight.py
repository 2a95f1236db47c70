"""Step insight and training trends: the statistics page of a step, a group's samples side by
side, the trends page of a bucket, and the JSON that keeps them live.

Charts of one step are SVG drawn here (they work without JavaScript, and every bar and point
is a link); the trends page draws its curves in the browser from `api/jsonl/<bucket>/trends`,
because hovering, smoothing and live updates need a script anyway.
"""

from __future__ import annotations

import math
import zlib
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from .catalogs import get_catalog
from .conf import conf
from .context import app_url, sample_url, step_name, step_url, step_url_maker, steps_context
from .http import api_view, int_param, json_response
from .pages import _page
from .presenter import format_bytes, format_number, present_sample
from .render import compile_mask
from .store import NotFound, StepIndex, ValueRange
from .store.columns import Columns
from .store.history import METRICS, Point, cards, convergence
from .store.stats import TRUNCATED, group_rows, group_summary, group_table

CHART_WIDTH, CHART_HEIGHT = 600, 160  # SVG user units; the chart scales to its box
SCATTER_MAX_POINTS = 2000  # beyond this, every k-th sample is drawn (and the page says so)
GROUP_MAX_SAMPLES = 32  # a group page shows at most this many samples side by side
GROUPS_LISTED = 500  # rows of the group table on a step's page
POLL_STEPS_MAX = 1000  # new steps returned by one poll (the rest come with the next)


# -- one step --------------------------------------------------------------------------------
@_page
def step_stats_page(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = steps_context(request, catalog, bucket, step)
    index = catalog.open_step(bucket, f"{step}.jsonl")
    columns = catalog.columns(index)
    stats = catalog.stats(index)
    base = step_url(request, bucket, step)
    groups = group_table(columns, index.invalid)
    context.update(
        {
            "page": "stats",
            "stats": stats,
            "step_link": base,
            "json_url": app_url(request, "api-stats", subdir=bucket, filename=f"{step}.jsonl"),
            "trends_url": app_url(request, "trends", bucket=bucket),
            "histograms": [
                _histogram(name, label, stats["histograms"][name], base)
                for name, label in (("reward", "Reward"), ("response_length", "Response length"))
            ],
            "scatter": _scatter(request, bucket, step, columns, index),
            "groups": groups[:GROUPS_LISTED],
            "groups_total": len(groups),
            "group_url": app_url(request, "group", bucket=bucket, step=step, group=0)[:-2],
            "invalid": index.invalid_lines(),
            "partial_tail_bytes": index.partial_tail_bytes,
            "size": format_bytes(index.identity.size),
        }
    )
    return TemplateResponse(request, "rollouts/stats.html", context)


def _histogram(name: str, label: str, histogram: dict, step_link: str) -> dict[str, Any]:
    """Bars as SVG geometry, each with the link that filters the step's samples to its bin."""
    counts = histogram["counts"]
    if histogram["kind"] == "values":  # one bar per value: the range [v, v]
        edges = histogram["values"]
        ranges = [ValueRange(name, v, v, closed=True) for v in edges]
    else:
        edges = histogram["edges"]
        last = len(counts) - 1
        ranges = [ValueRange(name, edges[i], edges[i + 1], i == last) for i in range(len(counts))]
    bars = []
    tallest = max(counts, default=0) or 1
    width = CHART_WIDTH / max(len(counts), 1)
    for i, (count, value_range) in enumerate(zip(counts, ranges, strict=True)):
        height = CHART_HEIGHT * count / tallest
        bars.append(
            {
                "x": round(i * width + 0.5, 2),
                "y": round(CHART_HEIGHT - height, 2),
                "width": round(max(width - 1, 0.5), 2),
                "height": round(height, 2),
                "count": count,
                "label": _range_label(value_range),
                "range": str(value_range),
                "url": step_link + "?" + urlencode({"range": str(value_range)}),
            }
        )
    return {
        "name": name,
        "label": label,
        "bars": bars,
        "discrete": histogram["kind"] == "values",
        "low": format_number(edges[0]) if edges else None,
        "high": format_number(edges[-1]) if edges else None,
    }


def _range_label(value_range: ValueRange) -> str:
    low, high = format_number(value_range.low), format_number(value_range.high)
    if value_range.low == value_range.high:
        return low
    return f"[{low}, {high}{']' if value_range.closed else ')'}"


def _scatter(
    request: HttpRequest, bucket: str, step: str, columns: Columns, index: StepIndex
) -> dict[str, Any] | None:
    """Reward against response length, one link per sample; truncated samples marked."""
    reward, length = columns.numeric.get("reward"), columns.numeric.get("response_length")
    if reward is None or length is None:
        return None
    rows = [
        r
        for r in range(columns.rows)
        if r not in index.invalid and math.isfinite(reward[r]) and math.isfinite(length[r])
    ]
    if not rows:
        return None
    stride = math.ceil(len(rows) / SCATTER_MAX_POINTS)
    shown = rows[::stride]
    x_low, x_high = min(length[r] for r in rows), max(length[r] for r in rows)
    y_low, y_high = min(reward[r] for r in rows), max(reward[r] for r in rows)
    # Binary (or few-valued) rewards would stack every sample on a few lines: spread each
    # line a little, the same way on every load, and say so on the page.
    jitter = len({reward[r] for r in rows}) <= 10
    status = columns.categorical.get("status")
    truncated_code = _code_of(columns, "status", TRUNCATED)
    template = sample_url(request, bucket, step, 0)[:-2]
    points = []
    for r in shown:
        x = _scale(length[r], x_low, x_high, CHART_WIDTH)
        y = CHART_HEIGHT - _scale(reward[r], y_low, y_high, CHART_HEIGHT)
        if jitter:
            y += (zlib.crc32(str(r).encode()) % 1000 / 1000 - 0.5) * 12
        is_truncated = status is not None and status[r] == truncated_code
        points.append(
            {
                "x": round(x, 2),
                "y": round(min(max(y, 2), CHART_HEIGHT - 2), 2),
                "position": r,
                "line": index.lines[r],
                "reward": format_number(reward[r]),
                "length": format_number(length[r]),
                "truncated": is_truncated,
                "url": f"{template}{r}/",
            }
        )
    return {
        "points": points,
        "total": len(rows),
        "stride": stride,
        "jitter": jitter,
        "x_low": format_number(x_low),
        "x_high": format_number(x_high),
        "y_low": format_number(y_low),
        "y_high": format_number(y_high),
        "truncated": sum(p["truncated"] for p in points),
    }


def _scale(value: float, low: float, high: float, size: float) -> float:
    margin = 4
    if high == low:
        return size / 2
    return margin + (value - low) / (high - low) * (size - 2 * margin)


def _code_of(columns: Columns, name: str, value: str) -> int | None:
    names = columns.categories.get(name, [])
    return names.index(value) if value in names else None


@_page
def group_page(request: HttpRequest, bucket: str, step: str, group: int) -> HttpResponse:
    """The samples of one group_index (one prompt, several answers) side by side."""
    catalog = get_catalog(request)
    context = steps_context(request, catalog, bucket, step)
    index = catalog.open_step(bucket, f"{step}.jsonl")
    columns = catalog.columns(index)
    rows = group_rows(columns, index.invalid).get(group)
    if not rows:
        raise NotFound(f"step {step} has no group {group}")
    mask = compile_mask(conf.MASK_STR)
    members, prompt = [], None
    for position in rows[:GROUP_MAX_SAMPLES]:
        sample = index.read(position)
        decoded = sample.decoded
        values = decoded.values()
        presented = present_sample(values, mask)
        shown = {row.name: row.display for row in presented.info}  # as the Sample Info card
        parts = [
            f"{name.removeprefix('reward.')} {display}"
            for name, display in shown.items()
            if name.startswith("reward.")  # an object reward, by component
        ]
        if prompt is None:
            prompt = next((s for s in presented.texts if s.name == "prompt"), None)
        members.append(
            {
                "position": position,
                "line": sample.line,
                "url": sample_url(request, bucket, step, position),
                "reward": shown.get("reward") or ", ".join(parts) or None,
                "status": values.get("status"),
                "response_length": shown.get("response_length"),
                "response": next((s for s in presented.texts if s.name == "response"), None),
            }
        )
    summary = group_summary(columns, group, rows)
    context.update(
        {
            "page": "group",
            "group": group,
            "members": members,
            "samples": len(rows),
            "cut": len(rows) > GROUP_MAX_SAMPLES,
            "prompt_section": prompt,
            "zero_signal": summary["zero_signal"],
            "mean_reward": format_number(summary["mean"]) if summary["n"] else None,
            "step_link": step_url(request, bucket, step),
            "stats_url": app_url(request, "step-stats", bucket=bucket, step=step),
            "json_url": app_url(
                request, "api-group", subdir=bucket, filename=f"{step}.jsonl", group=group
            ),
        }
    )
    return TemplateResponse(request, "rollouts/group.html", context)


@api_view("GET", "HEAD")
def api_group(request: HttpRequest, subdir: str, filename: str, group: int) -> HttpResponse:
    """A group's positions and rewards (the samples themselves: `.../sample/<position>`)."""
    catalog = get_catalog(request)
    index = catalog.open_step(subdir, filename)
    columns = catalog.columns(index)
    rows = group_rows(columns, index.invalid).get(group)
    if not rows:
        raise NotFound(f"{filename} has no group {group}")
    return json_response(
        {
            "subdir": subdir,
            "filename": filename,
            **group_summary(columns, group, rows),
            "members": [
                {
                    "position": r,
                    "line": index.lines[r],
                    "reward": columns.value("reward", r) if "reward" in columns.numeric else None,
                    "status": columns.value("status", r)
                    if "status" in columns.categorical
                    else None,
                    "response_length": columns.value("response_length", r)
                    if "response_length" in columns.numeric
                    else None,
                }
                for r in rows
            ],
        }
    )


# -- across steps ----------------------------------------------------------------------------
@_page
def trends_page(request: HttpRequest, bucket: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = steps_context(request, catalog, bucket, None)
    context.update(
        {
            "page": "trends",
            "trends_json_url": app_url(request, "api-trends", subdir=bucket),
            "json_url": app_url(request, "api-trends", subdir=bucket),
            "poll_url": app_url(request, "api-poll", subdir=bucket),
        }
    )
    return TemplateResponse(request, "rollouts/trends.html", context)


@api_view("GET", "HEAD")
def api_trends(request: HttpRequest, subdir: str) -> HttpResponse:
    """Per-step metrics of a bucket, the metric cards and the convergence reading.

    Answers at once with what is indexed so far (`indexed` of `total`); `?after=N` returns only
    the points of steps after N (the cards and the reading always cover every step).
    """
    after = int_param(request, "after", -1, -1, 2**63)
    snapshot = get_catalog(request).history(subdir).snapshot()
    points = snapshot.points
    keys: dict[str, None] = {}
    for point in points:
        keys.update(dict.fromkeys(point.metrics))
    statuses = [key for key in keys if key.startswith("status.")]
    return json_response(
        {
            "subdir": subdir,
            "total": snapshot.total,
            "indexed": snapshot.total - snapshot.pending,
            "done": snapshot.done,
            "failed": [{"name": name, "error": error} for name, error in snapshot.failed.items()],
            "after": after,
            "step_url": step_url_maker(request, subdir)("{step}"),  # a step's name fills it
            "series": _series(keys),
            "points": [_point_json(p, statuses) for p in points if p.step > after],
            "cards": cards(points),
            "reading": convergence(points),
            "cursor": _cursor(points),
        }
    )


def _point_json(point: Point, statuses: list[str]) -> dict[str, Any]:
    """A point; a status the bucket has but this step lacks is a 0 % share, not a gap."""
    metrics = point.metrics
    if metrics.get("samples"):
        metrics = {**dict.fromkeys(statuses, 0.0), **metrics}
    return {
        "step": point.step,
        "name": step_name(point.filename),
        "size_bytes": point.size_bytes,
        "metrics": metrics,
    }


def _series(keys: dict[str, None]) -> list[dict[str, Any]]:
    """The curves these steps have, labelled: fixed metrics, then status, dataset, components."""
    fixed = [
        {"key": m.key, "label": m.label, "direction": m.direction, "kind": "metric"}
        for m in METRICS
        if m.key in keys
    ]
    prefixed = []
    for prefix, kind, label in (
        ("status.", "status", "Share {}"),
        ("dataset.", "dataset", "Accuracy {}"),
        ("reward.", "component", "Reward component {}"),
    ):
        for key in keys:
            if key.startswith(prefix):
                name = key.removeprefix(prefix)
                prefixed.append(
                    {"key": key, "label": label.format(name), "direction": 0, "kind": kind}
                )
    return fixed + prefixed


def _cursor(points: list[Point]) -> dict[str, int] | None:
    if not points:
        return None
    return {"after": points[-1].step, "size": points[-1].size_bytes}


@api_view("GET", "HEAD")
def api_poll(request: HttpRequest, subdir: str) -> HttpResponse:
    """What changed in a bucket since the client's cursor: cheap when nothing did.

    `after=N&size=S`: the newest step the client knows and its size. Returned: the steps after
    N, and step N again if its size changed. `watch=NAME&watch_size=S`: the step a page shows;
    when its size changed, its current counts (the file is indexed incrementally).
    """
    after = int_param(request, "after", -1, -1, 2**63)
    size = int_param(request, "size", -1, -1, 2**63)
    catalog = get_catalog(request)
    steps = catalog.steps(subdir)
    url_of = step_url_maker(request, subdir)
    changed = [s for s in steps if s.step > after or (s.step == after and s.size_bytes != size)]
    body: dict[str, Any] = {
        "subdir": subdir,
        "total": len(steps),
        "changed": bool(changed),
        "steps": [
            {
                "step": s.step,
                "name": step_name(s.filename),
                "size_bytes": s.size_bytes,
                "size": format_bytes(s.size_bytes),
                "url": url_of(step_name(s.filename)),
            }
            for s in changed[:POLL_STEPS_MAX]
        ],
        "cursor": {"after": steps[-1].step, "size": steps[-1].size_bytes} if steps else None,
        "watched": None,
    }
    watch = request.GET.get("watch")
    if watch:
        watched = next((s for s in steps if step_name(s.filename) == watch), None)
        if watched is None:  # deleted (or renamed) under the page: a change, not an error
            body["changed"] = True
            body["watched"] = {"name": watch, "deleted": True}
        elif watched.size_bytes != int_param(request, "watch_size", -1, -1, 2**63):
            index = catalog.open_step(subdir, watched.filename)
            body["changed"] = True
            body["watched"] = {
                "name": watch,
                "size_bytes": index.identity.size,
                "records": len(index),
                "partial_tail_bytes": index.partial_tail_bytes,
            }
    return json_response(body)


__all__ = [
    "api_group",
    "api_poll",
    "api_trends",
    "group_page",
    "step_stats_page",
    "trends_page",
]
