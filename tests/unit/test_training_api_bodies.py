"""Every bad body of `POST api/train/start|pause|resume|stop` is a 400 (not a JSON object: too
big, too deep, not UTF-8, not JSON, not text) or a 409 naming the field (a value the spec
refuses), never a 500; and a refused start leaves nothing behind (issue 26, items 7 and 12)."""

from __future__ import annotations

import json

import pytest

from rollouts.training.manager import forget_managers, manager_for
from tests.support.training import SLEEPER_SPEC

PREFIX = "/portal/rollouts/api/train"


@pytest.fixture
def spec_dir(tmp_path, settings):
    (tmp_path / "spec.toml").write_text(SLEEPER_SPEC)
    settings.ROLLOUTS_TRAIN_SPEC = str(tmp_path / "spec.toml")
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    yield tmp_path
    forget_managers()


def post(client, name, raw, **extra):
    data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    return client.post(f"{PREFIX}/{name}", data, content_type="application/json", **extra)


def answer(response, status):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json"
    data = json.loads(response.content)
    assert data["ok"] is False and data["status"] == status and data["message"]
    return data


def values(text):
    return '{"values": ' + text + "}"


MALFORMED = {
    "over 2.5 MB (Django's own limit)": values('{"name": "' + "a" * 3_000_000 + '"}'),
    "over 64 KiB": values('{"name": "' + "a" * 70_000 + '"}'),
    "arrays 20,000 deep": values("[" * 20_000 + "]" * 20_000),
    "arrays 30,000 deep": values("[" * 30_000 + "]" * 30_000),
    "objects 10,000 deep": values('{"":' * 10_000 + "1" + "}" * 10_000),
    "17 levels": values('{"name": ' + "[" * 16 + "]" * 16 + "}"),
    "a lone surrogate in a value": values('{"name": "\\ud800"}'),
    "a lone low surrogate": values('{"name": "a\\udc00b"}'),
    "a lone surrogate in a key": values('{"\\udbff": 1}'),
    "a raw surrogate": values('{"name": "\ud800"}'),  # (bytes ED A0 80: not UTF-8)
    "not UTF-8": b'{"values": {"name": "\xff"}}',
    "UTF-16": '{"values": {}}'.encode("utf-16"),
    "not JSON": "values=1",
    "cut short": '{"values": {"steps": 1',
    "NaN": values('{"seconds": NaN}'),
    "-Infinity": values('{"seconds": -Infinity}'),
    "5,000 digits": values('{"seed": ' + "9" * 5000 + "}"),
    "an array": "[1, 2]",
    "a string": '"start"',
}


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_start_body_is_a_400_and_starts_nothing(client, spec_dir, raw):
    answer(post(client, "start", raw), 400)
    assert not (spec_dir / "runs").exists()


@pytest.mark.parametrize("name", ["pause", "resume", "stop"])
@pytest.mark.parametrize(
    "raw", [MALFORMED[k] for k in ("over 2.5 MB (Django's own limit)", "arrays 30,000 deep")]
)
def test_a_malformed_action_body_is_a_400(client, spec_dir, name, raw):
    answer(post(client, name, raw), 400)


def test_a_content_length_that_is_not_a_number_is_a_400(client, spec_dir):
    answer(post(client, "start", "{}", CONTENT_LENGTH="many"), 400)


def test_the_400s_say_what_is_wrong(client, spec_dir):
    said = {
        key: answer(post(client, "start", MALFORMED[key]), 400)["message"]
        for key in ("over 2.5 MB (Django's own limit)", "arrays 30,000 deep", "17 levels")
    }
    assert said["over 2.5 MB (Django's own limit)"] == "the body is too large (64 KiB at most)"
    assert said["arrays 30,000 deep"] == "the body is nested too deeply (16 levels at most)"
    assert said["17 levels"] == said["arrays 30,000 deep"]
    surrogate = answer(post(client, "start", MALFORMED["a lone surrogate in a value"]), 400)
    assert "lone surrogate" in surrogate["message"]
    assert "NaN" in answer(post(client, "start", MALFORMED["NaN"]), 400)["message"]
    digits = answer(post(client, "start", MALFORMED["5,000 digits"]), 400)["message"]
    assert digits == "the body is not JSON: a number has more than 4300 digits"


HUGE = "9" * 400
REFUSED = {
    "a 400-digit integer under a max": ('{"steps": ' + HUGE + "}", "steps", "at most 100000"),
    "a 400-digit integer, no max": ('{"seed": ' + HUGE + "}", "seed", "64 bits"),
    "a 400-digit float": ('{"seconds": ' + HUGE + "}", "seconds", "finite number"),
    "a C1 control (NEL)": ('{"name": "a\\u0085b"}', "name", "control character (U+0085)"),
    "a C1 control (CSI)": ('{"data": "a\\u009b"}', "data", "control character (U+009B)"),
    "a bidi override": ('{"name": "txt.exe\\u202egpj"}', "name", "bidirectional"),
    "a bidi isolate": ('{"data": "a\\u2066b"}', "data", "bidirectional control (U+2066)"),
    "a path that is an option": ('{"data": "--help"}', "data", "may not begin with '-'"),
    "a string that is an option": ('{"name": "--help"}', "name", "may not begin with '-'"),
}


@pytest.mark.parametrize(("raw", "field", "said"), REFUSED.values(), ids=REFUSED.keys())
def test_a_value_the_spec_refuses_is_a_409_naming_it_and_starts_nothing(
    client, spec_dir, raw, field, said
):
    data = answer(post(client, "start", values(raw)), 409)
    assert list(data["errors"]) == [field] and said in data["errors"][field]
    assert not (spec_dir / "runs").exists()


def test_a_refused_start_beside_a_finished_job_leaves_its_run_alone(client, spec_dir):
    started = post(client, "start", values('{"seconds": 0}'))
    assert started.status_code == 200, started.content
    runs = spec_dir / "runs"
    (run,) = runs.iterdir()
    job = manager_for(spec_dir / "spec.toml").job
    assert job is not None and job.wait(20)
    record = (run / "job.json").read_bytes()
    bad = [*MALFORMED.values(), *(values(raw) for raw, _, _ in REFUSED.values())]
    for raw in bad:
        assert post(client, "start", raw).status_code in (400, 409)
    assert list(runs.iterdir()) == [run]
    assert (run / "job.json").read_bytes() == record
