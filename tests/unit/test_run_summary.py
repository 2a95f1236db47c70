"""A run's compact disk entry (rollouts/store/runsummary.py): kept and read back, refused when
it is of other rules, another bucket or version, or damaged; and `run_points` taking a step's
point from it only while the step's file is as it was, else from the step's own entry, else
decoding the file."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from rollouts.store import Catalog, FileIdentity, FlagRules, Point, StepIndex
from rollouts.store import runsummary as runsummary_module
from rollouts.store.disk import DiskCache, protect, served_roots
from rollouts.store.runsummary import load_points, run_points, save_points
from tests.support.data import relax_line, sample

REWARDS = {0: [0.0, 0.5], 1: [1.0, 1.0], 2: [0.25, 0.75]}


@pytest.fixture
def disk(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


@pytest.fixture
def catalog(tmp_path: Path, disk: DiskCache) -> Catalog:
    train = tmp_path / "data" / "train"
    train.mkdir(parents=True)
    for step, rewards in REWARDS.items():
        lines = [relax_line(sample(i, reward=r)) for i, r in enumerate(rewards)]
        (train / f"{step}.jsonl").write_text("".join(lines))
    return Catalog(tmp_path / "data", None, disk)


def rules_of(catalog: Catalog) -> dict[str, Any]:
    return catalog.flag_rules.as_dict()


def points_now(catalog: Catalog, known: dict[str, Point] | None = None) -> Any:
    return run_points(catalog, "train", catalog.steps("train"), known or {}, processes=1)


def made_point(step: int, **metrics: float | None) -> Point:
    identity = FileIdentity(7, 100 + step, 10 * step + 1, 1_700_000_000_000_000_000 + step)
    return Point(step, f"{step}.jsonl", identity.size, identity, dict(metrics))


def test_points_kept_are_read_back(disk, tmp_path):
    data_dir = tmp_path / "some run"
    rules = {"long": 100}
    points = [made_point(0, reward_mean=0.5, x=None), made_point(3, reward_mean=-1.25)]
    save_points(disk, data_dir, "train", rules, points)
    back = load_points(disk, data_dir, "train", rules)
    assert list(back) == ["0.jsonl", "3.jsonl"]
    assert back["0.jsonl"] == points[0]
    # A metric one step has and another not comes back as None for the other.
    assert back["3.jsonl"] == made_point(3, reward_mean=-1.25, x=None)
    assert load_points(disk, tmp_path / "another run", "train", rules) == {}


def test_an_entry_of_other_rules_another_bucket_or_version_is_no_points(
    disk, tmp_path, monkeypatch
):
    data_dir = tmp_path / "run"
    rules = {"long": 100}
    save_points(disk, data_dir, "train", rules, [made_point(0, reward_mean=0.5)])
    assert load_points(disk, data_dir, "train", rules)  # (the entry is there)
    assert load_points(disk, data_dir, "train", {"long": 99}) == {}
    assert load_points(disk, data_dir, "eval", rules) == {}
    monkeypatch.setattr(runsummary_module, "VERSION", runsummary_module.VERSION + 1)
    assert load_points(disk, data_dir, "train", rules) == {}  # written by the older version


def good_blob(disk: DiskCache, data_dir: Path) -> bytes:
    save_points(disk, data_dir, "train", {}, [made_point(0, a=1.0, b=2.0)])
    blob = disk.load_blob(data_dir, "run")
    assert blob is not None
    return blob


DAMAGE = {
    "garbage": lambda blob: b"\x00not msgpack at all",
    "empty": lambda blob: b"",
    "truncated": lambda blob: blob[: len(blob) // 2],
    "another shape": lambda blob: msgspec.msgpack.encode({"version": 1}),
    "wrong types": lambda blob: msgspec.msgpack.encode([1, "train", {}, ["a"], [["x"]]]),
    "values short of the keys": lambda blob: msgspec.msgpack.encode(
        [1, "train", {}, ["a", "b"], [[0, "0.jsonl", 1, 2, 3, 4, [1.0]]]]
    ),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_is_no_points_and_no_error(disk, tmp_path, damage):
    data_dir = tmp_path / "run"
    blob = good_blob(disk, data_dir)
    assert load_points(disk, data_dir, "train", {})
    disk.save_blob(data_dir, "run", DAMAGE[damage](blob))
    assert load_points(disk, data_dir, "train", {}) == {}


def test_every_step_is_decoded_once_then_read_from_the_run_s_entry(catalog, disk):
    first = points_now(catalog)
    assert (first.decoded, first.from_entries, first.busy, first.failed) == (3, 0, 0, {})
    assert [p.step for p in first.points] == [0, 1, 2]
    assert [p.metrics["reward_mean"] for p in first.points] == [0.25, 1.0, 0.5]
    rules = rules_of(catalog)
    save_points(disk, catalog.root, "train", rules, first.points)
    known = load_points(disk, catalog.root, "train", rules)
    again = points_now(catalog, known)
    assert (again.decoded, again.from_entries) == (0, 0)
    assert [p.metrics["reward_mean"] for p in again.points] == [0.25, 1.0, 0.5]


def test_a_known_point_is_taken_only_while_its_step_file_has_its_size_and_mtime(catalog):
    steps = catalog.steps("train")
    known = {}
    for s in steps:  # the files as they are now; only the marker says where a point came from
        identity = FileIdentity(0, 0, s.size_bytes, s.mtime_ns)
        known[s.filename] = Point(s.step, s.filename, s.size_bytes, identity, {"marker": 9.0})
    path = catalog.step_path("train", "1.jsonl")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))  # same size, another mtime
    found = points_now(catalog, known)
    assert [p.metrics.get("marker") for p in found.points] == [9.0, None, 9.0]
    assert found.decoded == 1  # no entry of its own either: read from the file


def test_a_step_missing_from_the_run_s_entry_comes_from_its_own(catalog, disk):
    first = points_now(catalog)  # every step's own entry is written on the way
    assert first.decoded == 3
    known = {p.filename: p for p in first.points if p.filename != "2.jsonl"}
    found = points_now(catalog, known)
    assert (found.decoded, found.from_entries) == (0, 1)
    assert [p.metrics["reward_mean"] for p in found.points] == [0.25, 1.0, 0.5]


def test_a_step_s_own_entry_of_other_flag_rules_is_decoded_again(catalog):
    assert points_now(catalog).decoded == 3
    catalog.flag_rules = FlagRules.from_mapping({"loop_repeats": 3})
    found = points_now(catalog)
    assert (found.decoded, found.from_entries) == (3, 0)


def test_an_unreadable_step_fails_with_a_message_that_holds_no_path(catalog, monkeypatch):
    real = StepIndex.build

    def build(path: Path, name: str, *args: Any) -> StepIndex:
        if Path(path).name == "1.jsonl":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, name, *args)

    monkeypatch.setattr(StepIndex, "build", build)
    found = points_now(catalog)
    assert [p.step for p in found.points] == [0, 2]
    assert list(found.failed) == ["1.jsonl"]
    message = found.failed["1.jsonl"]
    assert "train/1.jsonl" in message and "cannot be read" in message
    assert str(catalog.root.parent) not in message and "/tmp" not in message


def test_a_step_removed_since_the_listing_fails_with_its_name(catalog):
    steps = catalog.steps("train")
    catalog.step_path("train", "2.jsonl").unlink()
    found = run_points(catalog, "train", steps, {}, processes=1)
    assert [p.step for p in found.points] == [0, 1]
    assert "2.jsonl" in found.failed["2.jsonl"]
    assert str(catalog.root) not in found.failed["2.jsonl"]


def test_with_a_thousand_runs_served_a_disk_cache_access_walks_none_of_them(
    disk, tmp_path, monkeypatch
):
    """A folder of runs protects each run's data directory: a cache read, write or lock (one
    per step of every run) must not compare its directory with each of them, nor a pool
    process resolve them all again for each step."""
    for i in range(1000):
        protect(tmp_path / "runs" / f"run{i}")
    roots = served_roots()  # what a pool process is handed with each step
    DiskCache(disk.directory, roots).save_blob(tmp_path / "some run", "run", b"x")
    compared: list[Path] = []
    resolved: list[Path] = []
    for name, calls in (("is_relative_to", compared), ("relative_to", compared),
                        ("resolve", resolved)):  # fmt: skip
        real = getattr(Path, name)

        def counted(path: Path, *args: Any, real: Any = real, calls: list[Path] = calls) -> Any:
            calls.append(path)
            return real(path, *args)

        monkeypatch.setattr(Path, name, counted)
    cache = DiskCache(disk.directory, roots)
    assert cache.load_blob(tmp_path / "some run", "run") == b"x"
    cache.save_blob(tmp_path / "some run", "run", b"y")
    held = cache.try_lock(tmp_path / "some run")
    assert held is not None
    held.release()
    assert len(compared) < 50 and len(resolved) < 50
    # (and still refused inside any of them)
    assert DiskCache(tmp_path / "runs" / "run7" / "cache", roots).problem() is not None
    monkeypatch.undo()
    inside = DiskCache(tmp_path / "runs" / "run999" / "x", ["/nowhere"])
    assert inside.problem() is not None
