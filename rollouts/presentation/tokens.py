"""A sample's tokens and their log-probabilities: summary numbers, the lowest tokens, a strip
along the response and, with a tokenizer, the tokens as text coloured by log-probability.

Plain Python (no Django): the sample page, its JSON twin and any script agree. Only the one
sample shown is ever looked at. Its arrays may disagree, hold NaN, lack the mask, be empty or
run to tens of thousands of tokens, or hold any float at all (800.0, -1e308, whose sum leaves
float range); none of that raises, and what was odd is said (`problems`).

A token is *counted* when it has a finite log-prob and its mask (if any) is true: the mask marks
the tokens the policy generated (false: a tool's output or other text the trainer leaves out).
Masked and missing tokens appear in the strip and the text, but not in the numbers or the lows.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, cast

IDS_KEY = "response_token_ids"
LOGPROBS_KEY = "response_rollout_log_probs"
MASK_KEY = "response_rollout_log_probs_mask"
# A "low" token: the policy gave it less than a 10 % chance (log-prob below log 0.1 = -2.303).
LOW_PROBABILITY = 0.1
LOW_LOGPROB = math.log(LOW_PROBABILITY)
# Colour buckets by probability: >= 90 %, >= 50 %, >= 10 %, >= 1 %, below (0 to 4).
BUCKET_PROBABILITIES = (0.9, 0.5, 0.1, 0.01)
_BUCKET_BOUNDS = tuple(math.log(p) for p in BUCKET_PROBABILITIES)
_ASCENDING_BOUNDS, _KINDS = sorted(_BUCKET_BOUNDS), ["lp0", "lp1", "lp2", "lp3", "lp4"]
LOWEST_LISTED = 12
STRIP_CELLS = 480  # the strip's most cells; a longer response shares cells (each its lowest)
STRIP_FLOOR = -10.0  # a log-prob at or below this draws a full-height bar
STRIP_HEIGHT = 40  # SVG units
TEXT_TOKENS = 4096  # tokens shown as coloured text at most (each is an element of the page)


class Pieces(Protocol):
    def pieces(self, ids: Sequence[int | None]) -> list[str | None]: ...


@dataclass(slots=True)
class Token:
    position: int
    token_id: int | None
    logprob: float | None  # None: missing (no value, NaN, not a number)
    masked: bool
    text: str | None = None

    @property
    def counted(self) -> bool:
        return self.logprob is not None and not self.masked

    @property
    def kind(self) -> str:
        """ "masked", "missing", or "lp0".."lp4" (the colour bucket)."""
        if self.masked:
            return "masked"
        return "missing" if self.logprob is None else f"lp{bucket_of(self.logprob)}"

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "position": self.position,
            "token_id": self.token_id,
            "logprob": self.logprob,
            "probability": probability_of(self.logprob),
        }
        if self.text is not None:
            data["text"] = self.text
        return data


class StripCell(NamedTuple):
    """Tokens [start, end) as one bar: its lowest counted log-prob, or how it is not counted
    (a tuple: up to 480 are made for each page, and a tuple is made fastest)."""

    index: int  # type: ignore[assignment]  # x in the SVG (a field, not tuple.index)
    start: int
    end: int
    logprob: float | None
    kind: str  # "lp0".."lp4", "masked" (every token masked), "missing"

    @property
    def height(self) -> float:
        if self.logprob is None:
            return STRIP_HEIGHT if self.kind == "masked" else 0.0
        share = min(1.0, max(0.0, self.logprob / STRIP_FLOOR))
        return round(2 + (STRIP_HEIGHT - 2) * share, 2)

    @property
    def y(self) -> float:
        return round(STRIP_HEIGHT - self.height, 2)


@dataclass(slots=True)
class TokenView:
    tokens: int
    counted: int
    masked: int
    missing: int
    mean_logprob: float | None
    low_count: int
    lows: list[Token]
    strip: list[StripCell]
    tokens_per_cell: int
    has_mask: bool
    problems: list[str] = field(default_factory=list)
    text: list[Token] | None = None  # with a tokenizer: the first TEXT_TOKENS tokens
    text_hint: str | None = None  # without one: how to see the tokens' text

    @property
    def linked_lows(self) -> set[int]:
        """The least likely tokens' positions that the text shows (each row links to its own)."""
        shown = len(self.text) if self.text is not None else 0
        return {t.position for t in self.lows if t.position < shown}

    @property
    def low_share(self) -> float | None:
        return self.low_count / self.counted if self.counted else None

    @property
    def perplexity(self) -> float | None:
        if self.mean_logprob is None or -self.mean_logprob > 700:  # exp would overflow
            return None
        return math.exp(-self.mean_logprob)

    @property
    def strip_floor(self) -> float:
        return STRIP_FLOOR

    @property
    def text_cut(self) -> bool:
        return self.text is not None and len(self.text) < self.tokens

    def as_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "counted": self.counted,
            "masked": self.masked,
            "missing": self.missing,
            "has_mask": self.has_mask,
            "mean_logprob": self.mean_logprob,
            "perplexity": self.perplexity,
            "low_threshold": LOW_LOGPROB,
            "low_count": self.low_count,
            "low_share": self.low_share,
            "lowest": [t.as_json() for t in self.lows],
            "tokens_per_cell": self.tokens_per_cell,
            "tokenizer": self.text is not None,
            "problems": self.problems,
        }


