"""A real single-node Ray head for the Ray backend's tests, on loopback only.

The tests run inside a network namespace with nothing but loopback (`tests/ray/test_on_ray.py`
makes it), so whatever Ray binds, it binds there. The head is `ray start --head --block` in its
own process group, stopped by that group (never `ray stop`, which ends Ray processes by name).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.servers import free_port

START_SECONDS = 90.0  # a cold head on two busy cores
STOP_SECONDS = 20.0


def inside_loopback_namespace() -> bool:
    """Whether this process's network has only the loopback interface (and it is up)."""
    try:
        out = subprocess.run(
            ["ip", "-o", "link", "show"], capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    names = [line.split(":")[1].strip().split("@")[0] for line in out.splitlines() if ":" in line]
    return names == ["lo"] and "UP" in out


@dataclass
class RayHead:
    proc: subprocess.Popen[bytes]
    address: str  # the dashboard, as JobSubmissionClient takes it
    temp_dir: Path
    log: Path

    def stop(self) -> None:
        """The head's whole process group: SIGTERM, then SIGKILL after STOP_SECONDS."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # a helper of the head left in its group


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def _runs_a_job(address: str) -> bool:
    """Whether the head's job agent takes a job and runs it to the end (a warm-up, so the first
    test's timings are not the agent's start)."""
    from ray.job_submission import JobSubmissionClient

    try:
        client = JobSubmissionClient(address)
        sid = client.submit_job(entrypoint="true")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if str(client.get_job_status(sid).value) in ("SUCCEEDED", "FAILED", "STOPPED"):
                return str(client.get_job_status(sid).value) == "SUCCEEDED"
            time.sleep(0.25)
    except Exception:  # not ready yet: asked again
        return False
    return False


@contextlib.contextmanager
def ray_head() -> Iterator[RayHead]:
    """A head on 127.0.0.1 (dashboard on a free port), stopped however the block ends."""
    temp_dir = Path(tempfile.mkdtemp(prefix="rv-ray-", dir="/tmp"))  # Ray's sockets: short paths
    log = temp_dir / "head.log"
    dashboard = free_port()
    argv = [
        str(Path(sys.executable).with_name("ray")),
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dashboard}",
        f"--port={free_port()}",
        "--num-cpus=4",
        "--object-store-memory=100000000",
        "--disable-usage-stats",
        f"--temp-dir={temp_dir}",
    ]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    head = RayHead(proc, f"http://127.0.0.1:{dashboard}", temp_dir, log)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _answers(head.address + "/api/version") or not _runs_a_job(head.address):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Ray head did not start:\n" + log.read_text()[-3000:])
            time.sleep(0.5)
        yield head
    finally:
        head.stop()
        shutil.rmtree(temp_dir, ignore_errors=True)
