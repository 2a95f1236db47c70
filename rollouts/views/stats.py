"""One step at a glance: its statistics page (counts, reward, lengths, histograms, the scatter,
the group table) and one group's member table, with their JSON."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..presentation import WORDS_COMPARED, format_bytes, histogram_bars, scatter
from ..store import (
    EVERYTHING,
    FLAGS,
    OUTLIER_FENCE,
    Columns,
    StepIndex,
    clipped_histograms,
    flag_rates,
    step_filename,
    step_name,
)
from ..store import group_table as step_group_table
from ..web import app_url, get_catalog, json_response, query_suffix, step_url, url_maker
from .decorators import api, page
from .groups import group_table
from .header import header_context

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
    groups = step_group_table(columns, index.invalid)
    sample_url = url_maker(request, "sample", "position", bucket=bucket, step=step)
    # The histograms leave out the far outliers unless asked for the full range (?histograms=full).
    full = request.GET.get("histograms") == "full"
    drawn = stats["histograms"] if full else clipped_histograms(columns, index.invalid)
    context.update(
        {
            "page": "stats",
            "stats": stats,
            "step_link": base,
            "json_url": app_url(request, "api-stats", bucket=bucket, filename=filename),
            "histograms": [
                histogram_bars(name, label, drawn[name], base, _whole(columns, name, index))
                for name, label in HISTOGRAMS
            ],
            "histograms_full": full,
            "stats_path": request.path,
            "flags": flag_rows(request, bucket, step, stats),
            "outlier_fence": f"{OUTLIER_FENCE:g}",
            "scatter": scatter(columns, index.invalid, index.lines, sample_url),
            "groups": [{**g, "url": group_url(g["group"])} for g in groups[:GROUPS_LISTED]],
            "groups_total": len(groups),
            "invalid": index.invalid_lines(),
            "partial_tail_bytes": index.partial_tail_bytes,
            "size": format_bytes(index.identity.size),
        }
    )
    return TemplateResponse(request, "rollouts/stats.html", context)


def flag_rows(request: HttpRequest, bucket: str, step: str, stats: dict) -> list[dict]:
    """Each flag's count and share of the step's readable samples, with the step's table
    filtered by it (`table/?flag=name`)."""
    table = app_url(request, "step-table", bucket=bucket, step=step)
    counts = stats["flags"]["counts"]
    rates = flag_rates(stats)
    return [
        {
            "name": name,
            "count": int(counts.get(name, 0)),
            "share": rates[name],
            "url": table + query_suffix(EVERYTHING, flag=name),
        }
        for name in FLAGS
    ]


def _whole(columns: Columns, name: str, index: StepIndex) -> bool:
    """Whether a column holds whole numbers only (token counts) (bins read "0-204")."""
    column = columns.numeric.get(name)
    if column is None:
        return False
    invalid = index.invalid
    return all(
        not math.isfinite(v) or v.is_integer() for row, v in enumerate(column) if row not in invalid
    )


@page
def group_page(request: HttpRequest, bucket: str, step: str, group: int) -> HttpResponse:
    """One group_index (one prompt, several answers) as a table of its members."""
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, step)
    table, texts = group_table(request, catalog, bucket, step, step_filename(step), group)
    for row in table["members"]:
        row["response_section"] = texts[row["position"]].get("response")
    compare = table["compare"]
    sides = (
        [{"name": name, "member": compare[name], "runs": compare["diff"][name]} for name in "ab"]
        if compare
        else []
    )
    first = table["members"][0]["position"] if table["members"] else None
    context.update(
        {
            "page": "group",
            "group": group,
            "table": table,
            "prompt_section": texts[first].get("prompt") if first is not None else None,
            "step_link": step_url(request, bucket, step),
            "json_url": table["json_url"],
            "compare_sides": sides,
            "diff_words": WORDS_COMPARED,
        }
    )
    return TemplateResponse(request, "rollouts/group.html", context)


@api("GET", "HEAD")
def api_group(request: HttpRequest, bucket: str, filename: str, group: int) -> HttpResponseBase:
    """The group page's table: summary, label, members sorted as asked, the comparison."""
    step = step_name(filename)
    table, _ = group_table(request, get_catalog(request), bucket, step, filename, group)
    return json_response(table)
