"""The pure parts of bench/bench_runs.py (issue 31's bench): the runs it writes and how it
judges its figures against the issue's targets. No server is started here."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bench import bench_runs


def write_template(root: Path, seed: str, steps: int = 3) -> Path:
    """A tiny run's rollout_result/: `steps` train steps and a non-step file."""
    out = root / "rollout_result"
    (out / "train").mkdir(parents=True)
    for step in range(steps):
        (out / "train" / f"{step}.jsonl").write_text(f'{{"t": "{seed}", "step": {step}}}\n')
    (out / "train" / "notes.jsonl").write_text('{"note": 1}\n')
    return out


@pytest.fixture
def templates(tmp_path: Path) -> list[Path]:
    return [write_template(tmp_path / f"t{k}", f"template-{k}") for k in range(2)]


def test_writer_lays_out_n_runs_round_robin(tmp_path: Path, templates: list[Path]) -> None:
    parent = tmp_path / "parent"
    size = bench_runs.write_runs(parent, 5, templates)
    assert sorted(p.name for p in parent.iterdir()) == [f"run-000{i}" for i in range(5)]
    for i in range(5):
        train = parent / f"run-000{i}" / "rollout_result" / "train"
        assert sorted(p.name for p in train.iterdir()) == [
            "0.jsonl",
            "1.jsonl",
            "2.jsonl",
            "notes.jsonl",
        ]
        # Round-robin: run i holds template i % 2's bytes.
        assert (train / "1.jsonl").read_bytes() == (templates[i % 2] / "train/1.jsonl").read_bytes()
    assert size == sum(p.stat().st_size for p in parent.rglob("*") if p.is_file())


def test_runs_changed_at_distinct_times_not_in_name_order(
    tmp_path: Path, templates: list[Path]
) -> None:
    parent = tmp_path / "parent"
    n = 12
    bench_runs.write_runs(parent, n, templates)
    changed = [
        max(p.stat().st_mtime_ns for p in (parent / f"run-{i:04d}").rglob("*.jsonl"))
        for i in range(n)
    ]
    assert len(set(changed)) == n
    newest_first = sorted(range(n), key=lambda i: -changed[i])
    assert newest_first != list(range(n))  # "most recently changed" is an order of its own
    assert newest_first != list(reversed(range(n)))


def test_a_runs_last_step_changed_last(tmp_path: Path, templates: list[Path]) -> None:
    run = tmp_path / "run"
    bench_runs.copy_run(templates[0], run, changed_ns=5_000_000_000_000)
    train = run / "rollout_result" / "train"
    times = [(train / f"{step}.jsonl").stat().st_mtime_ns for step in range(3)]
    assert times == sorted(times) and len(set(times)) == 3
    assert times[-1] == 5_000_000_000_000


@pytest.mark.parametrize(
    ("value", "target", "expected"),
    [
        (0.2, 0.3, "meets"),
        (0.3, 0.3, "MISSES"),  # "under" the target: equal misses
        (12.0, 10.0, "MISSES"),
        (None, 1.0, "MISSES"),  # no figure (not shown, timed out) never meets
    ],
)
def test_verdict(value: float | None, target: float, expected: str) -> None:
    assert bench_runs.verdict(value, target) == expected


def test_report_marks_each_figure_against_its_target() -> None:
    cold = bench_runs.Phase(first_s=0.4, all_read_s=30.0, indexing_probes=[0.1, 0.2, 0.9])
    warm = bench_runs.Phase(first_s=2.5, all_read_s=4.0, worker_rss=[40_000_000, 43_000_000])
    warm.new_run_measured = True
    args = argparse.Namespace(steps=25, samples=64, timeout=600.0)
    rows = {
        line[2:46].strip(): line[46:]
        for line in bench_runs.report(100, args, 1, cold, warm).splitlines()[2:]
    }
    first = rows["picker first answer (GET /, the request)"]
    assert "0.400 s meets" in first and "2.500 s MISSES" in first
    every = rows["every reading in, from process start"]
    assert "30.000 s " in every and "meets" not in every.split("4.000")[0]  # no cold target
    assert "4.000 s meets" in every
    assert "0.200 s meets" in rows["sample page while indexing, p50"]
    assert "0.900 s MISSES" in rows["sample page while indexing, max"]
    assert "n/a (not indexing)" in rows["sample page while indexing, p50"]
    assert "not shown" in rows["a new run folder listed (run-new)"]
    assert "83 MB (40 MB + 43 MB)" in rows["worker RSS once done (all workers)"]


def test_picker_html_states() -> None:
    indexing = '<table id="rv-runs" class="rv-table" data-order="asc" data-indexing>'
    done = '<table id="rv-runs" class="rv-table" data-order="asc">'
    row = '<tr class="rv-run-item" data-run="run-new">'
    assert bench_runs.html_indexing(indexing + row)
    assert not bench_runs.html_indexing(done + row + ' data-indexing="elsewhere"')
    assert bench_runs.html_lists(done + row, "run-new")
    assert not bench_runs.html_lists(done + row, "run-ne")
    assert bench_runs.api_lists({"runs": [{"name": "run-new"}]}, "run-new")
    assert not bench_runs.api_lists({"runs": [{"name": "run-0001"}]}, "run-new")


def test_int_list() -> None:
    assert bench_runs.int_list("100,300, 1000") == [100, 300, 1000]
    with pytest.raises(argparse.ArgumentTypeError):
        bench_runs.int_list("0,2")
