"""What a TensorBoard directory's scalars were at one version: the one thing answers read.

`ScalarStore.refresh()` builds the next version beside the current one and publishes it whole
(one assignment), so an answer built from one snapshot has one version's tags, series, files
and message together, whatever a refresh in another thread does meanwhile. A snapshot's series
are never changed once published (the store copies a tag's series before changing it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Point = tuple[int, float, float]  # step, value, wall time
Series = dict[int, tuple[float, float]]  # step -> (value, wall time)


class ScalarSnapshot:
    __slots__ = ("_names", "_sorted", "files", "message", "series", "version")

    def __init__(
        self,
        version: int,
        series: Mapping[str, Series],
        files: tuple[dict[str, Any], ...],
        message: str | None,
    ) -> None:
        self.version = version  # grows whenever a scalar, a file or the message changed
        self.series = series
        self.files = files  # what `source.files` says of each file read
        self.message = message  # what was left out (the limit), or None
        self._names: list[str] | None = None
        self._sorted: dict[str, list[Point]] = {}  # filled as asked (two threads: same list)

    def tag_names(self) -> list[str]:
        if self._names is None:
            self._names = sorted(self.series)
        return self._names

    def points(self, tag: str) -> list[Point]:
        """The tag's points in step order (one per step); negative steps included."""
        cached = self._sorted.get(tag)
        if cached is None:
            series = self.series.get(tag, {})
            cached = self._sorted[tag] = [(s, v, w) for s, (v, w) in sorted(series.items())]
        return cached

    def tags(self) -> list[dict[str, Any]]:
        out = []
        for tag in self.tag_names():
            points = self.points(tag)
            out.append(
                {
                    "tag": tag,
                    "points": len(points),
                    "first_step": points[0][0] if points else None,
                    "last_step": points[-1][0] if points else None,
                }
            )
        return out

    def values_at(self, tag: str) -> dict[int, float]:
        """The tag's value by step."""
        return {step: value for step, (value, _) in self.series.get(tag, {}).items()}
