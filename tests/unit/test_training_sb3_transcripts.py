"""The parser and the reading on stdout recorded from real stable-baselines3 runs
(`tests/fixtures/sb3/`, written by its `record.py`; the versions are in each file's first line):
every table is a point, a progress JSON line at a rollout's end merges with the table at its
tick, percent and phases come from plain tables, a resumed run is a second attempt whose own
tables are kept, the value-function rule does not flap on a healthy run, and KL reads first."""

from __future__ import annotations

import json
import re
import threading
from itertools import pairwise
from pathlib import Path

import pytest

from rollouts.training.convergence import convergence
from rollouts.training.output import JobOutput
from rollouts.training.progress import Progress, effective
from rollouts.training.snapshot import progress_part

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sb3"
TICK = re.compile(r"^\|\s+total_timesteps\s+\|\s+(\d+)\s+\|", re.MULTILINE)
SB3_KEYS = {"approx_kl", "explained_variance", "value_loss", "policy_gradient_loss", "fps"}


def transcript(name: str) -> str:
    text = (FIXTURES / f"{name}.log").read_text()
    assert text.startswith("# recorded by tests/fixtures/sb3/record.py: stable-baselines3 ")
    return text


def fed(text: str) -> tuple[Progress, list[str]]:
    """The progress after every line (line n written at n seconds), and the reading after
    each new point."""
    progress, readings = Progress(), []
    for n, line in enumerate(text.splitlines()):
        before = progress.seq
        progress.feed(line, float(n))
        if progress.seq != before:
            points, attempts = progress.snapshot(), progress.running().attempts
            readings.append(convergence(effective(points, attempts), "ep_rew_mean")["reading"])
    progress.finish()
    return progress, readings


def flips(readings: list[str]) -> int:
    return sum(a != b for a, b in pairwise(readings))


def test_every_table_of_a_plain_run_is_a_point_with_sb3_s_diagnostics():
    text = transcript("plain")
    ticks = [int(t) for t in TICK.findall(text)]
    progress, _ = fed(text)
    points = progress.snapshot()
    assert [p.timesteps for p in points] == ticks and len(ticks) >= 40
    # SB3 logs train/ values from the second table on (its first dump precedes the first update)
    assert all(set(p.metrics) >= SB3_KEYS for p in points[1:])


def test_plain_tables_give_percent_eta_and_a_phase_per_iteration_with_the_spec_s_total():
    text = transcript("plain")
    learn = re.search(r"\.learn\((\d+)\)", text.splitlines()[0])
    assert learn is not None
    total = int(learn.group(1))
    progress, _ = fed(text)
    ticks = [int(t) for t in TICK.findall(text)]
    half = Progress()
    for n, line in enumerate(text.splitlines()):
        half.feed(line, float(n))
        if half.snapshot() and half.snapshot()[-1].timesteps >= total // 2:
            break
    part = progress_part(half, end=None, spec_total=total)
    assert part["total"] == total and part["fraction"] == pytest.approx(0.5, abs=0.05)
    assert part["throughput"] > 0 and part["eta_seconds"] > 0
    whole = progress_part(progress, end=None, spec_total=total)
    assert whole["fraction"] == ticks[-1] / total == 1.0
    names = [p["name"] for p in whole["phases"]]
    assert names == [f"iteration {n}" for n in range(1, len(ticks) + 1)]


def test_a_progress_line_at_each_rollout_end_merges_with_the_table_at_its_tick():
    text = transcript("json_at_rollout_end")
    json_ticks = [
        json.loads(line)["timesteps"] for line in text.splitlines() if line.startswith("{")
    ]
    table_ticks = [int(t) for t in TICK.findall(text)]
    assert set(json_ticks) & set(table_ticks)  # the recording shows the collision
    progress, _ = fed(text)
    points = progress.snapshot()
    assert [p.timesteps for p in points] == sorted(set(json_ticks) | set(table_ticks))
    merged = [p for p in points[1:] if p.timesteps in table_ticks]
    assert merged and all(set(p.metrics) >= SB3_KEYS for p in merged)
    assert all(p.source == "json" for p in merged)  # the JSON's own values win where both say