def probability_of(logprob: float | None) -> float | None:
    """exp(logprob); None without one or above 0 (no probability: exp(800.0) overflows)."""
    return None if logprob is None or logprob > 0 else math.exp(logprob)


def mean_of(values: Sequence[float]) -> float | None:
    """The mean of finite floats, also when their sum leaves float range ([-1e308, -1e308]):
    then they are summed scaled down by a power of two (exact) and the mean scaled back."""
    if not values:
        return None
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        scale = len(values).bit_length()  # 2**scale > len(values): the scaled sum fits
        return math.ldexp(math.fsum(math.ldexp(v, -scale) for v in values) / len(values), scale)


def bucket_of(logprob: float) -> int:
    """0 (probability >= 90 %) .. 4 (below 1 %): how many bounds lie above it."""
    return len(_ASCENDING_BOUNDS) - bisect.bisect_right(_ASCENDING_BOUNDS, logprob)


def token_view(values: Mapping[str, Any], tokenizer: Pieces | None = None) -> TokenView | None:
    """The view of a decoded sample's tokens, or None when it has no log-prob array."""
    logprobs = values.get(LOGPROBS_KEY)
    if not isinstance(logprobs, list):
        return None
    problems: list[str] = []
    ids = values.get(IDS_KEY)
    if not isinstance(ids, list):
        problems.append(f"no {IDS_KEY}: tokens are numbered by their log-probs")
        ids = None
    n = len(ids) if ids is not None else len(logprobs)
    if ids is not None and len(logprobs) != n:
        if len(logprobs) > n:
            problems.append(
                f"{len(logprobs)} log-probs for {n} tokens: the last "
                f"{len(logprobs) - n} are left out"
            )
        else:
            problems.append(
                f"{len(logprobs)} log-probs for {n} tokens: tokens from {len(logprobs)} on "
                "have none"
            )
    mask = values.get(MASK_KEY)
    if mask is not None and not isinstance(mask, list):
        problems.append(f"{MASK_KEY} is not an array: every token is counted")
        mask = None
    if mask is not None and len(mask) != n:
        problems.append(f"{len(mask)} mask values for {n} tokens: tokens without one are counted")
    # Plain lists, one pass each: a response of 20,000 tokens costs a few ms, and Token objects
    # are made only for what is listed (the lows, the tokens shown as text).
    lps = _logprobs(logprobs[:n]) + [None] * (n - min(n, len(logprobs)))
    kept = [True] * n if mask is None else [bool(m) for m in mask[:n]]
    kept += [True] * (n - len(kept))
    every = n == len(logprobs) and None not in lps and all(kept)  # the usual sample
    counted = list(range(n)) if every else [p for p in range(n) if kept[p] and lps[p] is not None]
    scores = cast("list[float]", lps) if every else [lp for lp in lps if lp is not None]
    bad = min(n, len(logprobs)) - len(scores)
    if bad:
        problems.append(f"{bad} log-prob{'s are' if bad != 1 else ' is'} not a finite number")
    above = sum(1 for lp in scores if lp > 0) if scores and max(scores) > 0 else 0
    if above:
        problems.append(
            f"{above} log-prob{'s are' if above != 1 else ' is'} above 0 (a probability above "
            "100 %): counted as written, with no probability"
        )
    kept_lps = cast("list[float]", lps) if every else [lps[p] or 0.0 for p in counted]
    lowest = [p for _, p in heapq.nsmallest(LOWEST_LISTED, zip(kept_lps, counted, strict=True))]

    def token(p: int) -> Token:
        token_id = _token_id(ids[p]) if ids is not None else None
        return Token(p, token_id, lps[p], not kept[p])

    lows = [token(p) for p in lowest]
    view = TokenView(
        tokens=n,
        counted=len(counted),
        masked=n - sum(kept),
        missing=0 if every else sum(1 for p in range(n) if kept[p] and lps[p] is None),
        mean_logprob=mean_of(kept_lps),
        low_count=sum(map(LOW_LOGPROB.__gt__, kept_lps)),  # at C speed: thousands of tokens
        lows=lows,
        strip=[],
        tokens_per_cell=max(1, math.ceil(n / STRIP_CELLS)),
        has_mask=mask is not None,
        problems=problems,
    )
    view.strip = _strip(lps, None if every else kept, view.tokens_per_cell)
    if tokenizer is not None and ids is not None:
        by_position = {t.position: t for t in lows}
        shown = [by_position.get(p) or token(p) for p in range(min(n, TEXT_TOKENS))]
        wanted = {t.position: t for t in [*shown, *lows]}
        order = sorted(wanted)
        pieces = tokenizer.pieces([wanted[p].token_id for p in order])
        for position, text in zip(order, pieces, strict=True):
            wanted[position].text = text
        view.text = shown
    return view


