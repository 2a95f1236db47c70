"""A prompt across a bucket's steps, from the prompt-id column alone.

Each step's prompt columns (`promptentry.PromptColumns`: ids, line numbers, reward, length,
status, dataset; about 40 bytes a sample) are kept in the catalog's cache under the step's
identity, so the byte budget bounds them and a grown or rewritten step is read again. They come
from, in order: that cache, the step's own index when the viewer has it open with its columns,
the disk cache (one small read that skips labels and statistics), or the file itself (a private
index, saved to the disk cache on the way, so the next viewer has it). Finding a prompt in a
step is one `bytes.find` over its ids; sample bodies are never read.
"""

from __future__ import annotations

import hashlib
import math
import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, TypedDict, overload

from .catalog import Catalog
from .disk import PromptColumns, prompt_columns_of
from .errors import StoreError, unreadable
from .files import FileIdentity, StepFile
from .index import StepIndex
from .stats import step_stats

_ID_BYTES = array("Q").itemsize


@dataclass(frozen=True, slots=True)
class StepPrompts:
    """One step's prompt columns, for the file version `identity`."""

    step: int
    name: str  # the step as its file names it ("007")
    identity: FileIdentity
    columns: PromptColumns
    id_bytes: bytes  # the ids as bytes, which can be searched at memory speed

    def cache_nbytes(self) -> int:
        c = self.columns
        arrays = [c.prompt_ids, c.lines, *c.numeric.values(), *c.categorical.values()]
        total = sum(a.itemsize * len(a) for a in arrays) + len(self.id_bytes)
        return 512 + total + 48 * len(c.invalid)

    def rows_of(self, prompt_id: int) -> list[int]:
        """Readable rows holding `prompt_id`, in file order."""
        needle = array("Q", [prompt_id]).tobytes()
        data = self.id_bytes
        rows, at = [], data.find(needle)
        while at >= 0:
            if at % _ID_BYTES == 0:
                row = at // _ID_BYTES
                if row not in self.columns.invalid:
                    rows.append(row)
                at = data.find(needle, at + _ID_BYTES)
            else:  # straddling two ids: look again from the next id's start
                at = data.find(needle, at + _ID_BYTES - at % _ID_BYTES)
        return rows

    def number(self, name: str, row: int) -> float | None:
        col = self.columns.numeric.get(name)
        value = col[row] if col is not None else math.nan
        return value if math.isfinite(value) else None

    def category(self, name: str, row: int) -> str | None:
        codes = self.columns.categorical.get(name)
        code = codes[row] if codes is not None else -1
        return self.columns.categories[name][code] if code >= 0 else None


def step_prompts(catalog: Catalog, bucket: str, step: StepFile) -> StepPrompts:
    """The step's prompt columns as its file is now (see the module's docstring)."""
    # Keyed by the step's name in the catalog (`steps` checked it): a step unchanged since
    # (the size and time its listing just read) costs no system call at all.
    name = f"{catalog.root}/{bucket}/{step.filename}"
    key = "rollouts.prompts." + hashlib.sha1(os.fsencode(name), usedforsecurity=False).hexdigest()
    kept = catalog.cache.get(key)
    if isinstance(kept, StepPrompts) and (kept.identity.size, kept.identity.mtime_ns) == (
        step.size_bytes,
        step.mtime_ns,
    ):
        return kept
    path = catalog.step_path(bucket, step.filename)
    identity = FileIdentity.of(os.stat(path))
    columns = _from_open_index(catalog, path, identity)
    if columns is None and catalog.disk is not None:
        columns = catalog.disk.load_prompt_columns(path, identity)
    if columns is None:
        identity, columns = _from_file(catalog, path, f"{bucket}/{step.filename}")
    found = StepPrompts(step.step, step.name, identity, columns, columns.prompt_ids.tobytes())
    catalog.cache.set(key, found, None)
    return found


def _from_open_index(catalog: Catalog, path: Path, identity: FileIdentity) -> PromptColumns | None:
    """From the index the viewer has open (same key as `Catalog.open_step`), if decoded."""
    # The key `Catalog.open_step` keeps the step's index under.
    key = "rollouts.step." + hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest()
    index = catalog.cache.get(key)
    if not isinstance(index, StepIndex):
        return None
    with index.lock:
        if index.identity != identity or not index.columns_ready or index.columns is None:
            return None
        return prompt_columns_of(index.columns, index.lines, index.invalid)


