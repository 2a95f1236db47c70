"""`python -m rollouts.demo_trainer` as real child processes: its files, its stdout, the control
file (pause, resume, stop), signals, the emergency save and `--resume`. No mock of the child:
every expectation is read back from what the process printed and wrote."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollouts.control import read_ack, write_control
from tests.support.servers import child_env, process_group_members
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

DEADLINE = 30.0  # seconds any one run may take
STEP_FILE = re.compile(r"^(\d+)\.jsonl$")
TABLE_ROW = re.compile(r"^\|\s+(\S.*?)\s* \| (.*?)\s* \|$")


class Trainer:
    """One child process, its stdout lines collected by a thread as they arrive."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rollouts.demo_trainer", *args],
            cwd=cwd,
            env=child_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in list(self.lines) if line.startswith("{")]

    def progress(self) -> list[dict[str, Any]]:
        """The progress points: progress lines with timesteps (the others only name a phase)."""
        return [e for e in self.events() if e.get("event") == "progress" and "timesteps" in e]

    def wait_for(self, count: int) -> list[dict[str, Any]]:
        """Until `count` progress lines were printed."""
        deadline = time.monotonic() + DEADLINE
        while len(self.progress()) < count:
            assert self.process.poll() is None or self.reader.is_alive(), self.stderr()
            assert time.monotonic() < deadline, f"no {count} progress lines: {self.lines[-5:]}"
            time.sleep(0.02)
        return self.progress()

    def finish(self) -> int:
        code = self.process.wait(timeout=DEADLINE)
        self.reader.join(timeout=5)
        return code

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read() if self.process.poll() is not None else ""

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


@pytest.fixture
def trainers(tmp_path: Path) -> Iterator[list[Trainer]]:
    started: list[Trainer] = []
    yield started
    for trainer in started:
        trainer.kill()
        assert process_group_members(trainer.process.pid) == []


def start(started: list[Trainer], cwd: Path, *args: str, **kwargs: Any) -> Trainer:
    trainer = Trainer(cwd, *args, **kwargs)
    started.append(trainer)
    return trainer


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def tables(lines: list[str]) -> list[dict[str, str]]:
    """The SB3 tables in stdout, as {section/key: value}."""
    found: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    section = ""
    for line in lines:
        if line.startswith("-----"):
            if current:
                found.append(current)
            current = None if current else {}
            continue
        match = TABLE_ROW.match(line)
        if current is not None and match:
            key, value = match.groups()
            if key.endswith("/"):
                section = key
            else:
                current[section + key.strip()] = value
    return found


def test_a_short_run_writes_its_files_and_prints_progress_and_tables(tmp_path, trainers):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "9", "--step-seconds", "0",
        "--samples-per-step", "8", "--eval-every", "3", "--table-every", "4",
        "--checkpoint-every", "2", "--keep-checkpoints", "2",
    )  # fmt: skip
    assert trainer.finish() == 0, trainer.stderr()
    run = tmp_path / "run"
    progress = trainer.progress()
    assert [p["timesteps"] for p in progress] == [8 * i for i in range(1, 10)]
    for point in progress:
        assert point["total_timesteps"] == 72
        assert point["phase"] in ("rollout", "update", "eval")
        for key in ("ep_rew_mean", "approx_kl", "explained_variance", "entropy_loss",
                    "value_loss", "clip_fraction", "fps"):  # fmt: skip
            assert isinstance(point[key], int | float), key
    assert [p["phase"] for p in progress].count("eval") == 3
    phases = [e["phase"] for e in trainer.events() if e["event"] == "progress"]
    one_step, eval_step = ["rollout", "update", "update"], ["rollout", "update", "eval", "eval"]
    assert phases == (one_step * 2 + eval_step) * 3
    found = tables(trainer.lines)
    assert [t["time/total_timesteps"] for t in found] == ["32", "64"]
    assert {"rollout/ep_rew_mean", "train/approx_kl", "train/learning_rate"} <= set(found[0])
    assert "|    ep_rew_mean" in "\n".join(trainer.lines)

    train = sorted(int(p.stem) for p in (run / "rollout_result" / "train").iterdir())
    assert train == list(range(9))
    evals = sorted(int(p.stem) for p in (run / "rollout_result" / "eval").iterdir())
    assert evals == [2, 5, 8]
    records = [
        json.loads(x) for x in (run / "rollout_result/train/4.jsonl").read_text().split("\n") if x
    ]
    assert len(records) == 8 and {r["rollout_id"] for r in records} == {4}
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "baseline.json", "latest.json", "step-6.json", "step-8.json",
    ]  # fmt: skip
    assert read_json(run / "checkpoints/baseline.json")["timesteps"] == 0
    assert read_json(run / "checkpoints/latest.json")["timesteps"] == 72
    resume = read_json(run / "resume.json")
    assert resume["checkpoint"] == "checkpoints/latest.json"
    assert (resume["timesteps"], resume["step"]) == (72, 9)
    rows = (run / "episodes.csv").read_text().splitlines()
    assert rows[0] == "episode,reward,length,time" and len(rows) == 1 + 72
    assert rows[-1].startswith("72,")