def _strip(lps: Sequence[float | None], kept: Sequence[bool] | None, per: int) -> list[StripCell]:
    """A bar per `per` tokens; `kept` None: every token is counted (a plain min per bar)."""
    n = len(lps)
    if kept is None:  # the usual sample: no None, every token counted
        lows = [min(cast("list[float]", lps[start : start + per])) for start in range(0, n, per)]
        return [
            StripCell(index, index * per, min(index * per + per, n), low, _KINDS[bucket_of(low)])
            for index, low in enumerate(lows)
        ]
    cells = []
    for index, start in enumerate(range(0, n, per)):
        end = min(start + per, n)
        pairs = zip(lps[start:end], kept[start:end], strict=True)
        scored = [lp for lp, k in pairs if k and lp is not None]
        if scored:
            low = min(scored)
            cells.append(StripCell(index, start, end, low, _KINDS[bucket_of(low)]))
        else:
            kind = "missing" if all(kept[start:end]) else "masked"
            cells.append(StripCell(index, start, end, None, kind))
    return cells


def _logprobs(values: list[Any]) -> list[float | None]:
    """Each value as a finite float, or None. The usual array (finite floats only) is checked
    with C-speed builtins; anything else goes value by value."""
    kinds = set(map(type, values))
    if kinds <= {float, int}:
        try:
            finite = math.isfinite(math.fsum(values))  # NaN or an infinity makes it not finite
        except (ValueError, OverflowError):  # inf - inf; an int too big for a float
            finite = False
        if finite:
            return [float(v) for v in values] if int in kinds else list(values)
    return [_logprob(v) for v in values]


def _logprob(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # a 400-digit integer
        return None
    return number if math.isfinite(number) else None


def _token_id(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
