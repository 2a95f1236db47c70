"""Flags for degenerate samples: the one set of rules the pages, the JSON and the terminal share.

Each flag has a one-line reason that states its numbers:

- `repeats`: the response ends in a cycle repeated `loop_repeats` times or more over
  `loop_chars` characters or more, or `repeated_share` of its text or more is sentences and
  lines that occur three times or more;
- `mixed_script`: `script_share` of its prose or more (and `script_units` units or more) is in
  a second writing system; code, maths, quoted text and block quotes are not prose;
- `no_answer`: no final answer (`\\boxed{}`, `<answer>`) where `answer_share` or more of the
  step's other judged samples have one (empty and cut responses are judged by their own flags);
- `reward_disagrees`: the reward says right (`reward_right_at` or more) and the answer does not
  match the label, or the reward says wrong and it does;
- `empty`: the response is missing, null or only whitespace;
- `cut`: the response was cut at the length limit (status "truncated", as everywhere);
- `outlier_length`: response_length beyond Tukey's far-out fences of the step, `length_fence`
  interquartile ranges below the first quartile or above the third, the range taken as at least
  half the third quartile (the quartiles leave out cut and empty responses, as the flag does).

What each response is judged by is measured once, in the column pass (`measures.py`); the
thresholds apply here, so changing them costs no re-read. A step's flag context (the answer
share, the length fences, the counts) is part of its statistics (`stats.step_stats`).
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .columns import Columns
from .errors import BadRequest
from .measures import (
    AGREES,
    ANSWERED,
    DISAGREES,
    EMPTY,
    LOOP_FLOOR_CHARS,
    LOOP_FLOOR_REPEATS,
    NOT_TEXT,
    REPEAT_FLOOR_SHARE,
    REPEAT_MIN_COUNT,
    SCRIPT_FLOOR_SHARE,
    SCRIPT_FLOOR_UNITS,
)
from .numbers import format_number

FLAGS = (
    "repeats",
    "mixed_script",
    "no_answer",
    "reward_disagrees",
    "empty",
    "cut",
    "outlier_length",
)
FLAG_BIT = {name: 1 << i for i, name in enumerate(FLAGS)}
TRUNCATED = "truncated"  # the status of a response cut at the length limit
# The length fences' interquartile range is taken as at least this share of the third
# quartile: in a step of near-equal lengths (198 to 200 tokens) a 217-token response is no
# outlier, and Tukey's fences alone would say it is.
LENGTH_MIN_IQR = 0.5


@dataclass(frozen=True, slots=True)
class FlagRules:
    """The flags' thresholds (the `ROLLOUTS_FLAGS` setting overrides any of them)."""

    loop_repeats: int = 5
    loop_chars: int = 200
    repeated_share: float = 0.5
    script_share: float = 0.05
    script_units: int = 10
    answer_share: float = 0.5
    reward_right_at: float = 0.5
    length_fence: float = 3.0

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}  # asdict: 10x slower

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None) -> FlagRules:
        """The rules with `values` over the defaults; ValueError naming what is wrong."""
        if values is None:
            return cls()
        if not isinstance(values, Mapping):
            raise ValueError("must be a dict of thresholds")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ValueError(
                f"unknown threshold(s) {', '.join(map(repr, unknown))}; known: {', '.join(fields)}"
            )
        rules = dataclasses.replace(cls(), **values)
        rules.check()
        return rules

    def check(self) -> None:
        """ValueError when a threshold is of the wrong type or below what the measures keep."""
        for name, value in self.as_dict().items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value!r}")
        floors = {
            "loop_repeats": LOOP_FLOOR_REPEATS,
            "loop_chars": LOOP_FLOOR_CHARS,
            "repeated_share": REPEAT_FLOOR_SHARE,
            "script_share": SCRIPT_FLOOR_SHARE,
            "script_units": SCRIPT_FLOOR_UNITS,
            "length_fence": 0.5,
            "answer_share": 0.0,
        }
        for name, floor in floors.items():
            if getattr(self, name) < floor:
                raise ValueError(f"{name} must be at least {floor}, got {getattr(self, name)!r}")
        for name in ("repeated_share", "script_share", "answer_share"):
            if getattr(self, name) > 1:
                raise ValueError(f"{name} is a share: at most 1, got {getattr(self, name)!r}")


DEFAULT_RULES = FlagRules()


def parse_flag(name: str | None) -> str | None:
    """A `flag=` query value: None for none, BadRequest for an unknown flag."""
    if not name:
        return None
    if name not in FLAGS:
        raise BadRequest(f"unknown flag {name!r}; the flags are: {', '.join(FLAGS)}")
    return name


