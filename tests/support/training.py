"""What the training tests share: a job spec around `fake_trainer.py` (its modes obey, ignore
and crash) and waiting for a condition, bounded in time."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.servers import REPO_ROOT, get_json
from tests.support.wait import wait_for

FAKE = REPO_ROOT / "tests" / "support" / "fake_trainer.py"
FAKE_SPEC = """
[job]
{head}command = ["{{python}}", "{fake}", "--run-dir", "{{run_dir}}", "--mode", "{{mode}}",
           "--steps", "{{steps}}", "--step-seconds", "{{step_seconds}}",
           "--crash-at", "{{crash_at}}"]
episodes = "episodes.csv"
grace_seconds = {grace}
resume_args = ["--resume", "{{resume_path}}"]
{tail}
[[fields]]
name = "mode"
type = "choice"
choices = ["obey", "ignore", "crash"]
default = "obey"
[[fields]]
name = "steps"
type = "int"
default = 400
[[fields]]
name = "step_seconds"
type = "float"
default = {step_seconds}
[[fields]]
name = "crash_at"
type = "int"
default = 4
"""


def write_fake_spec(
    directory: Path, grace: float = 10.0, step_seconds: float = 0.05, head: str = "", tail: str = ""
) -> Path:
    """spec.toml in `directory`: `head` goes first in [job], `tail` after it (e.g. a [ray])."""
    path = directory / "spec.toml"
    path.write_text(
        FAKE_SPEC.format(fake=FAKE, grace=grace, step_seconds=step_seconds, head=head, tail=tail)
    )
    return path


def until(check: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
    """`check()`'s first true value, asked every 50 ms: `wait_for`, so the failure at `timeout`
    names the last value seen (or the last error `check` raised, which is asked through)."""
    return wait_for(check, what or repr(check), timeout, interval=0.05)


@contextlib.contextmanager
def stopped_after(job: Any, timeout: float = 60.0) -> Iterator[Any]:
    """`job` for the block; if it still runs when the block ends (a failed assertion), stopped
    and waited for, so no child outlives its test."""
    try:
        yield job
    finally:
        if job.running:
            job.stop()
            job.wait(timeout)


def post_train(server: Any, name: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST `body` as JSON to the server's `api/train/<name>`: (status, answer)."""
    return get_json(
        server.url(f"/api/train/{name}"),
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )


# A job that only sleeps, with a field of every kind the API checks (the bad-input tests of
# the training API, in-process and through `manage.py train`).
SLEEPER_SPEC = """
[job]
command = ["{python}", "-c", "import time; time.sleep(float({seconds}))", "{name}", "{data}"]
control = false
grace_seconds = 0.5
[[fields]]
name = "seconds"
type = "float"
default = 30.0
min = 0.0
[[fields]]
name = "steps"
type = "int"
default = 10
min = 1
max = 100000
[[fields]]
name = "seed"
type = "int"
default = 0
[[fields]]
name = "name"
type = "string"
default = "run"
[[fields]]
name = "data"
type = "path"
default = "data.jsonl"
"""