def paused(trainer: Trainer, control: Path, run: Path) -> int:
    """Until the loop says it is paused (its ack) and every point it printed before is read
    (the last is its checkpoint's): how many there are."""
    wait_for(lambda: read_ack(control), "the loop's ack of the pause")
    wait_for(
        lambda: trainer.progress()[-1]["timesteps"] == read_json(run / "resume.json")["timesteps"],
        "the points up to the paused loop's checkpoint",
    )
    return len(trainer.progress())


def test_pause_blocks_the_loop_and_resume_continues_it(tmp_path, trainers):
    control = tmp_path / "control.json"
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "200", "--step-seconds", "0.05",
        env={"RELAX_CONTROL_FILE": "control.json"},
    )  # fmt: skip
    trainer.wait_for(2)
    write_control(control, pause=True)
    held = paused(trainer, control, tmp_path / "run")
    time.sleep(1.0)
    assert len(trainer.progress()) == held, "the loop went on while paused"
    assert trainer.process.poll() is None
    write_control(control, pause=False)
    after = trainer.wait_for(held + 3)
    assert after[held]["timesteps"] == after[held - 1]["timesteps"] + 16
    write_control(control, pause=True)  # a stop while paused ends the pause and the run
    held = paused(trainer, control, tmp_path / "run")
    write_control(control, stop=True)
    assert trainer.finish() == 0
    assert len(trainer.progress()) == held
    assert (
        read_json(tmp_path / "run/stopped.json")["timesteps"] == trainer.progress()[-1]["timesteps"]
    )


def test_a_stop_through_the_control_file_saves_and_exits_0(tmp_path, trainers):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "200", "--step-seconds", "0.05",
        "--control-file", "run/control.json",
    )  # fmt: skip
    trainer.wait_for(3)
    write_control(tmp_path / "run/control.json", stop=True)
    assert trainer.finish() == 0
    run, last = tmp_path / "run", trainer.progress()[-1]
    stopped = read_json(run / "stopped.json")
    assert stopped["stopped_by"] == "control_file" and stopped["stop_signal"] is None
    assert stopped["timesteps"] == last["timesteps"] < 200 * 16
    assert stopped["recovery_checkpoint"] == "checkpoints/latest.json"
    assert "checkpoints/latest.json" in stopped["checkpoint_files"]
    assert read_json(run / "checkpoints/latest.json")["timesteps"] == last["timesteps"]
    assert read_json(run / "resume.json")["timesteps"] == last["timesteps"]


def test_sigterm_is_the_fallback_stop(tmp_path, trainers):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "200", "--step-seconds", "0.05"
    )
    trainer.wait_for(2)
    trainer.process.send_signal(signal.SIGTERM)
    assert trainer.finish() == 0
    stopped = read_json(tmp_path / "run/stopped.json")
    assert (stopped["stopped_by"], stopped["stop_signal"]) == ("signal", "SIGTERM")


def test_a_failure_leaves_an_emergency_checkpoint_and_exits_1(tmp_path, trainers):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "10", "--step-seconds", "0",
        "--fail-at-step", "4",
    )  # fmt: skip
    assert trainer.finish() == 1
    run = tmp_path / "run"
    failure = read_json(run / "training_failure.json")
    assert failure["error"] == "InjectedFailure" and failure["timesteps"] == 64
    assert failure["recovery_checkpoint"] == "checkpoints/emergency.json"
    emergency = read_json(run / "checkpoints/emergency.json")
    assert (emergency["kind"], emergency["step"], emergency["timesteps"]) == ("emergency", 4, 64)
    assert read_json(run / "resume.json")["checkpoint"] == "checkpoints/emergency.json"
    stderr = trainer.stderr()
    assert (
        "InjectedFailure" in stderr and str(tmp_path) not in stderr and "/rollouts/" not in stderr
    )
    assert not (run / "stopped.json").exists()


