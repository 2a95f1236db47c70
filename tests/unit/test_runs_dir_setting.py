"""Where a folder of runs to list while serving comes from: RELAX_RUNS_DIR (relax_site) and
`visualize PARENT` (ROLLOUTS_RUNS_DIR), while several DATA_DIRs are still named runs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from relax_site.environment import read_environment
from tests.support.servers import REPO_ROOT


def test_relax_runs_dir_is_read_and_unset_is_none():
    assert read_environment({"RELAX_RUNS_DIR": "/srv/runs"}).runs_dir == "/srv/runs"
    assert read_environment({}).runs_dir is None
    assert read_environment({"RELAX_RUNS_DIR": ""}).runs_dir is None


def test_the_standalone_site_sets_rollouts_runs_dir_from_relax_runs_dir(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAX_", "DJANGO_"))}
    env["RELAX_RUNS_DIR"] = str(tmp_path)
    script = (
        "import json, relax_site.settings as s;"
        "print(json.dumps([s.ROLLOUTS_RUNS_DIR, s.ROLLOUTS_DATA_DIRS, s.ROLLOUTS_DATA_DIR]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    ).stdout  # fmt: skip
    assert json.loads(out) == [str(tmp_path), {}, None]


def write_run(root: Path, name: str) -> Path:
    train = root / name / "rollout_result" / "train"
    train.mkdir(parents=True)
    (train / "0.jsonl").write_text('{"prompt": "p", "response": "r", "reward": 1.0}\n')
    return root / name


@pytest.fixture
def served(settings, monkeypatch) -> dict[str, Any]:
    """What `visualize` leaves in the settings when it would start serving (it does not)."""
    # apply_settings writes into settings.CACHES' dict: this test's own copy.
    settings.CACHES = copy.deepcopy(settings.CACHES)
    settings.ROLLOUTS_RUNS_DIR = None
    seen: dict[str, Any] = {}

    def serve(application: Any, *, listener: Any, workers: int, threads: int) -> None:
        listener.close()
        for name in ("ROLLOUTS_RUNS_DIR", "ROLLOUTS_DATA_DIRS", "ROLLOUTS_DATA_DIR"):
            seen[name] = getattr(django_settings, name)

    import rollouts.server

    monkeypatch.setattr(rollouts.server, "serve", serve)
    return seen


def visualize(*dirs: Path) -> None:
    call_command("visualize", *map(str, dirs), "--port", "0", "--disk-cache", "off")


def test_visualize_of_a_folder_of_runs_lists_it_while_serving(served, tmp_path):
    parent = tmp_path / "runs"
    write_run(parent, "a")
    write_run(parent, "b")
    visualize(parent)
    assert served == {
        "ROLLOUTS_RUNS_DIR": str(parent.resolve()),
        "ROLLOUTS_DATA_DIRS": {},  # not named: the folder's listing has them
        "ROLLOUTS_DATA_DIR": None,
    }


def test_visualize_of_several_runs_names_them_and_lists_no_folder(served, tmp_path):
    first, second = write_run(tmp_path, "a"), write_run(tmp_path, "b")
    visualize(first, second)
    assert served["ROLLOUTS_RUNS_DIR"] is None
    assert served["ROLLOUTS_DATA_DIRS"] == {"a": str(first.resolve()), "b": str(second.resolve())}


def test_visualize_of_one_run_serves_it_alone(served, tmp_path):
    run = write_run(tmp_path, "a")
    visualize(run)
    assert served["ROLLOUTS_RUNS_DIR"] is None and served["ROLLOUTS_DATA_DIRS"] == {}
    assert served["ROLLOUTS_DATA_DIR"] == str(run.resolve())
