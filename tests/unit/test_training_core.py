"""The training core without processes: the spec, validation and schema, the command, the SB3
table parser, cursors, the reading, the control file, and preview keys == real snapshot keys."""

from __future__ import annotations

import json
import math
import sys
import threading
from pathlib import Path

import pytest

from rollouts.control import TrainingControl, read_ack, read_control, write_control
from rollouts.training.backends.local import LocalJob
from rollouts.training.convergence import convergence
from rollouts.training.logring import LogRing
from rollouts.training.manager import Manager
from rollouts.training.output import JobOutput
from rollouts.training.preview import preview_snapshot
from rollouts.training.progress import Progress
from rollouts.training.snapshot import PREVIEWS
from rollouts.training.spec import SpecError
from rollouts.training.specfile import load_spec, parse_spec
from tests.support.servers import REPO_ROOT
from tests.support.wait import wait_for

DEMO = REPO_ROOT / "examples" / "demo-train.toml"
GRPO = REPO_ROOT / "examples" / "relax-grpo.toml"


def table(ticks: int | None, reward: float, cut: bool = False) -> list[str]:
    rows = ["-----------------------------", "| rollout/       |          |"]
    rows.append(f"|    ep_rew_mean | {reward}      |")
    if ticks is not None:
        rows += ["| time/          |          |", f"|    total_timesteps | {ticks} |"]
    rows += ["| train/         |          |", "|    clip_fraction | 0.2 |"]
    return rows if cut else [*rows, "-----------------------------"]


def progress_line(ticks: int, **metrics: float) -> str:
    return json.dumps({"event": "progress", "timesteps": ticks, **metrics})


# -- the spec


def test_both_example_specs_load_and_their_presets_validate():
    for path in (DEMO, GRPO):
        spec = load_spec(path)
        for preset in spec.presets:
            assert spec.validate(preset["values"])[1] == {}
    demo = load_spec(DEMO)
    assert {"steps", "step_seconds"} <= {f.name for f in demo.fields}
    assert demo.grace_seconds == 15


def test_the_schema_is_what_the_validator_checks():
    spec = load_spec(DEMO)
    schema = spec.schema()
    assert {f["name"] for f in schema["fields"]} == {f.name for f in spec.fields}
    for field in schema["fields"]:
        good = field["default"]
        assert spec.validate({field["name"]: good})[1] == {}
        if field["min"] is not None:
            below = field["min"] - 1
            assert field["name"] in spec.validate({field["name"]: below})[1]
        if field["max"] is not None:
            assert field["name"] in spec.validate({field["name"]: field["max"] + 1})[1]
        if field["choices"]:
            assert field["name"] in spec.validate({field["name"]: "nope"})[1]
    assert set(schema) >= {"fields", "groups", "presets", "metrics", "grace_seconds", "resumable"}
    assert schema["resumable"] is True
    kl = next(m for m in schema["metrics"] if m["key"] == "approx_kl")
    assert kl["reference"] == [{"value": 0.05, "label": "KL = 0.05"}]


def test_validation_names_each_bad_field_and_fills_defaults():
    spec = load_spec(DEMO)
    clean, errors = spec.validate({"steps": 0, "regime": "up", "bogus": 1, "step_seconds": "x"})
    assert set(errors) == {"steps", "regime", "bogus", "step_seconds"}
    clean, errors = spec.validate({"steps": 7})
    assert errors == {} and clean["steps"] == 7 and clean["regime"] == "rising"
    assert spec.validate({"steps": True})[1] == {"steps": "must be a whole number"}
    assert spec.validate({"steps": 2.5})[1] == {"steps": "must be a whole number"}
    assert "must be" in spec.validate("not an object")[1]["values"]
    # bounds read as the spec wrote them (not 1e+06)
    assert spec.validate({"seed": 10**7})[1] == {"seed": "must be at most 1000000"}
    assert spec.validate({"step_seconds": -1})[1] == {"step_seconds": "must be at least 0"}


