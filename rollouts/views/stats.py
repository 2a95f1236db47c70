"""One step at a glance: its statistics page (counts, reward, lengths, histograms, the scatter,
the group table) and one group's samples side by side, with their JSON."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..conf import conf
from ..links import app_url, step_url, url_maker
from ..presentation.charts import histogram_bars, scatter
from ..presentation.formatting import format_bytes, format_number
from ..presentation.render import compile_mask
from ..presentation.sample import present_sample
from ..runs import get_catalog
from ..store import Catalog, Columns, NotFound, StepIndex, step_filename, step_name
from ..store.stats import group_rows, group_summary, group_table
from .decorators import api, page
from .header import header_context
from .responses import json_response

GROUP_MAX_SAMPLES = 32  # a group page shows at most this many samples side by side
GROUPS_LISTED = 500  # rows of the group table on a step's page
HISTOGRAMS = (("reward", "Reward"), ("response_length", "Response length"))


@page
def step_stats_page(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, step)
    filename = step_filename(step)
    index = catalog.open_step(bucket, filename)
    columns = catalog.columns(index)
    stats = catalog.stats(index)
    base = step_url(request, bucket, step)
    group_url = url_maker(request, "group", "group", bucket=bucket, step=step)
    groups = group_table(columns, index.invalid)
    sample_url = url_maker(request, "sample", "position", bucket=bucket, step=step)
    context.update(
        {
            "page": "stats",
            "stats": stats,
            "step_link": base,
            "json_url": app_url(request, "api-stats", bucket=bucket, filename=filename),
            "histograms": [
                histogram_bars(name, label, stats["histograms"][name], base)
                for name, label in HISTOGRAMS
            ],
            "scatter": scatter(columns, index.invalid, index.lines, sample_url),
            "groups": [{**g, "url": group_url(g["group"])} for g in groups[:GROUPS_LISTED]],
            "groups_total": len(groups),
            "invalid": index.invalid_lines(),
            "partial_tail_bytes": index.partial_tail_bytes,
            "size": format_bytes(index.identity.size),
        }
    )
    return TemplateResponse(request, "rollouts/stats.html", context)


def _group_of(
    catalog: Catalog, bucket: str, filename: str, group: int
) -> tuple[StepIndex, Columns, list[int]]:
    """The step's index and columns, and the positions of the group's readable samples."""
    index = catalog.open_step(bucket, filename)
    columns = catalog.columns(index)
    rows = group_rows(columns, index.invalid).get(group)
    if not rows:
        raise NotFound(f"step {step_name(filename)} has no group {group}")
    return index, columns, rows


@page
def group_page(request: HttpRequest, bucket: str, step: str, group: int) -> HttpResponse:
    """The samples of one group_index (one prompt, several answers) side by side."""
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, step)
    filename = step_filename(step)
    index, columns, rows = _group_of(catalog, bucket, filename, group)
    mask = compile_mask(conf.MASK_STR)
    sample_url = url_maker(request, "sample", "position", bucket=bucket, step=step)
    members, prompt = [], None
    for position in rows[:GROUP_MAX_SAMPLES]:
        sample = index.read(position)
        values = sample.decoded.values()
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
                "url": sample_url(position),
                "reward": shown.get("reward") or ", ".join(parts) or None,
                "status": values.get("status"),
                "response_length": shown.get("response_length"),
                "response": next((s for s in presented.texts if s.name == "response"), None),
                "warnings": sample.decoded.warnings,
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
            "json_url": app_url(
                request, "api-group", bucket=bucket, filename=filename, group=group
            ),
        }
    )
    return TemplateResponse(request, "rollouts/group.html", context)


@api("GET", "HEAD")
def api_group(request: HttpRequest, bucket: str, filename: str, group: int) -> HttpResponseBase:
    """A group's positions and rewards (the samples themselves: `.../sample/<position>`)."""
    index, columns, rows = _group_of(get_catalog(request), bucket, filename, group)

    def value(name: str, row: int) -> float | str | None:
        known = name in columns.numeric or name in columns.categorical
        return columns.value(name, row) if known else None

    return json_response(
        {
            "subdir": bucket,
            "filename": filename,
            **group_summary(columns, group, rows),
            "members": [
                {
                    "position": r,
                    "line": index.lines[r],
                    "reward": value("reward", r),
                    "status": value("status", r),
                    "response_length": value("response_length", r),
                }
                for r in rows
            ],
        }
    )