def test_the_value_function_rule_does_not_flap_on_a_healthy_run():
    text = transcript("plain")
    progress, readings = fed(text)
    evs = [p.metrics["explained_variance"] or 0.0 for p in progress.snapshot()[1:]]
    assert sum(v < 0 for v in evs) >= 3  # single updates below 0 do happen on this run
    assert flips(readings) <= 4 and readings[-1] == "rising"
    assert readings[-10:] == ["rising"] * 10
    final = convergence(progress.snapshot(), "ep_rew_mean")
    assert final["thresholds"]["explained_variance_window"] == 10
    assert any(
        n.startswith("value function: the median explained_variance of the last 10")
        for n in final["notes"]
    )
    assert any("per env step" in n for n in final["notes"])
    assert "per env step" in final["why"]


def test_kl_reads_first_from_the_second_point_of_a_blowup():
    progress, readings = fed(transcript("kl_blowup"))
    second = progress.snapshot()[1]
    assert (second.metrics["approx_kl"] or 0.0) > 0.05
    assert readings[0] == "warming up" and readings[1] == "kl too large"
    final = convergence(progress.snapshot(), "ep_rew_mean")
    assert final["reading"] == "kl too large" and final["numbers"]["approx_kl"] > 0.05


def read_resumed(tmp_path: Path, explicit: bool) -> JobOutput:
    meta = json.loads((FIXTURES / "resumed.json").read_text())
    (tmp_path / "stdout.log").write_bytes((FIXTURES / "resumed.log").read_bytes())
    output = JobOutput(tmp_path)
    if explicit:  # the job record's attempts, as a re-attached viewer reads them
        output.attempts_from(
            [
                {
                    "stdout_offset": meta["attempt_offsets"][1],
                    "start_timesteps": meta["start_timesteps"][1],
                    "resumed_from": "checkpoints/ppo_2048.zip",
                    "started_at": None,
                }
            ]
        )
    done = threading.Event()
    done.set()
    for reader in output.follow(tmp_path, done):
        reader.join(10)
    output.progress.finish()
    return output


@pytest.mark.parametrize("explicit", [True, False])
def test_a_resumed_run_is_a_second_attempt_with_its_own_first_tables(tmp_path, explicit):
    meta = json.loads((FIXTURES / "resumed.json").read_text())
    start, killed_at = meta["start_timesteps"][1], meta["killed_at"]
    text = (FIXTURES / "resumed.log").read_bytes()
    second_ticks = [int(t) for t in TICK.findall(text[meta["attempt_offsets"][1] :].decode())]
    output = read_resumed(tmp_path, explicit)
    points, attempts = output.progress.snapshot(), output.progress.running().attempts
    # explicit: the checkpoint's timesteps; found by the ticks going back: the first new tick
    assert [a["start_timesteps"] for a in attempts] == [0, start if explicit else second_ticks[0]]
    assert [p.timesteps for p in points if p.attempt == 1] == second_ticks
    first_max = max(p.timesteps for p in points if p.attempt == 0)
    assert second_ticks[0] < first_max <= killed_at  # the killed run's curve is kept
    part = progress_part(output.progress, end=None)
    assert part["timesteps"] == second_ticks[-1] and part["attempt"] == 1
    history = effective(points, attempts)  # the model's own: the killed run up to the resume
    assert [p.timesteps for p in history] == sorted({p.timesteps for p in history})
    assert all(p.attempt == 1 or p.timesteps <= attempts[1]["start_timesteps"] for p in history)
    if explicit:
        assert "[viewer] resumed from checkpoints/ppo_2048.zip at 2048 timesteps" in [
            line["text"] for line in output.log.tail()["lines"]
        ]
