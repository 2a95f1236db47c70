"""Search one bucket's steps: which samples' prompt, response or label match a query, and how
many per step (the share of matching samples over training).

Each step is read in blocks of whole lines (its index knows where they are) into one reused
buffer, and the block's raw bytes are searched for the query's JSON-encoded forms
(`searchquery.Matcher.needles`); only the lines that hold one are decoded and matched for real.
Plain reads rather than an mmap: a step rewritten under an mmap kills the process (SIGBUS).

A request scans for a time budget (and, for tests, a number of lines), then answers with what it
found and a cursor to go on from: one request never holds a worker for long.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..catalog import Catalog
from ..errors import BadRequest, StoreError
from ..files import StepFile
from ..flags import FLAG_BIT
from ..index import StepIndex
from .query import Found, Matcher, Query, Snippet, field_texts, snippet_of
from .scan import Budget, Clock, scan_lines

DEFAULT_BUDGET = Budget()
MARK_SECONDS = 0.25  # looking for the texts to mark on a sample page stops after this
MARK_TERMS = 20  # distinct texts marked per field
MAX_LIMIT = 1000
DEFAULT_LIMIT = 100
ORDERS = ("newest", "oldest")  # newest: the latest step first
_CURSOR = re.compile(r"([0-9]{1,30})\.([0-9]{1,18})\.([0-9]{1,9})(?:\.([0-9]{1,18}))?\Z")
# Whether a listed hit's response gives the label's answer (the sample page's check), from its
# decoded line's values: the caller's (`store` has no presentation), or None not to check.
AnswerCheck = Callable[[Mapping[str, Any]], bool | None]
_RANGE = re.compile(r"([0-9]{1,30})?-([0-9]{1,30})?\Z|([0-9]{1,30})\Z")


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the next slice starts: a step (by name), a position in it, the hits given and the
    samples that matched so far (a cursor without the last, from an earlier version, counts
    from 0)."""

    step: str
    position: int
    hits: int = 0
    matches: int = 0

    @classmethod
    def parse(cls, text: str) -> Cursor:
        found = _CURSOR.match(text)
        if found is None:
            raise BadRequest(f"after must be a cursor from an earlier answer, got {text[:40]!r}")
        matches = int(found.group(4)) if found.group(4) is not None else 0
        return cls(found.group(1), int(found.group(2)), int(found.group(3)), matches)

    def __str__(self) -> str:
        return f"{self.step}.{self.position}.{self.hits}.{self.matches}"

    def key(self) -> tuple[int, str]:
        return int(self.step), self.step


@dataclass(frozen=True, slots=True)
class StepRange:
    """`steps=A-B` (step numbers, both included; either end may be left out) or `steps=A`."""

    low: int | None = None
    high: int | None = None

    @classmethod
    def parse(cls, text: str | None) -> StepRange:
        if not text:
            return cls()
        found = _RANGE.match(text.strip())
        if found is None:
            raise BadRequest(f"steps must look like 10-20, 10- or 10, got {text[:40]!r}")
        low, high, single = found.groups()
        if single is not None:
            return cls(int(single), int(single))
        bounds = cls(int(low) if low else None, int(high) if high else None)
        if bounds.low is not None and bounds.high is not None and bounds.low > bounds.high:
            raise BadRequest(f"steps must go from low to high, got {text[:40]!r}")
        return bounds

    def __contains__(self, step: int) -> bool:
        return (self.low is None or step >= self.low) and (self.high is None or step <= self.high)

    def __str__(self) -> str:
        if self.low is not None and self.low == self.high:
            return str(self.low)
        ends = ["" if end is None else str(end) for end in (self.low, self.high)]  # -0 stays -0
        return "-".join(ends) if any(ends) else ""


@dataclass(frozen=True, slots=True)
class Hit:
    step: int
    name: str  # the step as URLs name it ("007")
    position: int
    line: int
    field: str
    snippet: Snippet
    reward: float | None = None  # a finite number, else None (missing, NaN, an object)
    status: str | None = None
    match: bool | None = None  # the answer check; None: nothing to compare, or not checked


@dataclass(slots=True)
class StepCount:
    step: int
    name: str
    samples: int
    matches: int = 0


