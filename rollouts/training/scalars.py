"""The job's TensorBoard directory as a third progress source, beside progress JSON and SB3
tables (`progress.py`), when the spec names one (`[job] tensorboard`, inside the run directory).

Each logged step becomes a point on the timesteps axis (SB3's TensorBoard logger logs at
`num_timesteps`), its metrics named as SB3's tables name them: the tag's last part
(`train/approx_kl` -> `approx_kl`), so the KL and value-function rules read them. A step is
added once a later step was logged (its tags come one record at a time), the last one when the
job has ended. A tick stdout already gave keeps stdout's point.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..store.scalars import ScalarStore, find_tensorboard
from .progress import Progress
from .spec import Spec

SOURCE = "tensorboard"


class TensorBoardSource:
    def __init__(self, spec: Spec, run_dir: Path) -> None:
        self.relative: str | None = getattr(spec, "tensorboard", None)
        self.run_dir = run_dir
        self.store: ScalarStore | None = None
        self.fed_through = -1  # the last step handed to the progress

    def _open(self) -> ScalarStore | None:
        if self.store is None and self.relative is not None:
            try:
                run_dir = self.run_dir.resolve(strict=True)
            except (OSError, RuntimeError):
                return None
            tb = find_tensorboard(run_dir, run_dir / self.relative)
            # Inside the run directory, links followed: the spec names a path in it, no more.
            if tb is not None and tb.root.is_relative_to(run_dir):
                self.store = ScalarStore(tb)
        return self.store

    def feed(self, progress: Progress, final: bool = False) -> int:
        """Hand the steps logged since the last call to `progress`; how many points came."""
        store = self._open()
        if store is None:
            return 0
        store.refresh()
        by_step: dict[int, dict[str, float | None]] = {}
        for tag in store.tag_names():
            key = tag.rpartition("/")[2]
            for step, value, _ in store.points(tag):
                if step > self.fed_through:
                    by_step.setdefault(step, {})[key] = value if math.isfinite(value) else None
        steps = sorted(by_step)
        if not final and steps:
            steps = steps[:-1]  # the newest step may still be getting its tags
        for step in steps:
            progress.add_point(step, by_step[step], SOURCE)
        if steps:
            self.fed_through = steps[-1]
        return len(steps)

    def source(self) -> dict[str, Any] | None:
        """What was found (for the training snapshot), or None when the spec names nothing."""
        if self.relative is None:
            return None
        store = self._open()
        if store is None:
            return {
                "found": False,
                "directory": self.relative,
                "files": [],
                "files_total": 0,
                "message": None,
            }
        return {**store.source(), "directory": self.relative}
