"""The shape of `stats.step_stats`'s result, and the check that some data has it.

Statistics read back from the disk cache are believed only when they are exactly what
`step_stats` writes: every key, every type, finite numbers, histograms whose bars all have edges
or values, counts that agree with the step's rows. Change `step_stats`, change this with it
(`tests/unit/test_diskcache.py` checks that the two agree).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import msgspec

from .flags import FLAGS

Count = Annotated[int, msgspec.Meta(ge=0)]
Number = float | None


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Summary(_Strict):
    n: Count
    mean: Number
    std: Number
    min: Number
    max: Number


class _Lengths(_Strict):
    n: Count
    mean: Number
    p50: Number
    p90: Number
    max: Number


class _Groups(_Strict):
    groups: Count
    zero_signal_share: Number
    success_share: Number
    mean_std: Number


class _Histogram(_Strict):
    kind: Literal["values", "bins"]
    counts: list[Count]
    values: list[float] | None = None
    edges: list[float] | None = None


class _Histograms(_Strict):
    reward: _Histogram
    response_length: _Histogram


class _FlagContext(_Strict):
    rules: dict[str, float]
    judged: Count
    answered: Count
    length_fence: list[float] | None
    counts: dict[str, Count]


class _Stats(_Strict):
    samples: Count
    invalid: Count
    status: dict[str, Count]
    truncation_rate: Number
    reward: _Summary
    reward_by_dataset: dict[str, _Summary]
    reward_components: dict[str, _Summary]
    response_length: _Lengths
    groups: _Groups
    histograms: _Histograms
    flags: _FlagContext


_stats_decoder = msgspec.msgpack.Decoder(_Stats)
_encoder = msgspec.msgpack.Encoder()


def validate_stats(stats: Any, rows: int, invalid: int) -> str | None:
    """Why `stats` is not what `step_stats` makes for `rows` records, `invalid` unreadable."""
    try:
        checked = _stats_decoder.decode(_encoder.encode(stats))
    except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
        return f"its statistics have another shape ({exc})"
    if not _all_finite(stats):
        return "its statistics hold a number that is not finite"
    if checked.invalid != invalid or checked.samples != rows - invalid:
        return "its statistics count other samples than its columns"
    flags = checked.flags
    if set(flags.counts) != set(FLAGS) or any(n > checked.samples for n in flags.counts.values()):
        return "its flag counts are not the flags' or count more than its samples"
    if flags.length_fence is not None and len(flags.length_fence) != 4:
        return "its length fence is not four numbers"
    for name, histogram in (
        ("reward", checked.histograms.reward),
        ("response_length", checked.histograms.response_length),
    ):
        if histogram.kind == "values":
            fits = histogram.values is not None and len(histogram.values) == len(histogram.counts)
        else:
            edges = histogram.edges
            fits = edges is not None and len(edges) == len(histogram.counts) + 1
        if not fits:
            return f"its {name} histogram has bars without edges or values"
    return None


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_finite(v) for v in value)
    return True