def test_resume_continues_the_timesteps_and_the_same_curve(tmp_path, trainers):
    whole = start(trainers, tmp_path, "--run-dir", "whole", "--steps", "8", "--step-seconds", "0")
    broken = start(
        trainers, tmp_path, "--run-dir", "broken", "--steps", "8", "--step-seconds", "0",
        "--fail-at-step", "5",
    )  # fmt: skip
    assert (whole.finish(), broken.finish()) == (0, 1)
    resumed = start(  # the same --fail-at-step: a resume gets past it
        trainers, tmp_path, "--run-dir", "broken", "--steps", "3", "--step-seconds", "0",
        "--fail-at-step", "5", "--resume", "broken/resume.json",
    )  # fmt: skip
    assert resumed.finish() == 0, resumed.stderr()
    before, after = broken.progress(), resumed.progress()
    assert [p["timesteps"] for p in before + after] == [16 * i for i in range(1, 9)]
    assert after[-1]["total_timesteps"] == 8 * 16
    drop = ("fps", "total_timesteps")
    expected = [{k: v for k, v in p.items() if k not in drop} for p in whole.progress()]
    assert [{k: v for k, v in p.items() if k not in drop} for p in before + after] == expected
    for step in (5, 6, 7):  # the very records the uninterrupted run wrote
        name = f"rollout_result/train/{step}.jsonl"
        assert (tmp_path / "broken" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    assert read_json(tmp_path / "broken/resume.json")["timesteps"] == 128
    # A checkpoint file and a run directory are resume targets too.
    again = start(
        trainers, tmp_path, "--run-dir", "again", "--steps", "1", "--step-seconds", "0",
        "--resume", "broken/checkpoints/latest.json",
    )  # fmt: skip
    assert again.finish() == 0 and again.progress()[0]["timesteps"] == 144


@pytest.mark.parametrize("regime", ["rising", "plateau", "kl"])
def test_each_regime_draws_its_curve(tmp_path, trainers, regime):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "16", "--step-seconds", "0",
        "--regime", regime,
    )  # fmt: skip
    assert trainer.finish() == 0
    points = trainer.progress()
    reward = [p["ep_rew_mean"] for p in points]
    kl = [p["approx_kl"] for p in points]
    half = len(reward) // 2
    shift = sum(reward[half:]) / half - sum(reward[:half]) / half
    if regime == "rising":
        assert shift > 0.04 and reward[-1] > reward[0] + 0.06 and max(kl) < 0.05
    elif regime == "plateau":
        assert abs(shift) < 0.02 and max(reward) - min(reward) < 0.1 and max(kl) < 0.05
    else:
        assert kl[-1] > 0.05 and kl[-1] > kl[0]


def test_a_reader_never_sees_half_a_file(tmp_path, trainers):
    trainer = start(
        trainers, tmp_path, "--run-dir", "run", "--steps", "60", "--step-seconds", "0.01",
        "--samples-per-step", "32", "--eval-every", "2", "--checkpoint-every", "1",
    )  # fmt: skip
    run, reads = tmp_path / "run", 0
    while trainer.process.poll() is None:
        paths = [run / "resume.json", *(run / "checkpoints").glob("*.json")]
        for bucket in ("train", "eval"):
            paths += [
                p for p in (run / "rollout_result" / bucket).glob("*") if STEP_FILE.match(p.name)
            ]
        for path in paths:
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue  # a numbered checkpoint pruned between the listing and the read
            if path.suffix == ".jsonl":
                lines = text.split("\n")
                assert lines[-1] == "" and len(lines) - 1 in (32, 24), path.name
                for line in lines[:-1]:
                    json.loads(line)
            else:
                assert isinstance(json.loads(text), dict), path.name
            reads += 1
    assert trainer.finish() == 0
    assert reads > 100
    assert not [p for p in run.rglob(".*") if p.is_file()], "a temporary file was left behind"
