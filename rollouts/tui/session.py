"""What the terminal UI is looking at: bucket, step, ordering and sample, with no UI in it.

The app calls these methods from worker threads (opening and indexing a step can take a
second on a 1 GB file) and reads the results from its own thread; everything slow is in
`open_step` and `index_columns`, everything else is list arithmetic on the step index.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..presentation import compile_mask, format_bytes, with_verdict
from ..store import (
    EVERYTHING,
    FLAGS,
    Catalog,
    History,
    IndexCache,
    Selection,
    StepFile,
    StepIndex,
    StoreError,
    convergence,
    rank_of,
)

PREFERRED_BUCKET = "train"


class Session:
    """One data directory as the terminal UI browses it."""

    def __init__(
        self, data_dir: Path | str, mask_str: str | None, cache: IndexCache | None = None
    ) -> None:
        self.catalog = Catalog(data_dir, cache)
        self.mask = compile_mask(mask_str)
        buckets = self.catalog.buckets()
        self.bucket = PREFERRED_BUCKET if PREFERRED_BUCKET in buckets else buckets[0]
        self.steps: list[StepFile] = self.catalog.steps(self.bucket)
        self.step_pos = len(self.steps) - 1  # the latest step, as in the web viewer
        self.index: StepIndex | None = None
        # The sort and the dataset filter: the same selection the web reads from a query string.
        self.selection: Selection = EVERYTHING
        self.ordering: Sequence[int] = range(0)
        self.rank = 0
        self._at_top = False
        self._histories: dict[str, History] = {}  # each bucket's per-step metrics, for `reading`

    # -- is it learning? -----------------------------------------------------------------
    def reading(self, bucket: str) -> dict[str, Any] | None:
        """The bucket's convergence reading with its verdict, or None while its steps are still
        being read. The store's own reading: `visualize --tui` gives the app the web's instead
        (with the run's TensorBoard rules), so the terminal says what the trends page says."""
        history = self._histories.get(bucket)
        if history is None:
            history = self._histories[bucket] = History(self.catalog, bucket)
        snapshot = history.snapshot()
        return with_verdict(convergence(snapshot.points)) if snapshot.done else None

    # -- catalog -------------------------------------------------------------------------
    @property
    def buckets(self) -> list[str]:
        return self.catalog.buckets()

    @property
    def step(self) -> StepFile | None:
        return self.steps[self.step_pos] if 0 <= self.step_pos < len(self.steps) else None

    def step_label(self, step: StepFile) -> str:
        return f"Step {step.step} ({format_bytes(step.size_bytes)})"

    def next_bucket(self) -> str | None:
        """The bucket after the shown one (cycling); None when there is no other."""
        buckets = self.buckets
        if len(buckets) < 2:
            return None
        return buckets[(buckets.index(self.bucket) + 1) % len(buckets)]

    def move_step(self, delta: int) -> bool:
        """Choose the step `delta` places on; False (nothing changes) past either end."""
        target = self.step_pos + delta
        if not 0 <= target < len(self.steps):
            return False
        self.step_pos = target
        return True

    def switch_bucket(self, bucket: str) -> None:
        self.steps = self.catalog.steps(bucket)
        self.bucket = bucket
        self.step_pos = len(self.steps) - 1
        self.index = None
        self.selection = self.selection.filtered("dataset", None)

    def relist(self) -> None:
        """Pick up new steps (and new sizes), staying on the step being shown.

        When the shown bucket is gone (an empty rollout_result/ is bucket `default` until
        `train/` appears in it), show the bucket a fresh start would, on its latest step.
        """
        buckets = self.catalog.buckets()
        if self.bucket not in buckets:
            self.switch_bucket(PREFERRED_BUCKET if PREFERRED_BUCKET in buckets else buckets[0])
            return
        current = self.step
        self.steps = self.catalog.steps(self.bucket)
        if current is not None:
            for pos, step in enumerate(self.steps):
                if step.filename == current.filename:
                    self.step_pos = pos
                    return
        self.step_pos = min(max(self.step_pos, 0), len(self.steps) - 1)

    # -- the step ------------------------------------------------------------------------
    # `load_step` and `build_columns` are the slow parts and may run on any thread: they change
    # nothing here. The app applies their result with `show_step` / `reorder` on its own thread,
    # and only if the user still wants that step.
    def load_step(self, step_pos: int) -> StepIndex:
        """The step's index after the newline scan (fast); its columns come later."""
        if not 0 <= step_pos < len(self.steps):
            raise StoreError(f"bucket {self.bucket!r} has no step files yet")
        return self.catalog.open_step(self.bucket, self.steps[step_pos].filename)

    def show_step(self, step_pos: int, index: StepIndex) -> None:
        self.step_pos = step_pos
        self.index = index
        self._drop_missing_dataset()
        self.ordering = self._ordering()
        self.rank = 0
        # Until the columns exist the order is provisional (file order); when they arrive, a
        # user who has not moved yet belongs at the top of the real order, not at line 0.
        self._at_top = not index.columns_ready

    def build_columns(self, index: StepIndex) -> None:
        """Decode the columns (seconds on a 1 GB step), then the statistics the flags are
        judged by, so showing a sample's flags on the app's thread costs no pass over the step."""
        self.catalog.columns(index)
        self.catalog.stats(index)

    def reorder(self) -> None:
        """Recompute the ordering (columns arrived, sort or filter changed), keeping the sample."""
        position = self.position
        self._drop_missing_dataset()
        self.ordering = self._ordering()
        if self._at_top and self.columns_ready:
            self._at_top = False
            self.rank = 0
        else:
            self.go_to_position(position)

    @property
    def dataset(self) -> str | None:
        return self.selection.filter_values.get("dataset")

    def _drop_missing_dataset(self) -> None:
        """A dataset filter carries over to steps that have that dataset (known from columns)."""
        if self.dataset is not None and self.columns_ready and self.dataset not in self.datasets():
            self.selection = self.selection.filtered("dataset", None)

    def update_index(self, index: StepIndex) -> None:
        """A refreshed index of the same step (grown or rewritten file)."""
        self.index = index
        self.reorder()

    def columns_progress(self) -> tuple[int, int]:
        index = self.index
        if index is None:
            return 0, 0
        return index.columns_rows, len(index)

    @property
    def columns_ready(self) -> bool:
        return self.index is not None and self.index.columns_ready

    def _ordering(self) -> Sequence[int]:
        if self.index is None:
            return range(0)
        # File order until the columns exist (the app decodes them on a worker thread).
        return self.catalog.ordering(self.index, self.selection, wait=False)

    # -- ordering ------------------------------------------------------------------------
    def set_sort(self, sort_key: str) -> None:
        """Sort by a `Selection.sort_key` ("" for file order, "reward:desc")."""
        self.selection = self.selection.sorted_by(sort_key)
        self.reorder()

    def set_dataset(self, dataset: str | None) -> None:
        self.selection = self.selection.filtered("dataset", dataset)
        self.reorder()

    @property
    def flag(self) -> str | None:
        return self.selection.flag

    def set_flag(self, flag: str | None) -> None:
        """Only the samples with `flag` (None: every sample); applied once the columns exist."""
        self.selection = dataclasses.replace(self.selection, flag=flag)
        self.reorder()

    def flag_choices(self) -> list[tuple[str, str]]:
        """(label, flag) of "all samples" and of each flag, with the step's count once known."""
        counts: dict[str, int] = {}
        if self.index is not None and self.columns_ready:
            counts = self.catalog.stats(self.index)["flags"]["counts"]
        return [
            ("all samples", ""),
            *((f"{name} ({counts[name]})" if name in counts else name, name) for name in FLAGS),
        ]

    def flags(self) -> list[dict[str, str]] | None:
        """The shown sample's flags ({"name", "reason"}); None while the columns are decoded."""
        position = self.position
        if self.index is None or position is None:
            return []
        return self.catalog.flags_of(self.index, position)

    def next_flagged(self) -> bool | None:
        """Move to the next sample in the ordering that has a flag, wrapping around to the
        first; False when none has one, None while the columns are decoded (nothing moves)."""
        if self.index is None or not self.columns_ready:
            return None
        marks = self.catalog.flag_marks(self.index)
        total = self.total
        for step in range(1, total + 1):
            rank = (self.rank + step) % total
            if marks[self.ordering[rank]]:
                self._at_top = False
                self.rank = rank
                return True
        return False

    def sort_choices(self) -> list[tuple[str, str]]:
        """(label, sort key) of file order and of each numeric column both ways."""
        sorts = [EVERYTHING]
        if self.index is not None and self.index.columns is not None and self.columns_ready:
            for column in sorted(self.index.columns.numeric):
                sorts += [Selection(column), Selection(column, descending=True)]
        choices = [(s.sort_label, s.sort_key) for s in sorts]
        if (self.selection.sort_label, self.selection.sort_key) not in choices:
            choices.append((self.selection.sort_label, self.selection.sort_key))
        return choices

    def datasets(self) -> list[str]:
        """The step's datasets; while it is indexed, only the filter carried over (if any)."""
        columns = self.index.columns if self.index is not None else None
        if columns is None or not self.columns_ready:
            return [self.dataset] if self.dataset is not None else []
        return sorted(columns.categories.get("dataset", []))

    def keys(self, sample: dict[str, Any] | None = None) -> list[str]:
        """Every top-level key seen in the step (not just in one sample), in first-seen order."""
        columns = self.index.columns if self.index is not None else None
        keys = list(columns.keys) if columns is not None and self.columns_ready else []
        for key in sample or {}:
            if key not in keys:
                keys.append(key)
        return keys

    # -- moving --------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return len(self.ordering)

    @property
    def position(self) -> int | None:
        return self.ordering[self.rank] if 0 <= self.rank < len(self.ordering) else None

    def move(self, delta: int) -> bool:
        self._at_top = False
        rank = min(max(self.rank + delta, 0), self.total - 1)
        moved = rank != self.rank
        self.rank = max(rank, 0)
        return moved

    def go_to(self, rank: int) -> None:
        """1-based, clamped: typing 9999 means the last sample."""
        self._at_top = False
        self.rank = min(max(rank, 1), max(self.total, 1)) - 1

    def go_to_position(self, position: int | None) -> None:
        rank = rank_of(self.ordering, position) if position is not None else None
        self.rank = rank if rank is not None else 0

    def show_position(self, position: int) -> None:
        """Show the sample at line `position` (a search hit), dropping a dataset filter that
        leaves it out; the columns arriving later keep it (no jump back to the top)."""
        self._at_top = False
        if rank_of(self.ordering, position) is None and self.dataset is not None:
            self.set_dataset(None)
        self.go_to_position(position)

    def read(self) -> tuple[int, dict[str, Any], list[str]]:
        """(line number, fields, warnings) of the current sample; StoreError when it cannot be
        read. The warnings say what was replaced to show it (bad UTF-8, lone surrogates...)."""
        if self.index is None:
            raise StoreError("no step is open")
        position = self.position
        if position is None:
            raise StoreError(self.empty_message())
        sample = self.index.read(position)
        decoded = sample.decoded
        values = decoded.values()  # decoding may add warnings: read them after
        return sample.line, values, decoded.warnings

    def empty_message(self) -> str:
        name = f"step {self.step.step}" if self.step else "this step"
        if self.index is not None and len(self.index) and self.flag:
            return f"no sample of {name} is flagged {self.flag}" + (
                f" in dataset {self.dataset!r}" if self.dataset else ""
            )
        if self.index is not None and len(self.index) and self.dataset:
            return f"no sample of {name} has dataset {self.dataset!r}"
        if self.index is not None and len(self.index):
            return f"no line of {name} could be read"
        return f"{name} has no samples yet"
