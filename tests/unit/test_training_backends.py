"""Choosing where a job runs (`[job] backend`, `[ray]`, `--backend`, `--ray-address`, the
settings), each bad choice one line; the Ray entrypoint quoted so a shell runs exactly the
argument list; Ray's error text cut to the line a person needs; the API's 503 when the cluster
does not answer; and `--backend ray` without Ray installed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.core.checks import run_checks
from django.core.management import CommandError, call_command

from rollouts.install import install_hint
from rollouts.training.backends import INSTALL_RAY, shown_address, with_backend
from rollouts.training.backends.raycluster import entrypoint_for, one_line, shown_line
from rollouts.training.manager import forget_managers
from rollouts.training.spec import SpecError
from rollouts.training.specfile import load_spec, parse_spec
from tests.support.servers import REPO_ROOT

DEMO = REPO_ROOT / "examples" / "demo-train.toml"
JOB = {"command": ["x"]}
# What Ray 2.60's job server answered to a submission id in use (captured from a real head).
RAY_DUPLICATE = """Request failed with status code 500: Traceback (most recent call last):
  File "/srv/venv/lib/python3.11/site-packages/ray/dashboard/modules/job/job_head.py", line 419, in submit_job
    resp = await job_agent_client.submit_job_internal(submit_request)
