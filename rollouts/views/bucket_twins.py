"""What the JSON twins of a bucket's pages carry (search, trends, compare, a prompt across
training), as types: the counterpart of `twins.py`, which holds those of a step's pages.
`tests/unit/test_twin_keys.py` holds them to the documentation and to the endpoints."""

from __future__ import annotations

from typing import Any, TypedDict

from ..store import SkippedStep
from .twins import PageUrls


class SearchHit(TypedDict):
    step: int
    position: int
    line: int
    field: str
    snippet: dict[str, str]  # before, match, after
    url: str
    reward: float | None  # finite, else None (missing, NaN, an object of rewards)
    status: str | None
    match: bool | None  # the answer check: None when there is no answer or no label
    chips: list[dict[str, str]]  # reward and status as the page shows them (name, tone, ...)


class StepMatches(TypedDict):
    step: int
    samples: int
    matches: int


class SearchTwin(TypedDict):
    """`api/jsonl/<bucket>/search`: one slice of a search, and the search page's `result` (its
    first slice), both from `search.result_json`."""

    q: str
    field: str
    regex: bool
    case: bool
    flag: str | None  # only hits on samples with this flag (`store.FLAGS`); None: every sample
    order: str  # newest (the latest step first) or oldest
    done: bool
    cursor: str | None
    scanned_steps: int
    total_steps: int
    scanned_bytes: int
    elapsed_s: float
    matches: int  # samples matched in the steps searched so far, over every slice
    listed: int  # hits listed so far, over every slice (at most `limit`)
    hits: list[SearchHit]
    per_step: list[StepMatches]


class RunChoice(TypedDict):
    """A run whose curves of the bucket can be overlaid (`trends.run_choices`)."""

    name: str
    trends_url: str
    current: bool
    colour: int  # the run's colour index on every page (`presentation.run_colour_index`)


class TrendsTwin(TypedDict):
    """`api/jsonl/<bucket>/trends`: the trends page's data (the page reads it with its script),
    from `trends.trends_json`."""

    subdir: str
    total: int
    indexed: int
    done: bool
    failed: list[dict[str, str]]
    after: int
    step_url: str
    table_url: str  # a step's table, "{step}" for its name (a flag series' points open it)
    series: list[dict[str, Any]]
    points: list[dict[str, Any]]
    cards: list[dict[str, Any]]
    reading: dict[str, Any]
    references: list[dict[str, Any]]  # the reading's thresholds: {key, value, label} per curve
    cursor: Any
    runs: list[RunChoice]
    scalars: dict[str, Any]


class CompareStep(TypedDict):
    run: str | None  # None: the request's own data directory
    step: str
    url: str


class ChosenSample(TypedDict):
    position: int
    line: int
    url: str


class ChosenPrompt(TypedDict):
    """`prompt=` on the compare page: the prompt's first sample in each step."""

    prompt_id: str
    a: ChosenSample
    b: ChosenSample


class CompareTwin(TypedDict):
    """`api/jsonl/<bucket>/compare`: the compare page's `data` (`compare.compare_context`)."""

    bucket: str
    a: CompareStep
    b: CompareStep
    threshold: float
    rows: list[dict[str, Any]]
    prompts_in_both: int
    flipped_total: int
    flipped: list[dict[str, Any]]
    prompt: ChosenPrompt | None  # None without `prompt=`


class AppearanceRow(TypedDict):
    step: int
    position: int
    line: int
    reward: float | None
    status: str | None
    response_length: float | int | None
    url: str


class StepAppearances(TypedDict):
    step: int
    samples: int
    mean_reward: float | None


class LineageTwin(TypedDict):
    """`api/jsonl/<bucket>/prompt/<prompt_id>`: a prompt across training, a page of its
    appearances (`lineage.lineage_json`, which the prompt page draws from too)."""

    prompt_id: str
    prompt: Any  # as the file wrote it: a string or a list of messages
    total: int
    page: int
    pages: int
    page_size: int
    appearances: list[AppearanceRow]
    steps: list[StepAppearances]
    skipped: list[SkippedStep]
    urls: PageUrls