@dataclass(slots=True)
class SearchResult:
    done: bool = True
    cursor: Cursor | None = None
    scanned_steps: int = 0
    total_steps: int = 0
    scanned_bytes: int = 0
    elapsed_s: float = 0.0
    hits: list[Hit] = field(default_factory=list)
    per_step: list[StepCount] = field(default_factory=list)
    matches: int = 0  # samples that matched in the steps searched so far, over every slice
    listed: int = 0  # hits given so far, over every slice (at most the limit)


def search(
    catalog: Catalog,
    bucket: str,
    query: Query,
    steps: StepRange = StepRange(),
    *,
    limit: int = DEFAULT_LIMIT,
    after: Cursor | None = None,
    budget: Budget = DEFAULT_BUDGET,
    stop_at_limit: bool = False,
    newest: bool = False,
    check: AnswerCheck | None = None,
) -> SearchResult:
    """One slice of the search: hits (up to `limit` over the whole search, counted through the
    cursor) and per-step counts of the steps it scanned, from `after` on; the matches counted
    so far through the cursor too.

    Steps go in step order, or the latest first with `newest` (the cursor of a slice goes on
    in the order it was made in); a step's samples in file order either way. Each hit carries
    its reward and status, and with `check` its answer check. With `stop_at_limit`, the slice
    ends at the `limit`-th hit (the sample page's next match).
    """
    matcher = query.matcher()
    clock = Clock(budget)
    files = [s for s in catalog.steps(bucket) if s.step in steps]
    if newest:
        files.reverse()
    result = SearchResult(total_steps=len(files))
    hits_before = after.hits if after is not None else 0
    first = 0
    if after is not None:
        key = after.key()
        first = next(
            (
                i
                for i, s in enumerate(files)
                if ((s.step, s.name) <= key if newest else (s.step, s.name) >= key)
            ),
            len(files),
        )
    result.scanned_steps = first
    for number in range(first, len(files)):
        step_file = files[number]
        start = after.position if after is not None and step_file.name == after.step else 0
        stopped = _scan_step(
            catalog,
            bucket,
            step_file,
            start,
            matcher,
            clock,
            result,
            limit - hits_before,
            stop_at_limit,
            check,
        )
        if stopped is not None:
            result.done = False
            result.cursor = _cursor(step_file.name, stopped, after, result)
            break
        result.scanned_steps += 1
        if number + 1 < len(files) and (
            clock.spent() or _full(result, limit - hits_before, stop_at_limit)
        ):
            result.done = False
            result.cursor = _cursor(files[number + 1].name, 0, after, result)
            break
    result.listed = hits_before + len(result.hits)
    result.matches = _matches_so_far(after, result)
    result.scanned_bytes = clock.bytes
    result.elapsed_s = round(time.monotonic() - clock.started, 4)
    return result


def _matches_so_far(after: Cursor | None, result: SearchResult) -> int:
    """The samples matched before this slice (the cursor says) and in it: a step split between
    two slices is counted in each for its own positions, so the sum is exact."""
    return (after.matches if after is not None else 0) + sum(c.matches for c in result.per_step)


def _cursor(step: str, position: int, after: Cursor | None, result: SearchResult) -> Cursor:
    hits = (after.hits if after is not None else 0) + len(result.hits)
    return Cursor(step, position, hits, _matches_so_far(after, result))


def _full(result: SearchResult, room: int, stop_at_limit: bool) -> bool:
    return stop_at_limit and len(result.hits) >= room


def _scan_step(
    catalog: Catalog,
    bucket: str,
    step_file: StepFile,
    start: int,
    matcher: Matcher,
    clock: Clock,
    result: SearchResult,
    room: int,
    stop_at_limit: bool,
    check: AnswerCheck | None = None,
) -> int | None:
    """Scan one step from position `start`; the position to go on from when the budget ran
    out first, else None. A step that vanished or cannot be read is skipped."""
    try:
        index = catalog.open_step(bucket, step_file.filename)
    except StoreError:
        return None
    count = StepCount(step_file.step, step_file.name, len(index))
    result.per_step.append(count)
    try:
        flagged = flagged_filter(catalog, index, matcher.query)
        for position, line_end, found in scan_lines(index, matcher, start, len(index), clock):
            if found is not None and flagged(position):
                count.matches += 1
                if len(result.hits) < room:
                    result.hits.append(_hit(index, step_file, position, found, check))
                    if stop_at_limit and len(result.hits) >= room:
                        return position + 1 if position + 1 < len(index) else None
            if line_end is not None and line_end < len(index) and clock.spent():
                return line_end
    except (OSError, StoreError):  # rewritten, truncated or removed meanwhile
        return None
    return None