def test_strings_may_not_hold_control_characters_and_paths_stay_relative(tmp_path):
    spec = load_spec(GRPO)
    assert "model" in spec.validate({"model": "a\nb"})[1]
    assert "model" in spec.validate({"model": "/etc/passwd"})[1]
    assert "model" in spec.validate({"model": "../../up"})[1]
    assert spec.validate({"model": "models/x"})[1] == {}


def test_the_command_is_an_argument_list_with_placeholders_filled():
    spec = load_spec(DEMO)
    values, _ = spec.validate({"steps": 3, "inject_failure": True, "fail_at_step": 2})
    names = {"python": sys.executable, "job_id": "j", "run_dir": "runs/j"}
    command = spec.command_for(values, {**names, "control_file": "runs/j/control.json"})
    assert command[:3] == [sys.executable, "-m", "rollouts.demo_trainer"]
    assert command[command.index("--steps") + 1] == "3"
    assert command[-2:] == ["--fail-at-step", "2"]
    assert "--resume" not in command
    values["inject_failure"] = False
    resumed = spec.command_for(
        values, {**names, "control_file": "c", "resume_path": "runs/j/checkpoints/latest.json"}
    )
    assert "--fail-at-step" not in resumed
    assert resumed[-2:] == ["--resume", "runs/j/checkpoints/latest.json"]


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"command": "python train.py"}, "list"),
        ({"command": ["x", "{nope}"]}, "unknown placeholder"),
        ({"command": ["x"], "run_dir": "/abs/{job_id}"}, "relative"),
        ({"command": ["x"], "run_dir": "runs/fixed"}, "{job_id}"),
        ({"command": ["x"], "grace_seconds": -1}, "grace_seconds"),
    ],
)
def test_a_bad_spec_is_refused_with_a_reason(tmp_path, job, message):
    with pytest.raises(SpecError, match=message.replace("{", r"\{").replace("}", r"\}")):
        parse_spec({"job": job}, tmp_path / "spec.toml")


def test_a_field_default_outside_its_bounds_is_refused(tmp_path):
    field = {"name": "n", "type": "int", "default": 0, "min": 1}
    with pytest.raises(SpecError, match="default"):
        parse_spec({"job": {"command": ["x"]}, "fields": [field]}, tmp_path / "s.toml")


# -- progress: JSON lines and SB3 tables


def feed(progress: Progress, lines: list[str]) -> list[str | None]:
    return [progress.feed(line) for line in lines]


def test_a_table_is_placed_at_its_own_total_timesteps():
    progress = Progress()
    kinds = feed(progress, table(256, 1.5))
    assert set(kinds) == {"table"}
    (point,) = progress.snapshot()
    assert point.timesteps == 256
    assert point.metrics == {"ep_rew_mean": 1.5, "clip_fraction": 0.2}


def test_a_table_without_total_timesteps_is_dropped():
    progress = Progress()
    feed(progress, table(None, 1.5))
    assert progress.snapshot() == []
    feed(progress, [progress_line(10, ep_rew_mean=1.0), *table(None, 2.0)])
    assert [p.timesteps for p in progress.snapshot()] == [10]


def test_a_truncated_table_takes_the_last_known_tick():
    progress = Progress()
    feed(progress, [progress_line(10, ep_rew_mean=1.0)])
    lines = table(None, 3.0, cut=True)
    feed(progress, lines)
    assert len(progress.snapshot()) == 1  # not placed until the stream ends
    progress.finish()
    points = progress.snapshot()
    # the last known tick is 10, already held by the JSON point: the table is skipped
    assert [p.timesteps for p in points] == [10]
    other = Progress()
    feed(other, [progress_line(10, ep_rew_mean=1.0), *table(20, 2.0), *table(None, 3.0, True)])
    feed(other, ["a plain line cuts the table short"])
    assert [p.timesteps for p in other.snapshot()] == [10, 20]