# -- a step ---------------------------------------------------------------------------------
def flag_context(columns: Columns, invalid: Collection[int], rules: FlagRules) -> dict[str, Any]:
    """What judging one sample needs from its whole step, with the step's count of each flag:
    the statistics' "flags" entry (plain JSON, kept in the disk cache)."""
    rows = [r for r in range(columns.rows) if r not in invalid]
    bits = columns.text_bits
    judged = answered = 0
    cut = _cut_rows(columns)
    for r in rows:
        if not bits[r] & (EMPTY | NOT_TEXT) and r not in cut:
            judged += 1
            answered += bool(bits[r] & ANSWERED)
    lengths = columns.numeric.get("response_length")
    fence = None
    if lengths is not None:  # the lengths the flag judges (cut and empty responses aside)
        finite = sorted(
            v
            for r in rows
            if math.isfinite(v := lengths[r]) and not bits[r] & EMPTY and r not in cut
        )
        if finite:
            q1 = finite[max(0, math.ceil(len(finite) / 4) - 1)]
            q3 = finite[max(0, math.ceil(len(finite) * 3 / 4) - 1)]
            if q3 > 0:
                spread = rules.length_fence * max(q3 - q1, q3 * LENGTH_MIN_IQR)
                fence = [q1, q3, q1 - spread, q3 + spread]
    context: dict[str, Any] = {
        "rules": rules.as_dict(),
        "judged": judged,
        "answered": answered,
        "length_fence": fence,
        "counts": dict.fromkeys(FLAGS, 0),
    }
    marks = flag_marks(columns, invalid, context, rules)
    counts = context["counts"]
    for r in rows:
        mark = marks[r]
        if mark:
            for name, bit in FLAG_BIT.items():
                if mark & bit:
                    counts[name] += 1
    return context


def flag_marks(
    columns: Columns, invalid: Collection[int], context: Mapping[str, Any], rules: FlagRules
) -> array:
    """Each row's flags as bits (`FLAG_BIT`); 0 for unreadable rows. The same judgement as
    `row_flags`, one flag at a time over the rows (a 300,000-row step in a fraction of a second)."""
    rows = columns.rows
    marks = array("H", bytes(2 * rows))
    bits = columns.text_bits
    if len(bits) < rows:
        bits = bits + array("B", [NOT_TEXT]) * (rows - len(bits))
    cut = _cut_rows(columns)

    def mark(name: str, chosen: Any) -> None:
        bit = FLAG_BIT[name]
        for r in chosen:
            if r not in invalid:
                marks[r] |= bit

    mark("cut", cut)
    mark("empty", [r for r in range(rows) if bits[r] & EMPTY])
    for r, measures in columns.measures.items():
        if r < rows and not bits[r] & EMPTY:
            if _loops(measures, rules) or _mostly_repeats(measures, rules):
                mark("repeats", (r,))
            if _mixed(measures, rules):
                mark("mixed_script", (r,))
    judged, answered = context.get("judged") or 0, context.get("answered") or 0
    if answered and judged > 1 and answered / (judged - 1) >= rules.answer_share:
        skip = ANSWERED | EMPTY | NOT_TEXT
        mark("no_answer", [r for r in range(rows) if not bits[r] & skip and r not in cut])
    reward = columns.numeric.get("reward")
    if reward is not None:
        right_at = rules.reward_right_at
        mark(
            "reward_disagrees",
            [
                r
                for r in range(rows)
                if bits[r] & (AGREES | DISAGREES)
                and not bits[r] & (EMPTY | NOT_TEXT)
                and math.isfinite(reward[r])
                and (reward[r] >= right_at) == bool(bits[r] & DISAGREES)
            ],
        )
    fence = context.get("length_fence")
    lengths = columns.numeric.get("response_length")
    if fence and lengths is not None:
        low, high = fence[2], fence[3]
        mark(
            "outlier_length",
            [
                r
                for r in range(rows)
                if (lengths[r] < low or lengths[r] > high) and r not in cut and not bits[r] & EMPTY
            ],
        )
    return marks


def row_flags(
    columns: Columns, row: int, context: Mapping[str, Any], rules: FlagRules
) -> list[dict[str, str]]:
    """One sample's flags, each {"name", "reason"}, in FLAGS order."""
    cut = _is_cut(columns, row)
    mark = _mark(columns, row, context, rules, cut)
    return [
        {"name": name, "reason": _reason(name, columns, row, context, rules)}
        for name in FLAGS
        if mark & FLAG_BIT[name]
    ]


def _mark(columns: Columns, r: int, context: Mapping[str, Any], rules: FlagRules, cut: bool) -> int:
    bits = columns.text_bits[r] if r < len(columns.text_bits) else NOT_TEXT
    mark = 0
    if cut:
        mark |= FLAG_BIT["cut"]
    if bits & EMPTY:
        return mark | FLAG_BIT["empty"]
    measures = columns.measures.get(r)
    if measures is not None:
        if _loops(measures, rules) or _mostly_repeats(measures, rules):
            mark |= FLAG_BIT["repeats"]
        if _mixed(measures, rules):
            mark |= FLAG_BIT["mixed_script"]
    judged, answered = context.get("judged") or 0, context.get("answered") or 0
    text = not bits & NOT_TEXT
    others_answer = answered and judged > 1 and answered / (judged - 1) >= rules.answer_share
    if text and not cut and not bits & ANSWERED and others_answer:
        mark |= FLAG_BIT["no_answer"]
    reward = _reward(columns, r)
    checked = text and bits & (AGREES | DISAGREES)
    if (
        checked
        and reward is not None
        and (reward >= rules.reward_right_at) == bool(bits & DISAGREES)
    ):
        mark |= FLAG_BIT["reward_disagrees"]
    fence = context.get("length_fence")
    lengths = columns.numeric.get("response_length")
    if fence and lengths is not None and not cut:
        length = lengths[r]
        if math.isfinite(length) and not fence[2] <= length <= fence[3]:
            mark |= FLAG_BIT["outlier_length"]
    return mark


