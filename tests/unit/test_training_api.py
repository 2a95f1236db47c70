"""The training API through Django's test client (app under /portal/rollouts/), and the `train`
command's flags that start nothing: hosting off by default, access, 409s, same-origin POSTs."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from rollouts.training.manager import forget_managers
from rollouts.training.specfile import load_spec
from rollouts.web.runs import data_dir_of
from tests.support.servers import REPO_ROOT

PREFIX = "/portal/rollouts/api/train"
DEMO = REPO_ROOT / "examples" / "demo-train.toml"
SLEEPER = """
[job]
command = ["{python}", "-c", "import time; print('hello', flush=True); time.sleep({seconds})"]
control = false
grace_seconds = 0.5
[[fields]]
name = "seconds"
type = "float"
default = 30.0
min = 0.0
"""


@pytest.fixture
def spec_path(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(DEMO.read_text())
    return path


@pytest.fixture(autouse=True)
def _hosted(settings, spec_path):
    settings.ROLLOUTS_TRAIN_SPEC = str(spec_path)
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    yield
    forget_managers()


def body(response):
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


def post(client, name, data=None, **headers):
    raw = data if isinstance(data, str) else json.dumps(data or {})
    return client.post(f"{PREFIX}/{name}", raw, content_type="application/json", headers=headers)


def test_training_is_off_unless_a_spec_is_set(client, settings):
    settings.ROLLOUTS_TRAIN_SPEC = None
    for name in ("schema", "state"):
        response = client.get(f"{PREFIX}/{name}")
        assert response.status_code == 404 and body(response)["ok"] is False
    assert post(client, "start").status_code == 404


def test_only_users_passing_the_training_access_check(client, settings):
    settings.ROLLOUTS_TRAIN_ACCESS = None  # the default: staff users (none here)
    response = client.get(f"{PREFIX}/state")
    assert response.status_code == 403 and "training" in body(response)["message"]


def test_the_schema_is_the_spec_s_contract(client, spec_path):
    response = client.get(f"{PREFIX}/schema")
    assert response.status_code == 200
    assert body(response) == json.loads(json.dumps(load_spec(spec_path).schema()))


def test_the_idle_state_and_the_previews(client, spec_path):
    idle = body(client.get(f"{PREFIX}/state"))
    assert idle["job"]["status"] == "idle" and idle["preview"] is None
    kl = body(client.get(f"{PREFIX}/state", {"preview": "kl", "log_tail": 5}))
    assert kl["preview"] == "kl" and kl["reading"]["reading"] == "kl too large"
    assert len(kl["log"]["lines"]) == 5
    assert set(kl) == set(idle)
    bad = client.get(f"{PREFIX}/state", {"preview": "nope"})
    assert bad.status_code == 400
    assert not (spec_path.parent / "runs").exists()  # a preview writes nothing


def test_a_validation_failure_is_a_409_naming_each_bad_field(client):
    response = post(client, "start", {"values": {"steps": 0, "regime": "x", "nope": 1}})
    assert response.status_code == 409
    data = body(response)
    assert set(data["errors"]) == {"steps", "regime", "nope"} and data["status"] == 409
    assert post(client, "start", "not json").status_code == 400
    assert post(client, "start", {"resume_latest": "yes"}).status_code == 400


def test_pause_resume_stop_without_a_job_are_409s(client):
    for name in ("pause", "resume", "stop"):
        response = post(client, name)
        assert response.status_code == 409 and body(response)["errors"] == {}
    response = post(client, "start", {"resume_latest": True})
    assert response.status_code == 409 and "checkpoint" in body(response)["message"]


def test_cross_origin_posts_are_refused(client, spec_path):
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        for name in ("start", "pause", "resume", "stop"):
            response = post(client, name, {}, **headers)
            assert response.status_code == 403, (name, headers)
    assert not (spec_path.parent / "runs").exists()
    assert client.get(f"{PREFIX}/start").status_code == 405


def test_a_second_start_while_one_runs_is_a_409(client, settings, tmp_path):
    spec = tmp_path / "sleeper.toml"
    spec.write_text(SLEEPER)
    settings.ROLLOUTS_TRAIN_SPEC = str(spec)
    first = post(client, "start", {"values": {"seconds": 30}})
    assert first.status_code == 200, first.content
    job = body(first)["job"]
    assert job["status"] in ("starting", "running") and job["command"][0] == "python"
    assert str(tmp_path) not in first.content.decode()
    second = post(client, "start", {})
    assert second.status_code == 409 and "already running" in body(second)["message"]
    # this command does not read the control file: pause is refused, stop kills the group
    assert post(client, "pause").status_code == 409
    assert post(client, "stop").status_code == 200
    from rollouts.training.manager import manager_for

    job_object = manager_for(spec).job
    assert job_object is not None and job_object.wait(10)
    state = body(client.get(f"{PREFIX}/state"))
    assert state["job"]["status"] in ("killed", "exited") and state["job"]["exit_code"] is not None


# -- the train command's flags that start nothing


def test_a_non_loopback_host_is_refused_in_one_line():
    for host in ("0.0.0.0", "192.168.1.5", "example.com", "::"):
        with pytest.raises(CommandError) as error:
            call_command("train", str(DEMO), "--host", host, "--no-browser")
        assert "loopback" in str(error.value) and "\n" not in str(error.value)


def test_print_schema_and_print_preview_start_nothing(spec_path):
    out = StringIO()
    call_command("train", str(spec_path), "--print-schema", stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(load_spec(spec_path).schema()))
    out = StringIO()
    call_command("train", str(spec_path), "--print-preview", stdout=out)
    previews = json.loads(out.getvalue())
    assert sorted(previews) == ["kl", "plateau", "rising"]
    assert [p.name for p in spec_path.parent.iterdir()] == ["spec.toml"]


def test_a_broken_spec_is_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[job]\ncommand = 'python train.py'\n")
    with pytest.raises(CommandError, match="list of arguments"):
        call_command("train", str(path), "--print-schema")


def test_a_spec_the_site_cannot_use_warns_at_start_up_and_answers_503(client, settings, tmp_path):
    from rollouts.checks import check_settings

    def w008() -> list[str]:
        return [str(w.msg) for w in check_settings() if w.id == "rollouts.W008"]

    assert w008() == []  # the demo spec is fine
    cases = [
        ("missing.toml", None, "cannot read the spec missing.toml"),
        ("bad.toml", "[job]\ncommand = 'python x.py'\n", "command must be a non-empty list"),
    ]
    for name, text, reason in cases:
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        settings.ROLLOUTS_TRAIN_SPEC = str(path)
        forget_managers()
        (message,) = w008()
        assert reason in message and str(tmp_path) not in message
        response = client.get(f"{PREFIX}/schema")
        assert response.status_code == 503 and str(tmp_path) not in response.content.decode()


def test_an_unusable_training_access_check_denies_and_warns(client, settings):
    from rollouts.checks import check_settings

    settings.ROLLOUTS_TRAIN_ACCESS = "no.such.check"
    assert [w.id for w in check_settings() if "ROLLOUTS_TRAIN_ACCESS" in w.msg] == ["rollouts.W007"]
    assert client.get(f"{PREFIX}/state").status_code == 403
    assert post(client, "start").status_code == 403


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_process_does_not_host_the_same_spec(client, spec_path):
    import subprocess
    import sys

    lock = spec_path  # the spec file itself: hosting writes nothing
    forget_managers()  # this process lets go: another one (a real process) takes the lock
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(lock)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        for name in ("schema", "state"):
            response = client.get(f"{PREFIX}/{name}")
            message = body(response)["message"]
            assert response.status_code == 503 and "hosted by another process" in message
        assert post(client, "start").status_code == 503
        with pytest.raises(CommandError, match=r"hosted by another process$"):
            call_command("train", str(spec_path), "--no-browser", "--port", "0")
    finally:
        holder.kill()
        holder.wait()
    assert client.get(f"{PREFIX}/state").status_code == 200  # the lock went with its process


def test_no_training_answer_holds_a_server_path(client, settings, spec_path, tmp_path):
    from tests.support.walk import TOP_ROUTES, leaks

    spec_path.write_text(SLEEPER)  # what `start` starts: stopped by the fixture's teardown

    routes = [r for name, rs in TOP_ROUTES.items() if name.startswith("api-train") for r in rs]
    routes.append(("POST", "/api/train/start?bad"))
    answers = {}
    for method, path in routes:
        response = client.generic(method, "/portal/rollouts" + path)
        answers[(method, path)] = (response.status_code, dict(response.items()), response.content)
    assert leaks(answers, [str(tmp_path), str(spec_path), str(REPO_ROOT)]) == []
    assert all(status < 500 for status, _, _ in answers.values())


def test_links_and_the_data_dir_follow_the_job_only_under_manage_py_train(
    client, settings, spec_path
):
    run = spec_path.parent / "runs" / "20260101-000000"
    (run / "rollout_result" / "train").mkdir(parents=True)
    record = {
        "id": run.name,
        "run": run.name,
        "command": ["x"],
        "values": {},
        "pid": 1,
        "started_at": 1.0,
        "ended_at": 2.0,
        "status": "exited",
        "exit_code": 0,
    }
    (run / "job.json").write_text(json.dumps(record))
    settings.ROLLOUTS_DATA_DIR = "/portal/own/data"
    portal = body(client.get(f"{PREFIX}/state"))
    assert portal["job"]["id"] == run.name and portal["job"]["status"] == "exited"
    assert portal["links"] == {"samples": None, "trends": None, "stats": None}
    assert settings.ROLLOUTS_DATA_DIR == "/portal/own/data"
    settings.ROLLOUTS_TRAIN_FOLLOW = True
    followed = body(client.get(f"{PREFIX}/state"))
    assert followed["links"] == {
        "samples": "/portal/rollouts/train/",
        "trends": "/portal/rollouts/train/trends/",
        "stats": None,  # no train step yet
    }
    # The pages read the followed run, and no setting was written to get there.
    assert settings.ROLLOUTS_DATA_DIR == "/portal/own/data"
    assert data_dir_of(None) == run / "rollout_result"
    for step in (2, 10):  # the latest step by number, not by name
        (run / "rollout_result" / "train" / f"{step}.jsonl").write_text('{"reward": 1}\n')
    latest = body(client.get(f"{PREFIX}/state"))["links"]["stats"]
    assert latest == "/portal/rollouts/train/10/stats/"
    assert client.get(latest).status_code == 200


def test_ui_port_is_the_port_flag():
    from rollouts.management.commands.train import Command

    parser = Command().create_parser("manage.py", "train")
    assert parser.parse_args(["s.toml"]).port == 8036
    assert parser.parse_args(["s.toml", "--ui-port", "9123"]).port == 9123
    assert parser.parse_args(["s.toml", "--port", "9124"]).port == 9124


def test_the_state_s_cursors_and_limits(client):
    """after_metric / metric_limit / after_log / log_tail, on a preview (nothing is started)."""
    url = f"{PREFIX}/state"
    whole = body(client.get(url, {"preview": "rising", "log_tail": 4000}))
    points, lines = whole["metrics"]["points"], whole["log"]["lines"]
    cursor, log_cursor = whole["metrics"]["cursor"], whole["log"]["cursor"]
    assert len(points) == cursor and lines[-1]["n"] == log_cursor
    newer = body(client.get(url, {"preview": "rising", "after_metric": cursor - 3}))
    assert newer["metrics"]["points"] == points[-3:] and newer["metrics"]["cursor"] == cursor
    assert (
        body(client.get(url, {"preview": "rising", "after_metric": cursor}))["metrics"]["points"]
        == []
    )
    last = body(client.get(url, {"preview": "rising", "metric_limit": 2}))["metrics"]["points"]
    assert last == points[-2:]
    after = body(client.get(url, {"preview": "rising", "after_log": log_cursor - 2}))["log"]
    assert after["lines"] == lines[-2:] and after["cursor"] == log_cursor
    assert body(client.get(url, {"preview": "rising", "log_tail": 0}))["log"]["lines"] == []
    assert len(body(client.get(url, {"preview": "rising"}))["log"]["lines"]) == min(500, len(lines))
    for bad in ({"log_tail": 4001}, {"metric_limit": 0}, {"after_metric": -1}, {"after_log": "x"}):
        response = client.get(url, {"preview": "rising", **bad})
        assert response.status_code == 400 and body(response)["ok"] is False, bad
