"""A sample's tokens and their log-probabilities: summary numbers, the lowest tokens, a strip
along the response and, with a tokenizer, the tokens as text coloured by log-probability.

Plain Python (no Django): the sample page, its JSON twin and any script agree. Only the one
sample shown is ever looked at. Its arrays may disagree, hold NaN, lack the mask, be empty or
run to tens of thousands of tokens; none of that raises, and what was odd is said (`problems`).

A token is *counted* when it has a finite log-prob and its mask (if any) is true: the mask marks
the tokens the policy generated (false: a tool's output or other text the trainer leaves out).
Masked and missing tokens appear in the strip and the text, but not in the numbers or the lows.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

IDS_KEY = "response_token_ids"
LOGPROBS_KEY = "response_rollout_log_probs"
MASK_KEY = "response_rollout_log_probs_mask"
# A "low" token: the policy gave it less than a 10 % chance (log-prob below log 0.1 = -2.303).
LOW_PROBABILITY = 0.1
LOW_LOGPROB = math.log(LOW_PROBABILITY)
# Colour buckets by probability: >= 90 %, >= 50 %, >= 10 %, >= 1 %, below (0 to 4).
BUCKET_PROBABILITIES = (0.9, 0.5, 0.1, 0.01)
_BUCKET_BOUNDS = tuple(math.log(p) for p in BUCKET_PROBABILITIES)
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
            "probability": math.exp(self.logprob) if self.logprob is not None else None,
        }
        if self.text is not None:
            data["text"] = self.text
        return data


@dataclass(frozen=True, slots=True)
class StripCell:
    """Tokens [start, end) as one bar: its lowest counted log-prob, or how it is not counted."""

    index: int  # x in the SVG
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


def bucket_of(logprob: float) -> int:
    """0 (probability >= 90 %) .. 4 (below 1 %)."""
    for bucket, bound in enumerate(_BUCKET_BOUNDS):
        if logprob >= bound:
            return bucket
    return len(_BUCKET_BOUNDS)


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
    tokens = [
        Token(
            position=p,
            token_id=_token_id(ids[p]) if ids is not None else None,
            logprob=_logprob(logprobs[p]) if p < len(logprobs) else None,
            masked=mask is not None and p < len(mask) and not mask[p],
        )
        for p in range(n)
    ]
    bad = sum(1 for p in range(min(n, len(logprobs))) if tokens[p].logprob is None)
    if bad:
        problems.append(f"{bad} log-prob{'s are' if bad != 1 else ' is'} not a finite number")
    counted = [t for t in tokens if t.counted]
    mean = (
        math.fsum(t.logprob for t in counted if t.logprob is not None) / len(counted)
        if counted
        else None
    )
    lows = heapq.nsmallest(LOWEST_LISTED, counted, key=lambda t: (t.logprob, t.position))
    view = TokenView(
        tokens=n,
        counted=len(counted),
        masked=sum(1 for t in tokens if t.masked),
        missing=sum(1 for t in tokens if t.logprob is None and not t.masked),
        mean_logprob=mean,
        low_count=sum(1 for t in counted if t.logprob is not None and t.logprob < LOW_LOGPROB),
        lows=lows,
        strip=[],
        tokens_per_cell=max(1, math.ceil(n / STRIP_CELLS)),
        has_mask=mask is not None,
        problems=problems,
    )
    view.strip = _strip(tokens, view.tokens_per_cell)
    if tokenizer is not None and ids is not None:
        shown = tokens[:TEXT_TOKENS]
        wanted = {t.position: t for t in [*shown, *lows]}
        order = sorted(wanted)
        for position, text in zip(
            order, tokenizer.pieces([tokens[p].token_id for p in order]), strict=True
        ):
            wanted[position].text = text
        view.text = shown
    return view


def _strip(tokens: Sequence[Token], per: int) -> list[StripCell]:
    cells = []
    for index, start in enumerate(range(0, len(tokens), per)):
        part = tokens[start : start + per]
        scored = [t.logprob for t in part if t.counted and t.logprob is not None]
        if scored:
            low = min(scored)
            cells.append(StripCell(index, start, start + len(part), low, f"lp{bucket_of(low)}"))
        else:
            kind = "masked" if any(t.masked for t in part) else "missing"
            cells.append(StripCell(index, start, start + len(part), None, kind))
    return cells


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