def test_a_cut_table_with_its_tick_is_placed_at_that_tick():
    progress = Progress()
    feed(progress, [*table(64, 2.0, cut=True), "Traceback (most recent call last):"])
    assert [(p.timesteps, p.metrics["ep_rew_mean"]) for p in progress.snapshot()] == [(64, 2.0)]


def test_a_table_at_the_timesteps_of_a_json_point_is_skipped():
    progress = Progress()
    feed(progress, [progress_line(64, ep_rew_mean=1.0, approx_kl=0.01), *table(64, 9.0)])
    (point,) = progress.snapshot()
    assert point.source == "json" and point.metrics["ep_rew_mean"] == 1.0
    # and a JSON point after a table at its tick replaces the table's point
    other = Progress()
    feed(other, [*table(64, 9.0), progress_line(64, ep_rew_mean=1.0)])
    assert [(p.timesteps, p.source) for p in other.snapshot()] == [(64, "json")]


def test_json_lines_every_numeric_key_a_metric_and_the_total_and_phase():
    progress = Progress()
    line = json.dumps(
        {
            "event": "progress",
            "timesteps": 5,
            "total_timesteps": 50,
            "phase": "update",
            "ep_rew_mean": 1,
            "approx_kl": 0.2,
            "ok": True,
            "name": "x",
            "nan": None,
        }
    )
    assert progress.feed(line) == "progress"
    assert progress.feed('{"event": "other", "timesteps": 9}') is None
    assert progress.feed("{not json") is None
    (point,) = progress.snapshot()
    assert point.metrics == {"ep_rew_mean": 1.0, "approx_kl": 0.2}
    assert progress.total == 50 and progress.phase == "update"


def test_metric_cursor_and_the_last_5000_points():
    progress = Progress(max_points=5000)
    feed(progress, [progress_line(t, r=float(t)) for t in range(1, 6001)])
    points = progress.snapshot()
    assert len(points) == 5000 and points[0].timesteps == 1001
    assert progress.seq == 6000
    newer = progress.snapshot(after=5990)
    assert [p.timesteps for p in newer] == list(range(5991, 6001))
    assert progress.snapshot(after=6000) == []
    assert len(progress.snapshot(limit=7)) == 7
    feed(progress, [progress_line(3000, r=0.0)])  # an earlier tick again: a new attempt
    assert progress.attempt == 1 and progress.attempts[-1]["start_timesteps"] == 3000
    (again,) = progress.snapshot(after=6000)
    assert (again.timesteps, again.attempt) == (3000, 1)


def test_log_cursor_tail_and_the_last_4000_lines():
    log = LogRing()
    for n in range(4100):
        log.add(f"line {n}\n", "stdout")
    log.add("ValueError: bad", "stderr")
    whole = log.tail()
    assert len(whole["lines"]) == 4000 and whole["cursor"] == 4101
    assert whole["lines"][-1] == {"n": 4101, "text": "ValueError: bad", "kind": "error"}
    assert [line["n"] for line in log.tail(after=4099)["lines"]] == [4100, 4101]
    assert len(log.tail(limit=3)["lines"]) == 3
    assert log.tail(limit=0)["lines"] == []


# -- the reading


class P:
    def __init__(self, step, **metrics):
        self.step, self.metrics = step, metrics


def points(rewards, **extra):
    return [
        P(i, ep_rew_mean=r, **{k: v[i] for k, v in extra.items()}) for i, r in enumerate(rewards)
    ]