def _from_file(catalog: Catalog, path: Path, name: str) -> tuple[FileIdentity, PromptColumns]:
    """Decode the step on a private index (hundreds of steps must not push the viewer's own
    indexes out of the shared cache), and keep its entry on disk for next time."""
    index = StepIndex.build(path, name)
    columns = index.ensure_columns()
    if catalog.disk is not None:
        catalog.disk.save(index, columns, step_stats(columns, index.invalid))
    return index.identity, prompt_columns_of(columns, index.lines, index.invalid)


@dataclass(frozen=True, slots=True)
class Appearance:
    step: int
    name: str
    position: int
    line: int
    reward: float | None
    status: str | None
    response_length: float | None
    dataset: str | None


class Appearances(Sequence[Appearance]):
    """Every appearance of a prompt, in step then file order, made only when asked for: a
    prompt in 60,000 samples costs its row numbers until a page of them is shown."""

    def __init__(self, parts: list[tuple[StepPrompts, list[int]]]) -> None:
        self._parts = parts  # each step holding the prompt, with its rows (file order)
        self._starts = list(accumulate((len(rows) for _, rows in parts), initial=0))

    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, index: int) -> Appearance: ...
    @overload
    def __getitem__(self, index: slice) -> list[Appearance]: ...
    def __getitem__(self, index: int | slice) -> Appearance | list[Appearance]:
        if isinstance(index, slice):
            return [self._make(i) for i in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError("appearance index out of range")
        return self._make(index % len(self))

    def index_of(self, name: str, position: int) -> int | None:
        """Where step `name`'s row `position` is among the appearances, or None."""
        for (prompts, rows), start in zip(self._parts, self._starts, strict=False):
            if prompts.name == name:
                at = bisect_left(rows, position)
                if at < len(rows) and rows[at] == position:
                    return start + at
        return None

    def _make(self, index: int) -> Appearance:
        part = bisect_right(self._starts, index) - 1
        prompts, rows = self._parts[part]
        row = rows[index - self._starts[part]]
        return Appearance(
            prompts.step,
            prompts.name,
            row,
            prompts.columns.lines[row],
            prompts.number("reward", row),
            prompts.category("status", row),
            prompts.number("response_length", row),
            prompts.category("dataset", row),
        )


class SkippedStep(TypedDict):
    """A step that could not be read (unreadable, or rewritten while read), and why."""

    step: int
    error: str


@dataclass(slots=True)
class Lineage:
    """A prompt in a bucket: `find_prompt`'s answer."""

    appearances: list[Appearance] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[SkippedStep] = field(default_factory=list)


@dataclass(slots=True)
class PromptPlaces:
    """`locate_prompt`'s answer: `Lineage` with the appearances made on demand, so a page of
    them costs a page."""

    appearances: Appearances
    steps: list[dict[str, Any]]
    skipped: list[SkippedStep]


def find_prompt(catalog: Catalog, bucket: str, prompt_id: int) -> Lineage:
    """Every appearance of the prompt in the bucket, as `locate_prompt`, made at once."""
    places = locate_prompt(catalog, bucket, prompt_id)
    return Lineage(list(places.appearances), places.steps, places.skipped)


def locate_prompt(catalog: Catalog, bucket: str, prompt_id: int) -> PromptPlaces:
    """Every appearance of the prompt in the bucket, in step then file order, and per step
    where it appears: its samples and their mean finite reward (the prompt's group). A step
    that cannot be read is skipped and named, so one bad file does not hide the rest."""
    parts: list[tuple[StepPrompts, list[int]]] = []
    steps: list[dict[str, Any]] = []
    skipped: list[SkippedStep] = []
    for step in catalog.steps(bucket):
        try:
            prompts = step_prompts(catalog, bucket, step)
        except StoreError as exc:  # the store's message names the step, never its path
            skipped.append({"step": step.step, "error": str(exc)})
            continue
        except OSError as exc:
            message = str(unreadable(f"{bucket}/{step.filename}", exc))
            skipped.append({"step": step.step, "error": message})
            continue
        rows = prompts.rows_of(prompt_id)
        if not rows:
            continue
        parts.append((prompts, rows))
        reward = prompts.columns.numeric.get("reward")
        values = [] if reward is None else [reward[row] for row in rows]
        rewards = [v for v in values if math.isfinite(v)]
        steps.append(
            {
                "step": step.step,
                "name": step.name,
                "samples": len(rows),
                "mean_reward": math.fsum(rewards) / len(rewards) if rewards else None,
            }
        )
    return PromptPlaces(Appearances(parts), steps, skipped)