def flagged_filter(catalog: Catalog, index: StepIndex, query: Query) -> Callable[[int], bool]:
    """Whether a sample of the step counts for a query with a `flag` (each one without): from
    the step's flag marks, which need its columns (decoded now when they are not yet)."""
    if query.flag is None:
        return lambda position: True
    marks = catalog.flag_marks(index)
    bit = FLAG_BIT[query.flag]
    return lambda position: position < len(marks) and bool(marks[position] & bit)


def _hit(
    index: StepIndex, step_file: StepFile, position: int, found: Found, check: AnswerCheck | None
) -> Hit:
    """A listed hit, with its sample's reward and status (from the step's columns when they are
    ready, else from its line, which confirming the match decoded) and its answer check."""
    reward, status = found.values.get("reward"), found.values.get("status")
    columns = index.columns
    if columns is not None and index.columns_ready and position < columns.rows:
        reward = columns.value("reward", position) if "reward" in columns.numeric else None
        status = columns.value("status", position) if "status" in columns.categorical else None
    return Hit(
        step_file.step,
        step_file.name,
        position,
        index.lines[position],
        found.field,
        snippet_of(found.text, found.span),
        reward=_finite(reward),
        status=status if isinstance(status, str) else None,
        match=check(found.values) if check is not None else None,
    )


def _finite(value: Any) -> float | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:  # a 400-digit integer: no number, as in the columns
        return None
    return number if math.isfinite(number) else None


def adjacent_match(
    catalog: Catalog,
    bucket: str,
    query: Query,
    steps: StepRange,
    step: str,
    position: int,
    forward: bool,
    budget: Budget,
) -> tuple[Hit | None, bool]:
    """The next (or previous) matching sample after (before) `position` of step `step`, across
    the steps of `steps`, or None; and whether that is sure (False: the budget ran out first)."""
    if forward:
        found = search(
            catalog,
            bucket,
            query,
            steps,
            limit=1,
            budget=budget,
            after=Cursor(step, position + 1),
            stop_at_limit=True,
        )
        return (found.hits[0], True) if found.hits else (None, found.done)
    matcher = query.matcher()
    clock = Clock(budget)
    files = [s for s in catalog.steps(bucket) if s.step in steps]
    key = (int(step), step)
    for step_file in reversed([s for s in files if (s.step, s.name) <= key]):
        try:
            index = catalog.open_step(bucket, step_file.filename)
        except StoreError:
            continue
        stop = min(position, len(index)) if step_file.name == step else len(index)
        last: Hit | None = None
        try:
            flagged = flagged_filter(catalog, index, query)
            for at, block_end, match in scan_lines(index, matcher, 0, stop, clock):
                if block_end is not None and block_end < stop and clock.spent():
                    return None, False
                if match is not None and flagged(at):
                    last = _hit(index, step_file, at, match, None)
        except (OSError, StoreError):
            continue
        if last is not None:
            return last, True
        if clock.spent():
            return None, False
    return None, True


def match_spans(
    query: Query, values: Mapping[str, object], seconds: float = MARK_SECONDS
) -> dict[str, list[str]]:
    """Per field, the distinct texts the query matches in a decoded sample (to mark them on its
    page): at most MARK_TERMS, found within `seconds` (`x*` matches the empty text at each
    character of a 20 MB response; the clock is read between matches, each one bounded)."""
    pattern = query.matcher().pattern
    deadline = time.monotonic() + seconds
    spans: dict[str, list[str]] = {}
    for name in query.fields:
        seen: dict[str, None] = {}
        texts = field_texts(values.get(name))
        for text, (start, end) in ((t, span) for t in texts for span in pattern.finditer(t)):
            if end > start:
                seen[text[start:end]] = None
            if len(seen) >= MARK_TERMS or time.monotonic() > deadline:
                break
        if seen:
            spans[name] = list(seen)
    return spans
