"""The Ray backend against a real Ray cluster, with no traffic off loopback.

Ray binds and connects on the machine's own network address unless it has none, so this test
makes a network namespace with only loopback (`unshare --net`, then `ip link set lo up`), and a
pid namespace (`--pid --kill-child`, so nothing Ray or a job started can outlive it), and runs
`tests/ray/ray_scenarios.py` in there: the head, the viewer and the client all inside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.servers import REPO_ROOT

pytestmark = [pytest.mark.ray, pytest.mark.e2e]

IN_CI = os.environ.get("CI") == "true"
LIMIT_SECONDS = 900  # the whole scenario run, bounded


def _missing() -> str | None:
    try:
        import ray.job_submission  # noqa: F401
    except ImportError:
        return "Ray is not installed (pip install '.[ray]')"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is missing (util-linux, iproute2)"
    probe = subprocess.run(
        ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return f"cannot make a network namespace here: {probe.stderr.strip()}"
    return None


def test_the_ray_backend_on_a_real_cluster_inside_a_loopback_only_namespace(tmp_path):
    missing = _missing()
    if missing:
        if IN_CI:
            pytest.fail(f"CI runs the Ray tests: {missing}")
        pytest.skip(missing)
    inner = [sys.executable, "-m", "pytest", "tests/ray/ray_scenarios.py", "-p", "no:cacheprovider"]
    script = 'ip link set lo up && exec "$@"'
    argv = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
    argv += ["sh", "-c", script, "sh", *inner, "-v", "-rA", "--tb=short"]
    argv += [f"--basetemp={tmp_path / 'inner'}"]
    env = {**os.environ, "RELAX_RAY_NAMESPACE": "1"}
    done = subprocess.run(
        argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=LIMIT_SECONDS
    )
    said = done.stdout + done.stderr
    print(said)  # each scenario's line, with -rA, in this test's output
    assert done.returncode == 0, said[-20000:]
    assert " passed" in said.splitlines()[-1] and " failed" not in said.splitlines()[-1]