def test_the_reading_rules_in_the_documents_order():
    assert convergence([], "ep_rew_mean")["reading"] == "waiting"
    assert convergence(points([1, 2]), "ep_rew_mean")["reading"] == "warming up"
    rising = [float(i) for i in range(12)]
    assert convergence(points(rising), "ep_rew_mean")["reading"] == "rising"
    kl = [0.01] * 11 + [0.08]
    ev = [-0.5] * 12
    result = convergence(points(rising, approx_kl=kl, explained_variance=ev), "ep_rew_mean")
    assert result["reading"] == "kl too large"  # the highest priority, over the value function
    assert result["numbers"]["approx_kl"] == 0.08 and result["thresholds"]["kl_max"] == 0.05
    result = convergence(points(rising, explained_variance=ev), "ep_rew_mean")
    assert result["reading"] == "value not fitted"
    falling = [12.0 - i for i in range(12)]
    assert convergence(points(falling), "ep_rew_mean")["reading"] == "not rising"
    flat = [100 + (0.5 if i % 2 else -0.5) for i in range(12)]
    assert convergence(points(flat), "ep_rew_mean")["reading"] == "plateau"
    # a flat curve drifting down: not rising comes before plateau
    drifting = [100 - 0.1 * i + (0.5 if i % 2 else -0.5) for i in range(12)]
    assert convergence(points(drifting), "ep_rew_mean")["reading"] == "not rising"


# -- the control file


def test_the_control_file_round_trip_and_a_broken_file(tmp_path):
    path = tmp_path / "control.json"
    assert read_control(path) == {"pause": False, "stop": False}
    write_control(path, pause=True)
    write_control(path, stop=True)
    assert read_control(path) == {"pause": True, "stop": True}
    assert json.loads(path.read_text())["updated"] > 0
    assert [p.name for p in tmp_path.iterdir()] == ["control.json"]  # no temporary left
    path.write_text("{half")
    assert read_control(path) == {"pause": False, "stop": False}
    assert TrainingControl(None).check() is False
    write_control(path, pause=False, stop=True)
    control = TrainingControl(path)
    assert control.check() is True and control.paused_seconds == 0
    assert read_ack(path) is None


# -- snapshots: a real one (from a job's files) and the previews have the same keys


def keys(value, prefix=""):
    """Every key path of a JSON value (list items merged)."""
    found = set()
    if isinstance(value, dict):
        for key, item in value.items():
            found.add(prefix + key)
            found |= keys(item, prefix + key + ".")
    elif isinstance(value, list):
        for item in value:
            found |= keys(item, prefix + "[].")
    return found


def finished_job_dir(tmp_path: Path) -> tuple[Path, Path]:
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(DEMO.read_text())
    run = tmp_path / "runs" / "20260101-000000"
    run.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "event": "progress",
                "timesteps": 32 * n,
                "total_timesteps": 640,
                "phase": "rollout",
                "ep_rew_mean": n * 0.5,
                "approx_kl": 0.01,
                "explained_variance": 0.5,
                "entropy_loss": -1.0,
                "value_loss": 2.0,
                "clip_fraction": 0.1,
                "fps": 100.0,
            }
        )
        for n in range(1, 21)
    ]
    (run / "stdout.log").write_text("\n".join(lines) + "\n")
    (run / "stderr.log").write_text("warning: something\n")
    record = {
        "id": run.name,
        "run": run.name,
        "command": [sys.executable, "-m", "x"],
        "values": {},
        "device": "cpu",
        "pid": 1,
        "pid_start": None,
        "started_at": 1.0,
        "ended_at": 11.0,
        "status": "exited",
        "exit_code": 0,
        "force_killed": False,
        "paused_seconds": 0.0,
    }
    record["values"] = load_spec(spec_path).defaults()
    (run / "job.json").write_text(json.dumps(record))
    # What a run leaves besides its logs: episode rows, the resume pointer, checkpoints.
    (run / "episodes.csv").write_text("episode,reward,length,time\n1,0.5,200,1.0\n2,1,180,2\n")
    (run / "checkpoints").mkdir()
    for name, ticks in (("baseline", 0), ("step-20", 640), ("latest", 640)):
        (run / "checkpoints" / f"{name}.json").write_text(json.dumps({"timesteps": ticks}))
    pointer = {"checkpoint": "checkpoints/latest.json", "timesteps": 640, "step": 20}
    (run / "resume.json").write_text(json.dumps({**pointer, "updated": 11.0}))
    return spec_path, run


