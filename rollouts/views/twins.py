"""What the JSON twins of a step's pages carry, as types: one TypedDict per twin naming every
top-level key, so mypy holds the code that builds a twin to its keys, and
`tests/unit/test_twin_keys.py` holds the keys to the documentation (docs/api.md and the page
guides) and to the endpoints. `bucket_twins.py` holds those of a bucket's pages.

A key a twin sends only sometimes is declared in a `total=False` class (the one spelling whose
optional keys Python 3.11 still sees with postponed annotations: it reads `NotRequired[...]`
as a plain string and counts the key as required), whose docstring says when it is sent.
"""

from __future__ import annotations

from typing import Any, TypedDict

from ..presentation import GroupSummary, SampleIdentity, SharedLabel, TableRow


class Choices(TypedDict):
    """Sort columns and filter values for a step's controls (`samples.choices_of`)."""

    sorts: list[str]
    statuses: list[str]
    datasets: list[str]


class Neighbours(TypedDict):
    """Positions of the first, previous, next and last samples of the ordering."""

    first: int
    prev: int | None
    next: int | None
    last: int


class StepChoice(TypedDict):
    step: int
    name: str


class PageLinks(TypedDict):
    """The first, previous, next and last pages' (or samples') URLs; None past an end."""

    first: str | None
    prev: str | None
    next: str | None
    last: str | None


class PageUrls(PageLinks):
    """This page's URL and its twin's, with the links to its neighbours."""

    page: str | None
    json: str | None


class SampleUrls(PageUrls):
    """The sample page's links, with the previous and next flagged samples of its order (with
    the `flag` of the selection, else with any flag); None past an end, on a sample page with
    no sample, and while the step's columns are being decoded."""

    prev_flagged: str | None
    next_flagged: str | None


class SampleFlag(TypedDict):
    """A flag of a sample (`store.row_flags`): its name (`store.FLAGS`) and the reason, which
    states the numbers that raised it."""

    name: str
    reason: str


class _SampleTwinAlways(TypedDict):
    """What the sample page's twin always sends (null when the page has no such value:
    `position` and what follows it on a step with no sample to show, `error` on a good one)."""

    data_dir: str
    bucket: str
    step: str
    filename: str
    records: int
    total: int
    columns_ready: bool
    invalid: list[dict[str, int | str]]
    partial_tail_bytes: int
    position: int | None
    rank: int | None
    line: int | None
    warnings: list[str] | None
    neighbours: Neighbours | None
    error: str | None
    error_line: int | None
    empty: str | None
    tokens: dict[str, Any] | None
    prompt_id: str | None
    sort: str
    order: str
    filters: dict[str, str]
    range: str | None
    flag: str | None
    steps: list[StepChoice]
    buckets: list[str]
    choices: Choices
    urls: SampleUrls


class SampleTwin(_SampleTwinAlways, total=False):
    """`api/view/<bucket>/<step>[/sample/<position>]`: the sample page's twin.

    The keys here come only with a sample shown (not on an empty step, one the filters leave
    empty, or an unreadable line). `sample` is the line's own JSON, written after the rest
    (`responses.with_raw`), never held in this dict.
    """

    info: list[dict[str, Any]]
    flags: list[SampleFlag] | None  # None while the step's columns are being decoded
    identity: SampleIdentity
    verdict: dict[str, Any] | None
    rendered: dict[str, dict[str, Any]]
    sample: Any


class TableHeader(TypedDict):
    key: str
    label: str
    sort: str | None
    sorted: str | None  # "asc" | "desc" on the column the table is sorted by
    url: str | None


class ColumnChoice(TypedDict):
    key: str  # a name `cols` takes
    label: str
    chosen: bool  # shown now


class RowFlag(TypedDict):
    name: str  # one of `store.FLAGS`
    reason: str  # the one-line reason, with its numbers


class FlagChoice(TypedDict):
    name: str  # a value `flag=` takes
    count: int  # the step's samples with this flag
    chosen: bool  # the table is filtered by it now
    url: str  # the table filtered by it (sort, filters and columns kept, page 1)


