"""Bad bodies and bad specs against the real `manage.py train` (gunicorn on loopback, a real
child for the start that is allowed): each bad body of `POST api/train/*` is a 400 or a 409
and leaves no run directory; a spec no form can use stops `train` with one line, no traceback
(issue 26, items 7 and 12)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.servers import get_json, request, run_manage, run_visualize
from tests.support.training import SLEEPER_SPEC, until

pytestmark = pytest.mark.e2e

TRAIN = (sys.executable, "manage.py", "train")


def values(text: str) -> bytes:
    return ('{"values": ' + text + "}").encode("utf-8", "surrogatepass")


BAD_BODIES = [
    (values('{"name": "' + "a" * 3_000_000 + '"}'), 400),  # over Django's 2.5 MB
    (values("[" * 25_000 + "]" * 25_000), 400),  # nested 25,000 deep
    (values('{"name": "\\ud800"}'), 400),  # a lone surrogate
    (values('{"steps": ' + "9" * 400 + "}"), 409),  # a 400-digit integer
    (values('{"name": "a\\u0085b"}'), 409),  # a C1 control
    (values('{"name": "a\\u202eb"}'), 409),  # a bidi override
    (values('{"data": "--help"}'), 409),  # an option, not a path
    (values('{"name": "--help"}'), 409),  # an option: "{name}" is an argument of its own
]


def test_bad_bodies_are_400s_and_409s_and_leave_no_run_directory(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SLEEPER_SPEC)
    with run_visualize(spec, "--no-browser", launcher=TRAIN) as server:
        for body, wanted in BAD_BODIES:
            for name in ("start", "pause", "resume", "stop") if wanted == 400 else ("start",):
                status, _, answer = request(
                    server.url(f"/api/train/{name}"),
                    method="POST",
                    data=body,
                    headers={"Content-Type": "application/json"},
                )
                assert status == wanted, (name, body[:60], answer[:300])
                data = json.loads(answer)
                assert data["ok"] is False and data["status"] == wanted
                assert str(tmp_path) not in answer.decode()
            assert not (tmp_path / "runs").exists(), body[:60]
        # the server still takes a good start, and its run directory is the only one
        status, started = get_json(
            server.url("/api/train/start"), method="POST", data=values('{"seconds": 0}')
        )
        assert status == 200, started
        until(lambda: get_json(server.url("/api/train/state"))[1]["job"]["outcome"], what="end")
        assert [p.name for p in (tmp_path / "runs").iterdir()] == [started["job"]["run"]]
        assert "Traceback" not in server.output()


def deep(depth: int) -> str:
    return "[job]\ncommand = ['x']\nextra = " + "[" * depth + "]" * depth + "\n"


FIELD = "[job]\ncommand = ['x', '{f}']\n[[fields]]\nname = 'f'\n"
BAD_SPECS = {
    "min = nan": (FIELD + "type = 'float'\ndefault = 1.0\nmin = nan\n", "min must be a finite"),
    "max = inf": (FIELD + "type = 'int'\ndefault = 1\nmax = inf\n", "max must be a finite"),
    "default = nan": (FIELD + "type = 'float'\ndefault = nan\n", "default must be a finite"),
    "50,000 deep": (deep(50_000), "nested too deeply"),
    "an option as default": (FIELD + "type = 'path'\ndefault = '--help'\n", "begin with '-'"),
}


@pytest.mark.parametrize(("text", "said"), BAD_SPECS.values(), ids=BAD_SPECS.keys())
def test_a_spec_no_form_can_use_stops_train_with_one_line(tmp_path: Path, text, said) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    result = run_manage("train", str(spec), "--no-browser", "--port", "0")
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("CommandError: ") and said in lines[0]
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["spec.toml"]