def test_preview_snapshots_have_exactly_the_keys_of_a_real_snapshot(tmp_path):
    spec_path, _ = finished_job_dir(tmp_path)
    manager = Manager(load_spec(spec_path))
    assert manager.job is not None and manager.job.wait(5)
    real = manager.snapshot({})
    assert real["job"]["status"] == "exited" and len(real["metrics"]["points"]) == 20
    assert real["job"]["command"][0] == "python"  # the interpreter's path is not shown
    previews = {name: preview_snapshot(manager.spec, name) for name in PREVIEWS}
    for name, preview in previews.items():
        assert keys(preview) == keys(real), name
        assert preview["preview"] == name
        # the parts read from the run directory are drawn in the preview too
        assert preview["episodes"]["columns"] == real["episodes"]["columns"]
        assert preview["episodes"]["rows"] and preview["recovery"]["checkpoints"]
    readings = {name: p["reading"]["reading"] for name, p in previews.items()}
    assert readings == {"rising": "rising", "plateau": "plateau", "kl": "kl too large"}
    assert str(tmp_path) not in json.dumps(real)


def test_an_idle_snapshot_has_the_same_top_level_keys(tmp_path):
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(DEMO.read_text())
    manager = Manager(load_spec(spec_path))
    idle = manager.snapshot({})
    assert idle["job"]["status"] == "idle"
    assert set(idle) == set(preview_snapshot(manager.spec, "rising"))
    assert not (tmp_path / "runs").exists()  # nothing written


def test_a_job_record_whose_process_is_gone_is_shown_as_ended(tmp_path):
    spec_path, run = finished_job_dir(tmp_path)
    record = json.loads((run / "job.json").read_text())
    record.update(status="running", pid=2**22 - 3, pid_start=12345, ended_at=None)
    (run / "job.json").write_text(json.dumps(record))
    job = LocalJob.attach(load_spec(spec_path), run, record)
    assert job.wait(5)
    assert job.status() == "exited" and not job.running


# What stable-baselines3's PPO prints with verbose=1 (two iterations, then a run stopped in the
# middle of its third table), with the lines around it.
CAPTURED_SB3 = """\
Using cpu device
-----------------------------
| rollout/           |      |
|    ep_len_mean     | 21.4 |
|    ep_rew_mean     | 21.4 |
| time/              |      |
|    fps             | 1785 |
|    iterations      | 1    |
|    time_elapsed    | 1    |
|    total_timesteps | 2048 |
-----------------------------
------------------------------------------
| rollout/                |              |
|    ep_len_mean          | 27.9         |
|    ep_rew_mean          | 27.9         |
| time/                   |              |
|    fps                  | 1243         |
|    iterations           | 2            |
|    time_elapsed         | 3            |
|    total_timesteps      | 4096         |
| train/                  |              |
|    approx_kl            | 0.0087653315 |
|    clip_fraction        | 0.0587       |
|    clip_range           | 0.2          |
|    entropy_loss         | -0.686       |
|    explained_variance   | -0.00391     |
|    learning_rate        | 0.0003       |
|    loss                 | 6.77         |
|    n_updates            | 10           |
|    policy_gradient_loss | -0.0101      |
|    value_loss           | 49.5         |
------------------------------------------
------------------------------------------
| eval/                   |              |
|    mean_ep_length       | 200          |
|    mean_reward          | 200          |
------------------------------------------
------------------------------------------
| rollout/                |              |
|    ep_len_mean          | 35.2         |
|    ep_rew_mean          | 35.2         |
"""