class TableTwinRow(TableRow):
    flags: list[RowFlag]  # the row's flags, in `FLAGS` order (empty: none)
    url: str  # the sample's page, in the table's order
    is_at: bool  # the row `at=` names


class TableUrls(PageUrls):
    samples: str


class PageLink(TypedDict):
    page: int | None  # None: a gap
    url: str | None


class TableTwin(TypedDict):
    """`api/jsonl/<bucket>/file/<step>.jsonl/table`: the table page's twin, and the page's
    `table` (`table.table_context`)."""

    subdir: str
    filename: str
    step: str
    sort: str
    order: str
    filters: dict[str, str]
    range: str | None
    flag: str | None
    conditions: list[str]
    records: int
    total: int
    page: int
    pages: int
    page_size: int
    first_rank: int
    last_rank: int
    at: int | None
    at_shown: bool
    columns: list[TableHeader]
    cols: list[str]  # the chosen columns, in their order (`cols`, or the defaults)
    default_cols: list[str]  # the columns shown without `cols`
    column_choices: list[ColumnChoice]  # what `cols` may name in this step
    flag_choices: list[FlagChoice]  # every flag, with its count in the step (the filter's)
    rows: list[TableTwinRow]
    invalid: list[dict[str, int | str]]
    urls: TableUrls
    page_links: list[PageLink]
    choices: Choices


class GroupColumn(TypedDict):
    key: str
    sorted: str | None
    url: str


# `api/jsonl/<bucket>/file/<filename>/group/<group>`: the group page's twin, and the page's
# `table` (`groups.group_table`): the group's summary from the columns
# (`store.stats.group_summary`), then its members as asked. Spelled as a call: `from` is a
# Python keyword.
GroupTwin = TypedDict(
    "GroupTwin",
    {
        "subdir": str,
        "filename": str,
        "group": int,
        "samples": int,
        "n": int,
        "mean": float | None,
        "std": float | None,
        "min": float | None,
        "max": float | None,
        "zero_signal": bool | None,
        "success": bool,
        "summary": GroupSummary,
        "label": SharedLabel,
        "sort": str,
        "order": str,
        "from": int | None,
        "from_in_group": bool,
        "shown": int,
        "cut": bool,
        "positions": list[int],
        "members": list[dict[str, Any]],
        "columns": list[GroupColumn],
        "compare": dict[str, Any] | None,
        "json_url": str,
    },
)


class RewardSummary(TypedDict):
    """Count, mean, population std, min and max of the finite values (`store.stats.Summary`)."""

    n: int
    mean: float | None
    std: float | None
    min: float | None
    max: float | None


class LengthSummary(TypedDict):
    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    max: float | None


class GroupStats(TypedDict):
    groups: int
    zero_signal_share: float | None
    success_share: float | None
    mean_std: float | None


class _HistogramCounts(TypedDict):
    kind: str  # "bins" (with edges) | "values" (one bar per value)
    counts: list[int]


class Histogram(_HistogramCounts, total=False):
    edges: list[float]
    values: list[float]


class ClippedHistogram(Histogram):
    """A histogram without the far outliers (`store.stats.clipped_histogram`)."""

    below: int  # values left out below the drawn range
    above: int  # and above it


class StatsTwin(TypedDict):
    """`api/jsonl/<bucket>/file/<filename>/stats`: the statistics page's numbers (the page shows
    the same `Catalog.stats`). After the step's identity, the keys of `store.stats.step_stats`,
    whose exact shape `store.statsshape` holds."""

    subdir: str
    filename: str
    size_bytes: int
    partial_tail_bytes: int
    samples: int
    invalid: int
    status: dict[str, int]
    truncation_rate: float | None
    reward: RewardSummary
    reward_by_dataset: dict[str, RewardSummary]
    reward_components: dict[str, RewardSummary]
    response_length: LengthSummary
    groups: GroupStats
    histograms: dict[str, Histogram]  # reward, response_length
    histograms_clipped: dict[str, ClippedHistogram]  # the same without the far outliers
    flags: dict[str, int]  # each flag's count of samples (`store.FLAGS`, every flag named)
