"""Per-step history across a bucket, the disk cache it survives restarts with, and range filters."""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path

import pytest

from rollouts.store import (
    BadRequest,
    Catalog,
    Selection,
    StepIndex,
    ValueRange,
    find_runs,
    history,
)
from rollouts.store.cards import metric_cards
from rollouts.store.disk.cache import DiskCache, default_directory
from rollouts.store.history import History
from rollouts.store.reading import convergence, metrics_of, series
from rollouts.store.stats import group_rows, group_table, step_stats
from tests.support.data import sample


def step_lines(rewards: list[float], truncated: int = 0) -> list[dict]:
    """Samples with these rewards, in groups of two; the first `truncated` are truncated."""
    return [
        sample(
            i, reward=r, status="truncated" if i < truncated else "completed", group_index=i // 2
        )
        for i, r in enumerate(rewards)
    ]


PROCESSES = 2  # what a 2-core machine gets by default


def history_of(root: Path, disk: DiskCache | None = None):
    catalog = Catalog(root, disk=disk)
    return catalog, History(catalog, "train", PROCESSES).wait(timeout=30)


def test_history_has_one_point_per_step_in_step_order(write_step, tmp_path):
    rewards = {0: [0.0, 0.0, 1.0, 0.0], 2: [1.0, 0.0, 1.0, 1.0], 10: [1.0, 1.0, 1.0, 1.0]}
    for step, values in rewards.items():
        write_step("train", step, step_lines(values, truncated=step // 5))
    _, snapshot = history_of(tmp_path / "data")
    assert snapshot.done and snapshot.total == 3 and snapshot.failed == {}
    assert [p.step for p in snapshot.points] == [0, 2, 10]
    assert series(snapshot.points, "reward_mean") == [sum(v) / 4 for v in rewards.values()]
    assert series(snapshot.points, "truncation_rate") == [0.0, 0.0, 0.5]
    # Step 10: groups (1, 1) and (1, 1) are both all-equal: no signal at all.
    assert snapshot.points[-1].metrics["zero_signal_share"] == 1.0
    assert snapshot.points[-1].metrics["status.truncated"] == 0.5


def test_many_steps_are_decoded_on_processes_to_the_same_numbers(write_step, tmp_path):
    count = history.POOL_MIN_STEPS + 2
    for step in range(count):
        write_step("train", step, step_lines([float(i % (step + 2) == 0) for i in range(6)]))
    catalog, snapshot = history_of(tmp_path / "data", DiskCache(tmp_path / "cache"))
    assert [p.step for p in snapshot.points] == list(range(count))
    for point in snapshot.points:
        index = catalog.open_step("train", point.filename)
        expected = metrics_of(step_stats(index.ensure_columns(), index.invalid))
        assert point.metrics == expected
    # The pool processes filled the disk cache as they went.
    assert len(list((tmp_path / "cache").glob("*.msgpack"))) == count


def test_metrics_flatten_datasets_components_and_statuses(write_step):
    path = write_step(
        "eval",
        0,
        [
            sample(0, reward=1.0, dataset="gsm8k"),
            sample(1, reward=0.0, dataset="gsm8k"),
            sample(2, reward=0.5, dataset="math"),
            sample(3, reward={"acc": 1.0, "format": 0.5}, dataset="math", status="aborted"),
        ],
    )
    catalog = Catalog(path.parent.parent)
    index = catalog.open_step("eval", "0.jsonl")
    metrics = metrics_of(step_stats(catalog.columns(index), index.invalid))
    assert metrics["dataset.gsm8k"] == 0.5 and metrics["dataset.math"] == 0.5
    assert metrics["reward.acc"] == 1.0 and metrics["reward.format"] == 0.5
    assert metrics["status.completed"] == 0.75 and metrics["status.aborted"] == 0.25
    assert metrics["samples"] == 4


def test_a_new_and_a_grown_step_are_picked_up_and_a_removed_one_dropped(write_step, tmp_path):
    write_step("train", 0, step_lines([0.0, 1.0]))
    first = write_step("train", 1, step_lines([1.0, 1.0]))
    catalog = Catalog(tmp_path / "data")
    bucket = History(catalog, "train", PROCESSES)
    snapshot = bucket.wait(timeout=30)
    assert series(snapshot.points, "samples") == [2, 2]
    with first.open("a") as f:  # step 1 grows by two samples of reward 0
        f.write("".join(json.dumps(s) + "\n" for s in step_lines([0.0, 0.0])))
    write_step("train", 2, step_lines([0.5]))
    snapshot = bucket.wait(timeout=30)
    assert [p.step for p in snapshot.points] == [0, 1, 2]
    assert series(snapshot.points, "samples") == [2, 4, 1]
    assert series(snapshot.points, "reward_mean") == [0.5, 0.5, 0.5]
    (tmp_path / "data" / "train" / "0.jsonl").unlink()
    snapshot = bucket.wait(timeout=30)
    assert [p.step for p in snapshot.points] == [1, 2]


def test_a_step_that_cannot_be_read_is_reported_and_the_rest_still_count(
    write_step, tmp_path, monkeypatch
):
    write_step("train", 0, step_lines([1.0]))
    write_step("train", 1, step_lines([0.0]))
    write_step("train", 2, step_lines([0.5]))
    build = StepIndex.build

    def failing_disk(path, name, records=None):  # an I/O error we cannot make for real
        if path.name == "1.jsonl":
            raise OSError(errno.EIO, "Input/output error")
        return build(path, name, records)

    monkeypatch.setattr(StepIndex, "build", failing_disk)
    _, snapshot = history_of(tmp_path / "data")
    assert [p.step for p in snapshot.points] == [0, 2]
    # Named as pages name the step, with the reason and never the OSError's path.
    assert snapshot.failed == {"1.jsonl": "train/1.jsonl cannot be read: input/output error"}
    assert snapshot.done


def test_disk_cache_lets_a_new_process_skip_reading_the_steps(write_step, tmp_path):
    for step in range(3):
        write_step("train", step, step_lines([float(step), 1.0]))
    disk = DiskCache(tmp_path / "cache")
    _, first = history_of(tmp_path / "data", disk)
    assert len(list((tmp_path / "cache").glob("*.msgpack"))) == 3
    # A "restarted" catalog over the same files must not decode them: garble every byte but
    # the newlines, keeping each file's identity (size and mtime), so only the cache can tell.
    for step in range(3):
        path = tmp_path / "data" / "train" / f"{step}.jsonl"
        stat = path.stat()
        path.write_bytes(bytes(b if b == 10 else 120 for b in path.read_bytes()))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    _, second = history_of(tmp_path / "data", DiskCache(tmp_path / "cache"))
    assert [p.metrics for p in second.points] == [p.metrics for p in first.points]


def test_a_restarted_viewers_first_snapshot_holds_what_the_disk_cache_has(write_step, tmp_path):
    for step in range(3):
        write_step("train", step, step_lines([float(step), 1.0]))
    write_step("train", 7, step_lines([0.5]))
    disk = DiskCache(tmp_path / "cache")
    _, first = history_of(tmp_path / "data", disk)
    (tmp_path / "data" / "train" / "7.jsonl").write_text(json.dumps(sample(0, reward=0.25)) + "\n")
    restarted = History(Catalog(tmp_path / "data", disk=DiskCache(tmp_path / "cache")), "train")
    snapshot = restarted.snapshot(disk_budget_s=60)
    # Everything the cache holds is in the first answer; only the rewritten step is pending.
    assert [p.step for p in snapshot.points] == [0, 1, 2]
    assert [p.metrics for p in snapshot.points] == [p.metrics for p in first.points[:3]]
    assert (snapshot.total, snapshot.pending) == (4, 1)
    assert restarted.wait(timeout=30).points[-1].metrics["reward_mean"] == 0.25
    # Without a budget the answer goes out before any read, as before.
    cold = History(Catalog(tmp_path / "data", disk=DiskCache(tmp_path / "cache")), "train")
    assert cold.snapshot().points == [] and cold.wait(timeout=30).done


def test_disk_cache_misses_when_the_file_changed_and_ignores_garbage(write_step, tmp_path):
    path = write_step("train", 0, step_lines([1.0, 1.0]))
    disk = DiskCache(tmp_path / "cache")
    catalog = Catalog(tmp_path / "data", disk=disk)
    index = catalog.open_step("train", "0.jsonl")
    catalog.columns(index)
    assert disk.load(path, index.identity) is not None
    path.write_text("".join(json.dumps(s) + "\n" for s in step_lines([0.0, 0.0, 0.0])))
    fresh = Catalog(tmp_path / "data", disk=disk)
    index = fresh.open_step("train", "0.jsonl")
    assert disk.load(path, index.identity) is None
    assert fresh.stats(index)["reward"]["mean"] == 0.0
    for entry in (tmp_path / "cache").glob("*.msgpack"):
        entry.write_bytes(b"\x00garbage")
    assert disk.load(path, index.identity) is None  # a miss, not an error


def test_disk_columns_are_adopted_for_sorting_without_decoding(write_step, tmp_path, monkeypatch):
    write_step("train", 0, [sample(i, reward=float(i % 3)) for i in range(9)])
    disk = DiskCache(tmp_path / "cache")
    catalog = Catalog(tmp_path / "data", disk=disk)
    catalog.columns(catalog.open_step("train", "0.jsonl"))

    def no_decoding(self, f):
        raise AssertionError("decoded the step again instead of using the disk cache")

    monkeypatch.setattr(StepIndex, "_extend_columns", no_decoding)
    restarted = Catalog(tmp_path / "data", disk=disk)
    index = restarted.open_step("train", "0.jsonl")
    restarted.columns(index)
    assert index.columns_ready
    assert list(restarted.ordering(index, Selection("reward", descending=True))) == [
        2,
        5,
        8,
        1,
        4,
        7,
        0,
        3,
        6,
    ]
    assert restarted.stats(index)["samples"] == 9


def test_disk_cache_is_never_inside_the_data_dir(write_step, tmp_path, caplog):
    write_step("train", 0, step_lines([1.0]))
    inside = DiskCache(tmp_path / "data" / "cache")
    assert inside.refuses(tmp_path / "data")
    catalog = Catalog(tmp_path / "data", disk=inside)
    assert catalog.disk is None
    catalog.columns(catalog.open_step("train", "0.jsonl"))
    assert not (tmp_path / "data" / "cache").exists()
    assert DiskCache(tmp_path / "elsewhere").refuses(tmp_path / "data") is None


def test_default_directory_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_directory() == tmp_path / "relax-rollout-viewer" / "steps"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_directory() == Path.home() / ".cache" / "relax-rollout-viewer" / "steps"


def test_cards_give_latest_delta_and_flag_a_drop_beyond_the_noise():
    class P:  # the two fields metric_cards() reads
        def __init__(self, step: int, reward: float) -> None:
            self.step, self.metrics = step, {"reward_mean": reward}

    steady = [P(i, 0.5 + 0.01 * (i % 2)) for i in range(12)]  # noise about 0.01
    card = metric_cards(steady)[0]
    assert card["key"] == "reward_mean" and card["latest"] == 0.51
    assert card["delta"] == pytest.approx(0.01) and not card["abnormal"]
    assert [s["step"] for s in card["spark"]] == list(range(12))
    dropped = [*steady, P(12, 0.3)]
    card = metric_cards(dropped)[0]
    assert card["abnormal"] and card["delta"] == pytest.approx(0.3 - 0.51)
    assert "noise" in card["why"]
    rose = [*steady, P(12, 0.9)]  # a jump the good way is not abnormal
    assert not metric_cards(rose)[0]["abnormal"]
    # A steady climb of a neutral metric is not a jump, however large each step is.
    climbing = [P(i, 0.5 + 0.01 * (i % 2)) for i in range(12)]
    for point in climbing:
        point.metrics["response_length_mean"] = 400.0 + 60 * point.step + 5 * (point.step % 2)
    lengths = next(c for c in metric_cards(climbing) if c["key"] == "response_length_mean")
    # Steps 10 -> 11: 1000 -> 1065; the trend over the 10 steps before (1..10): 465 -> 1000.
    assert lengths["delta"] == pytest.approx(65)
    assert lengths["trend"] == pytest.approx((1000 - 465) / 9)
    assert not lengths["abnormal"]
    climbing[-1].metrics["response_length_mean"] += 200  # but a jump on top of it is
    assert next(c for c in metric_cards(climbing) if c["key"] == "response_length_mean")["abnormal"]


def test_convergence_reads_the_mean_reward_curve():
    class P:
        def __init__(self, step: int, reward: float) -> None:
            self.step = step
            self.metrics = {"reward_mean": reward, "truncation_rate": 0.1, "zero_signal_share": 0}

    assert convergence([])["reading"] == "waiting"
    assert convergence([P(i, 0.1 * i) for i in range(12)])["reading"] == "rising"
    assert convergence([P(i, 1 - 0.05 * i) for i in range(12)])["reading"] == "not rising"


def test_value_range_parses_prints_and_contains():
    half_open = ValueRange.parse("reward:[0.5,0.75)")
    assert (half_open.low, half_open.high, half_open.closed) == (0.5, 0.75, False)
    assert half_open.contains(0.5) and not half_open.contains(0.75)
    assert not half_open.contains(math.nan)
    closed = ValueRange.parse("response_length:[10, 20]")
    assert closed.contains(20.0) and str(closed) == "response_length:[10,20]"
    assert ValueRange.parse(str(half_open)) == half_open
    assert ValueRange("reward", 1.0, 1.0, True).describe() == "reward = 1"
    for bad in ("reward", "reward:(0,1)", "reward:[a,1)", "reward:[2,1)", "reward:[nan,1]"):
        with pytest.raises(BadRequest):
            ValueRange.parse(bad)


def test_range_filter_matches_the_histogram_bins_exactly(write_step, tmp_path):
    lengths = [1, 2, 3, 7, 7, 10, 11, 15, 20, 21, 30, 31, 40]
    write_step("train", 0, [sample(i, response_length=n) for i, n in enumerate(lengths)])
    catalog = Catalog(tmp_path / "data")
    index = catalog.open_step("train", "0.jsonl")
    hist = catalog.stats(index)["histograms"]["response_length"]
    assert hist["kind"] == "bins" and sum(hist["counts"]) == len(lengths)
    edges, last = hist["edges"], len(hist["counts"]) - 1
    for i, count in enumerate(hist["counts"]):
        value_range = ValueRange("response_length", edges[i], edges[i + 1], i == last)
        inside = catalog.ordering(index, Selection(range=value_range))
        assert len(inside) == count, (value_range, list(inside))
    with pytest.raises(BadRequest, match="range of 'status'"):
        catalog.ordering(index, Selection(range=ValueRange("status", 0, 1)))


def test_group_rows_and_table(write_step, tmp_path):
    records = [
        sample(0, reward=1.0, group_index=3),
        sample(1, reward=0.0, group_index=3),
        sample(2, reward=1.0, group_index=5),
        sample(3, reward=1.0, group_index=5),
        sample(4, reward=0.0, group_index=None),
    ]
    write_step("train", 0, records)
    catalog = Catalog(tmp_path / "data")
    index = catalog.open_step("train", "0.jsonl")
    columns = catalog.columns(index)
    assert group_rows(columns, index.invalid) == {3: [0, 1], 5: [2, 3]}
    table = {row["group"]: row for row in group_table(columns, index.invalid)}
    assert table[3]["mean"] == 0.5 and table[3]["zero_signal"] is False
    assert table[5]["zero_signal"] is True and table[5]["success"] is True


def test_find_runs_lists_run_folders_but_not_a_run_itself(tmp_path):
    for name in ("b-run", "a-run"):
        (tmp_path / "runs" / name / "rollout_result" / "train").mkdir(parents=True)
    (tmp_path / "runs" / "notes").mkdir()
    (tmp_path / "runs" / "flat").mkdir()
    (tmp_path / "runs" / "flat" / "3.jsonl").write_text("{}\n")
    runs = find_runs(tmp_path / "runs")
    assert list(runs) == ["a-run", "b-run", "flat"]
    assert find_runs(tmp_path / "runs" / "a-run") == {}
    assert find_runs(tmp_path / "runs" / "a-run" / "rollout_result") == {}


def test_an_unwritable_disk_cache_costs_nothing_but_one_warning(write_step, tmp_path, caplog):
    for step in range(3):
        write_step("train", step, step_lines([1.0, 0.0]))
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    with caplog.at_level("WARNING", logger="rollouts.store"):
        _, snapshot = history_of(tmp_path / "data", DiskCache(blocker / "cache"))
    assert snapshot.done and len(snapshot.points) == 3 and snapshot.failed == {}
    warnings = [r for r in caplog.records if "not using the disk cache" in r.getMessage()]
    assert len(warnings) == 1


def test_without_processes_many_steps_are_decoded_in_the_thread(write_step, tmp_path, monkeypatch):
    count = history.POOL_MIN_STEPS + 1
    for step in range(count):
        write_step("train", step, step_lines([1.0, float(step % 2)]))

    def no_processes(*args, **kwargs):  # a sandbox that forbids new processes
        raise OSError(errno.EPERM, "Operation not permitted")

    from rollouts.store import indexer

    indexer.reset_pool()  # the process's one pool: made again, which the sandbox forbids
    monkeypatch.setattr(indexer, "ProcessPoolExecutor", no_processes)
    _, snapshot = history_of(tmp_path / "data")
    assert snapshot.done and snapshot.failed == {}
    assert series(snapshot.points, "reward_mean") == [0.5 + 0.5 * (s % 2) for s in range(count)]