def _loops(measures: Mapping[str, list], rules: FlagRules) -> bool:
    loop = measures.get("loop")
    return (
        loop is not None and loop[1] >= rules.loop_repeats and loop[0] * loop[1] >= rules.loop_chars
    )


def _mostly_repeats(measures: Mapping[str, list], rules: FlagRules) -> bool:
    repeat = measures.get("repeat")
    return repeat is not None and repeat[0] >= rules.repeated_share


def _mixed(measures: Mapping[str, list], rules: FlagRules) -> bool:
    script = measures.get("script")
    return (
        script is not None and script[0] >= rules.script_share and script[3] >= rules.script_units
    )


def _reward(columns: Columns, r: int) -> float | None:
    col = columns.numeric.get("reward")
    if col is None:
        return None
    value = col[r]
    return value if math.isfinite(value) else None


def _cut_rows(columns: Columns) -> set[int]:
    codes = columns.categorical.get("status")
    if codes is None or TRUNCATED not in columns.categories["status"]:
        return set()
    code = columns.categories["status"].index(TRUNCATED)
    return {r for r, c in enumerate(codes) if c == code}


def _is_cut(columns: Columns, r: int) -> bool:
    codes = columns.categorical.get("status")
    if codes is None or r >= len(codes) or codes[r] < 0:
        return False
    return columns.categories["status"][codes[r]] == TRUNCATED


def _reason(
    name: str, columns: Columns, r: int, context: Mapping[str, Any], rules: FlagRules
) -> str:
    n = format_number
    measures = columns.measures.get(r) or {}
    if name == "repeats":
        loop, repeat = measures.get("loop"), measures.get("repeat")
        said = []
        if loop and _loops(measures, rules):
            said.append(f"ends in a {n(loop[0])}-character cycle repeated {n(loop[1])} times")
        if repeat and _mostly_repeats(measures, rules):
            said.append(
                f"{_percent(repeat[0])} of the text is {n(repeat[1])} sentence(s) that occur "
                f"{REPEAT_MIN_COUNT} times or more (one {n(repeat[2])} times)"
            )
        return "; ".join(said)
    if name == "mixed_script":
        share, main, second, units = measures["script"]
        unit = "characters" if second == "CJK" else "words"
        return (
            f"{_percent(share)} of the prose is not {main} ({n(units)} {second} {unit}; "
            f"the limit is {_percent(rules.script_share)})"
        )
    if name == "no_answer":
        judged, answered = context["judged"], context["answered"]
        return (
            f"no \\boxed{{}} or <answer> found; {n(answered)} of the step's {n(judged)} judged "
            f"samples have one ({_percent(answered / judged)})"
        )
    if name == "reward_disagrees":
        reward = _reward(columns, r)
        bits = columns.text_bits[r]
        if bits & DISAGREES:
            return (
                f"reward {n(reward)} says right (≥ {n(rules.reward_right_at)}) but the answer "
                "does not match the label"
            )
        return (
            f"reward {n(reward)} says wrong (< {n(rules.reward_right_at)}) but the answer "
            "matches the label"
        )
    if name == "empty":
        return "the response is missing, null or only whitespace"
    if name == "cut":
        lengths = columns.numeric.get("response_length")
        length = lengths[r] if lengths is not None else math.nan
        if math.isfinite(length):
            return f"cut at the length limit (status truncated, {n(length)} tokens)"
        return "cut at the length limit (status truncated)"
    if name == "outlier_length":
        q1, q3, low, high = context["length_fence"]
        length = columns.numeric["response_length"][r]
        side, bound = ("above", high) if length > high else ("below", low)
        return (
            f"response_length {n(length)} is {side} the step's fence {n(bound)} "
            f"(quartiles {n(q1)} and {n(q3)}, {n(rules.length_fence)} x IQR, the IQR "
            f"at least {_percent(LENGTH_MIN_IQR)} of the third quartile)"
        )
    raise KeyError(name)


def _percent(share: float) -> str:
    return f"{format_number(round(share * 100, 1))}%"


def flag_rates(stats: Mapping[str, Any]) -> dict[str, float | None]:
    """Each flag's share of a step's readable samples (the trends' `flag.<name>` series)."""
    flags = stats.get("flags") or {}
    counts = flags.get("counts") or {}
    samples = stats.get("samples") or 0
    return {name: (counts.get(name, 0) / samples if samples else None) for name in FLAGS}