def test_a_captured_sb3_log():
    progress = Progress()
    kinds = [progress.feed(line) for line in CAPTURED_SB3.splitlines()]
    assert kinds[0] is None and kinds[1] == "table"
    progress.finish()  # the process ended inside the third iteration's table
    points = progress.snapshot()
    assert [p.timesteps for p in points] == [2048, 4096]  # the eval table has no tick: dropped
    first, second = points
    assert first.metrics["ep_rew_mean"] == 21.4 and first.metrics["fps"] == 1785
    assert second.metrics["approx_kl"] == 0.0087653315
    assert second.metrics["explained_variance"] == -0.00391
    assert "total_timesteps" not in second.metrics
    # the cut table went to the last known tick (4096) and only fills in what that point
    # lacks: it had all of it, so nothing changed
    assert progress.seq == 2 and progress.snapshot()[-1].metrics["ep_rew_mean"] != 35.2


def test_check_blocks_while_paused_and_counts_the_pause(tmp_path):
    import threading

    path = tmp_path / "control.json"
    write_control(path, pause=True)
    control = TrainingControl(path)
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(control.check()))
    thread.start()
    wait_for(lambda: read_ack(path), "the paused check to acknowledge the pause", timeout=5)
    assert result == []  # blocked, and says so
    write_control(path, pause=False)
    thread.join(5)
    assert result == [False] and control.paused_seconds > 0
    assert read_ack(path) is None  # no longer blocked


def test_the_control_module_needs_only_the_standard_library(tmp_path):
    """What a training loop in another environment imports: no Django, no site-packages."""
    import subprocess

    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from rollouts.control import TrainingControl, read_control, write_control\n"
        "write_control('control.json', stop=True)\n"
        "assert TrainingControl('control.json').check() is True\n"
        "third = sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'msgspec'))\n"
        "print(third)\n"
    )
    done = subprocess.run(  # -I: no user site, no environment; -S: no site-packages at all
        [sys.executable, "-I", "-S", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# Found by the issue-13 audit: each was a KeyError or TypeError (a 500), now one line.
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (  # an unknown placeholder in run_dir: a KeyError (500) at the first start
            {"job": {"command": ["x"], "run_dir": "runs/{job_id}/{nope}"}},
            "run_dir",
        ),
        (  # a reference line without a value: a KeyError at load (500 on every training call)
            {"job": {"command": ["x"]}, "metrics": [{"key": "k", "reference": [{"label": "x"}]}]},
            "reference",
        ),
        (  # a bare number for a reference line: a TypeError
            {"job": {"command": ["x"]}, "metrics": [{"key": "k", "reference": [0.05]}]},
            "reference",
        ),
        (  # an infinite value: not JSON, a strict dump refuses it
            {
                "job": {"command": ["x"]},
                "metrics": [{"key": "k", "reference": [{"value": math.inf}]}],
            },
            "reference",
        ),
        (  # a field's placeholder in run_dir: unknown when the run directory is named
            {"job": {"command": ["x"], "run_dir": "runs/{steps}-{job_id}"}},
            "run_dir",
        ),
    ],
)
def test_a_bad_run_dir_placeholder_or_reference_line_is_refused_in_one_line(tmp_path, raw, message):
    with pytest.raises(SpecError, match=message):
        parse_spec(raw, tmp_path / "spec.toml")


def test_a_resumed_runs_old_output_feeds_the_curve_but_times_no_phase(tmp_path):
    (tmp_path / "stdout.log").write_text(
        "\n".join(
            json.dumps({"event": "progress", "timesteps": t, "phase": p})
            for t, p in [(10, "rollout"), (20, "update"), (30, "eval")]
        )
        + "\n"
    )
    output = JobOutput(tmp_path)
    output.sizes(tmp_path)  # as Job.start and Job.attach take them
    with open(tmp_path / "stdout.log", "a") as log:
        log.write(json.dumps({"event": "progress", "timesteps": 40, "phase": "update"}) + "\n")
    done = threading.Event()
    done.set()
    for reader in output.follow(tmp_path, done):
        reader.join(5)
    assert [p.timesteps for p in output.progress.snapshot()] == [10, 20, 30, 40]
    assert [p["name"] for p in output.phases] == ["rollout", "update", "eval", "update"]
    # the old lines' phases have no time: they were not written when they were read
    assert [p["started_at"] is None for p in output.phases] == [True, True, True, False]
