"""A step as a table (`/<bucket>/<step>/table/`) and its JSON twin (`api/jsonl/.../table`), built
from one context: a page of rows of the step's ordering, sorted and filtered with the sample
pages' own parameters (`sort`, `order`, `status`, `dataset`, `range`), plus `page`, `page_size`
`at` (a position: open the page that holds it, with its row marked), `cols` (the columns
shown, comma-separated: unknown names are ignored, never an error) and `flag` (only the samples
with that flag; an unknown flag is a 400). Each row carries its flags with their reasons, judged
for the shown rows only (the step's flag bits are one cheap pass, kept per version of the step)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse

from ..conf import conf
from ..presentation import (
    ANSWER,
    FLAGS_COLUMN,
    NO_COLUMNS,
    POSITION,
    ROWS_PER_PAGE,
    TEXT_FIELDS,
    chosen_columns,
    cols_param,
    column_choices,
    default_columns,
    next_order,
    page_numbers,
    page_window,
    sort_column,
    table_column,
    table_row,
)
from ..store import (
    ADVANTAGE,
    FLAGS,
    line_values,
    rank_of,
    row_flags,
    step_filename,
    step_name,
)
from ..web import (
    app_url,
    get_catalog,
    int_param,
    json_response,
    query_suffix,
    selection_of,
    step_url,
    url_maker,
)
from .decorators import api, page
from .header import header_context
from .samples import choices_of
from .twins import ColumnChoice, FlagChoice, RowFlag, TableHeader, TableTwin, TableTwinRow

_NOWHERE = -1
_MAX_POSITION = 2**62
_MAX_PAGE = 10**9


def table_context(request: HttpRequest, bucket: str, step: str) -> TableTwin:
    """The table as JSON-able data, its twin as it is (the page adds its header and controls
    around it)."""
    catalog = get_catalog(request)
    selection = selection_of(request)
    filename = step_filename(step)
    index = catalog.open_step(bucket, filename)
    columns = catalog.columns(index)
    ordering = catalog.ordering(index, selection)
    size = int_param(request, "page_size", ROWS_PER_PAGE, 1, conf.MAX_PAGE_SIZE)
    wanted = int_param(request, "page", 1, 1, _MAX_PAGE)
    at = int_param(request, "at", _NOWHERE, 0, _MAX_POSITION)
    rank = rank_of(ordering, at) if at != _NOWHERE else None
    if rank is not None and "page" not in request.GET:
        wanted = rank // size + 1
    start, stop, pages = page_window(len(ordering), wanted, size)
    current = start // size + 1
    shown = list(ordering[start:stop])
    texts = line_values(index, shown, TEXT_FIELDS)
    lengths = table_column("response_length").candidates
    chosen = chosen_columns(columns, request.GET.getlist("cols") if "cols" in request.GET else None)
    advantages = catalog.advantages(index) if ADVANTAGE in chosen else ()
    stats = catalog.stats(index)
    marks = catalog.flag_marks(index)
    sample_url = url_maker(request, "sample", "position", bucket=bucket, step=step)
    keep = query_suffix(selection)
    base = app_url(request, "step-table", bucket=bucket, step=step)
    json_base = app_url(request, "api-table", bucket=bucket, filename=filename)
    extra: dict[str, int | str] = {"page_size": size} if size != ROWS_PER_PAGE else {}
    if cols := cols_param(columns, chosen):
        extra["cols"] = cols

    def page_url(number: int, to: str = base) -> str:
        return to + query_suffix(selection, page=number if number > 1 else "", **extra)

    rows: list[TableTwinRow] = []
    for position in shown:
        row = table_row(
            columns,
            position,
            index.lines[position],
            texts.get(position),
            lengths,
            chosen,
            advantages,
        )
        flags: list[RowFlag] = []
        if position < len(marks) and marks[position]:  # reasons for the flagged shown rows only
            flags = [
                {"name": f["name"], "reason": f["reason"]}
                for f in row_flags(columns, position, stats["flags"], catalog.flag_rules)
            ]
        rows.append(
            {**row, "flags": flags, "url": sample_url(position) + keep, "is_at": position == at}
        )
    header: list[TableHeader] = []
    for column in [POSITION, ANSWER, *map(table_column, chosen), FLAGS_COLUMN]:
        sort = sort_column(columns, column)
        if sort == "position":  # file order has one direction (positions ascending)
            sorted_as = "asc" if selection.sort is None else None
            sorting = selection.sorted_by("")
        else:
            sorted_as = selection.order if sort is not None and selection.sort == sort else None
            order = next_order(selection.sort, selection.descending, sort or "", column.first_order)
            sorting = selection.sorted_by(f"{sort}:{order}")
        header.append(
            {
                "key": column.key,
                "label": column.label,
                "sort": sort,
                "sorted": sorted_as,
                "url": None if sort is None else base + query_suffix(sorting, **extra),
            }
        )
    # The chooser lists the shown columns first, in their order, so that its form (which sends
    # the ticked boxes in its own order) keeps that order.
    others = [name for name in column_choices(columns) if name not in chosen]
    choices: list[ColumnChoice] = [
        {"key": name, "label": table_column(name).label, "chosen": name in chosen}
        for name in [*chosen, *others]
    ]
    counts = stats["flags"]["counts"]
    flag_choices: list[FlagChoice] = [
        {
            "name": name,
            "count": int(counts.get(name, 0)),
            "chosen": name == selection.flag,
            "url": base + query_suffix(selection, flag=name, page="", **extra),
        }
        for name in FLAGS
    ]
    return {
        "subdir": bucket,
        "filename": filename,
        "step": step_name(filename),
        **selection.as_json(),
        "conditions": selection.conditions(),
        "records": len(index),
        "total": len(ordering),
        "page": current,
        "pages": pages,
        "page_size": size,
        "first_rank": start + 1 if shown else 0,
        "last_rank": stop,
        "at": at if at != _NOWHERE else None,
        "at_shown": rank is not None and start <= rank < stop,
        "columns": header,
        "cols": chosen,
        "default_cols": default_columns(columns),
        "column_choices": choices,
        "flag_choices": flag_choices,
        "rows": rows,
        "invalid": index.invalid_lines(),
        "urls": {
            "page": page_url(current),
            "json": page_url(current, json_base),
            "first": page_url(1),
            "prev": page_url(current - 1) if current > 1 else None,
            "next": page_url(current + 1) if current < pages else None,
            "last": page_url(pages),
            "samples": step_url(request, bucket, step) + keep,
        },
        "page_links": [
            {"page": n, "url": page_url(n) if n is not None else None}
            for n in page_numbers(current, pages)
        ],
        "choices": choices_of(index, None, selection),
    }


@page
def table_page(request: HttpRequest, bucket: str, step: str) -> HttpResponse:
    catalog = get_catalog(request)
    context = header_context(request, catalog, bucket, step)
    table = table_context(request, bucket, step)
    # The step selector moves between tables here (sort and filters carry over, as elsewhere).
    table_of = url_maker(request, "step-table", "step", bucket=bucket)
    for entry in context["steps"]:
        entry["url"] = table_of(entry["name"])
    context.update(
        {
            "page": "table",
            "table": table,
            "query": selection_of(request),
            "choices": table["choices"],
            "json_url": table["urls"]["json"],
            "default_page_size": ROWS_PER_PAGE,
            # the filter form's `cols`, kept when the columns are not the defaults
            "cols_param": ""
            if table["cols"] == table["default_cols"]
            else ",".join(table["cols"]) or NO_COLUMNS,
        }
    )
    return TemplateResponse(request, "rollouts/table.html", context)


@api("GET", "HEAD")
def api_table(request: HttpRequest, bucket: str, filename: str) -> HttpResponseBase:
    """The table page's rows and links as JSON."""
    return json_response(table_context(request, bucket, step_name(filename)))