RuntimeError: Request failed with status code 400: Traceback (most recent call last):
  File "/srv/venv/lib/python3.11/site-packages/ray/dashboard/modules/job/job_manager.py", line 553, in submit_job
    raise ValueError(
ValueError: Job with submission_id job-1 already exists. Please use a different submission_id.
.
."""  # noqa: E501


def spec_of(tmp_path, **raw):
    return parse_spec({"job": {**JOB, **raw.pop("job", {})}, **raw}, tmp_path / "spec.toml")


def test_a_spec_says_where_its_jobs_run(tmp_path):
    assert spec_of(tmp_path).backend == "local"
    spec = spec_of(
        tmp_path,
        job={"backend": "ray"},
        ray={"address": "http://head:8265/", "working_dir": "/shared/p", "env": {"A_1": "x"}},
    )
    assert (spec.backend, spec.ray["address"], spec.ray["working_dir"]) == (
        "ray",
        "http://head:8265",
        "/shared/p",
    )
    assert spec.ray["env"] == {"A_1": "x"} and spec.schema()["backend"] == "ray"


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"job": {"backend": "slurm"}}, "backend must be one of local, ray"),
        ({"ray": {"address": "head:8265"}}, "http://HOST:8265"),
        ({"ray": {"address": "ftp://head:8265"}}, "http://HOST:8265"),
        ({"ray": {"address": "http://head:8265/api"}}, "scheme, host and port only"),
        ({"ray": {"address": "http://head:99999"}}, "not a valid address"),
        ({"ray": {"address": "http://he\nad:8265"}}, "http:// or https://"),
        ({"ray": {"adress": "http://head:8265"}}, "unknown keys ['adress']"),
        ({"ray": {"working_dir": "relative/dir"}}, "absolute path"),
        ({"ray": {"env": {"BAD NAME": "x"}}}, "[ray] env BAD NAME"),
        ({"ray": {"env": {"A": 1}}}, "[ray] env A"),
        ({"ray": {"env": {"A": "line\nbreak"}}}, "[ray] env A"),
        ({"ray": {"env": {"A": "C1 \x85 next line"}}}, "[ray] env A"),
        ({"ray": {"env": {"A": "bidi \u202e override"}}}, "[ray] env A"),
        ({"ray": {"working_dir": "/shared/\u2066isolate"}}, "working_dir may not contain"),
        ({"ray": "http://head:8265"}, "[ray] must be a table"),
    ],
)
def test_a_bad_backend_choice_is_refused_in_one_line(tmp_path, raw, words):
    with pytest.raises(SpecError) as raised:
        spec_of(tmp_path, **raw)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_a_flag_or_a_setting_goes_over_the_spec(tmp_path):
    spec = spec_of(tmp_path, ray={"address": "http://a:8265"})
    ray = with_backend(spec, "ray", "https://b:443")
    assert (ray.backend, ray.ray["address"]) == ("ray", "https://b:443")
    assert with_backend(spec, "ray").ray["address"] == "http://a:8265"
    assert with_backend(spec_of(tmp_path, job={"backend": "ray"}), "local").backend == "local"
    with pytest.raises(SpecError, match="--ray-address"):
        with_backend(spec_of(tmp_path), "ray")
    with pytest.raises(SpecError, match="the backend must be one of"):
        with_backend(spec, "kubernetes")


def test_the_ray_entrypoint_runs_exactly_the_argument_list(tmp_path):
    command = [
        sys.executable,
        "-c",
        "import json, os, sys; print(json.dumps([os.getcwd(), *sys.argv[1:]]))",
        "two words",
        "$(touch injected)",
        "it's; rm -rf nothing",
        "*",
    ]
    where = tmp_path / "spec dir"
    where.mkdir()
    out = subprocess.run(
        ["/bin/sh", "-c", entrypoint_for(command, str(where))],  # as Ray runs an entrypoint
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert json.loads(out) == [str(where), *command[3:]]
    assert not (where / "injected").exists() and not (tmp_path / "injected").exists()


def test_rays_error_text_is_cut_to_its_last_reason():
    line = one_line(RuntimeError(RAY_DUPLICATE))
    assert line == (
        "Job with submission_id job-1 already exists. Please use a different submission_id"
    )
    assert one_line(RuntimeError("Request failed with status code 404: Job x does not exist.")) == (
        "Job x does not exist"
    )
    assert len(one_line(RuntimeError("ValueError: " + "x" * 5000))) == 300
    # no directory of the cluster's in a message (a path Ray could not use, a traceback's file)
    said = one_line(RuntimeError("FileNotFoundError: No such file: '/srv/shared/runs/x/a.py'"))
    assert said == "No such file: 'a.py'"
    assert shown_line("cd: /data/p q/run: not found, see http://h:1/x") == (
        "cd: p q/run: not found, see http://h:1/x"
    )
    assert one_line(RuntimeError("")) == "RuntimeError"


def test_an_address_is_shown_without_its_password():
    assert shown_address("https://user:secret@head.example:8265") == "https://head.example:8265"
    assert shown_address("http://[::1]:8265") == "http://[::1]:8265"


def test_train_with_the_ray_backend_and_no_address_is_one_line():
    with pytest.raises(CommandError) as raised:
        call_command("train", str(DEMO), "--backend", "ray", "--no-browser")
    assert "--ray-address" in str(raised.value) and "\n" not in str(raised.value)
    with pytest.raises(CommandError, match="http://HOST:8265"):
        call_command("train", str(DEMO), "--ray-address", "localhost:8265", "--no-browser")


def test_train_on_ray_without_ray_installed_says_how_to_install_it(monkeypatch):
    # Ray is outside our control: its absence is simulated by hiding the package.
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.job_submission", None)
    with pytest.raises(CommandError) as raised:
        call_command(
            "train", str(DEMO), "--backend", "ray", "--ray-address", "http://127.0.0.1:1",
            "--no-browser",
        )  # fmt: skip
    assert str(raised.value) == INSTALL_RAY
    assert INSTALL_RAY.endswith(install_hint("ray"))


def test_bad_backend_settings_are_a_warning_and_a_503(client, settings, hosted):
    settings.ROLLOUTS_TRAIN_BACKEND = "ray"  # and no address anywhere
    warnings = [w for w in run_checks() if w.id == "rollouts.W008"]
    assert len(warnings) == 1 and "--ray-address" in warnings[0].msg
    response = client.get("/portal/rollouts/api/train/state")
    assert response.status_code == 503 and "--ray-address" in response.json()["message"]
    forget_managers()
    settings.ROLLOUTS_TRAIN_RAY_ADDRESS = "not an address"
    warnings = [w for w in run_checks() if w.id == "rollouts.W008"]
    assert len(warnings) == 1 and "'not an address'" in warnings[0].msg


def test_a_ray_spec_without_ray_installed_warns_at_start(settings, hosted, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.job_submission", None)
    settings.ROLLOUTS_TRAIN_BACKEND = "ray"
    settings.ROLLOUTS_TRAIN_RAY_ADDRESS = "http://127.0.0.1:8265"
    warnings = [w for w in run_checks() if w.id == "rollouts.W009"]
    assert len(warnings) == 1 and INSTALL_RAY in warnings[0].msg


def test_the_demo_spec_loads_with_either_backend():
    spec = load_spec(DEMO)
    assert spec.backend == "local" and spec.ray == {}
    assert with_backend(spec, "ray", "http://127.0.0.1:8265").backend == "ray"


def test_a_local_command_that_cannot_start_is_a_409_and_leaves_nothing(client, settings, tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('[job]\ncommand = ["no-such-trainer-program", "--run-dir", "{run_dir}"]\n')
    settings.ROLLOUTS_TRAIN_SPEC = str(spec)
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    try:
        response = client.post(
            "/portal/rollouts/api/train/start", "{}", content_type="application/json"
        )
        assert response.status_code == 409  # it was a 500 (FileNotFoundError from Popen)
        message = response.json()["message"]
        assert message == (
            "cannot start the training command no-such-trainer-program: No such file or directory"
        )
        assert client.get("/portal/rollouts/api/train/state").json()["job"]["status"] == "idle"
        assert not (tmp_path / "runs").exists()
    finally:
        forget_managers()
