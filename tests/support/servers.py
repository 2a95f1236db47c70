"""Real `manage.py visualize` processes for end-to-end tests and benchmarks (standard library only).

`run_visualize(data_dir)` starts the viewer exactly as a user would, on a free loopback port, in
its own process group, and always stops it again: SIGTERM first (what `kill` and a service
manager send), SIGKILL for the whole group if it does not exit in time. Its output goes to
files, not pipes, so a chatty server can never block on a full pipe while a test waits on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
START_TIMEOUT = 30.0  # seconds until the API must answer
# The viewers we start keep their disk cache here (their default, under XDG_CACHE_HOME), never
# in the user's own ~/.cache.
CACHE_HOME = Path(tempfile.mkdtemp(prefix="rollouts-cache-home-"))
STOP_TIMEOUT = 10.0  # seconds between SIGTERM and SIGKILL
READY_PATH = "/api/jsonl/subdirs"


class ServerError(RuntimeError):
    """The server did not come up; the message holds everything it printed."""


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not strict JSON: {name}")


def loads_strict(body: bytes | str) -> Any:
    """json.loads that refuses NaN/Infinity: the API promises strict JSON."""
    return json.loads(body, parse_constant=_reject_constant)


def request(
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    data: bytes | None = None,
    timeout: float = 30.0,
) -> tuple[int, dict[str, str], bytes]:
    """(status, headers with lower-case names, body), for error statuses too."""
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def get_json(url: str, **kwargs: Any) -> tuple[int, Any]:
    """(status, strictly parsed JSON body); `kwargs` as for `request`."""
    status, headers, body = request(url, **kwargs)
    content_type = headers.get("content-type", "")
    if not content_type.startswith("application/json"):
        raise AssertionError(f"{url} answered {status} with {content_type!r}: {body[:300]!r}")
    return status, loads_strict(body)


def _proc_stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of a live process, from /proc; None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[2])


def child_pids(pid: int) -> list[int]:
    """Live direct children of `pid` (gunicorn's workers, for the arbiter), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None and stat[0] == pid:
                found.append(int(entry.name))
    return sorted(found)


def process_group_members(pgid: int) -> list[int]:
    """Live processes in process group `pgid` (a server's leftovers once its arbiter is gone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None and stat[1] == pgid:
                found.append(int(entry.name))
    return sorted(found)


def proc_status(pid: int) -> dict[str, int]:
    """The kB figures of /proc/<pid>/status (VmRSS, RssAnon, VmHWM, ...), converted to bytes."""
    figures: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        parts = value.split()
        if len(parts) == 2 and parts[1] == "kB":
            figures[name] = int(parts[0]) * 1024
    return figures


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment minus anything that would change what the viewer is (then `env`).

    pytest-django exports DJANGO_SETTINGS_MODULE=tests.settings, and a developer's shell may
    hold RELAX_* knobs: the server under test must be the standalone tool as users run it.
    """
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("RELAX_") and k != "DJANGO_SETTINGS_MODULE"
    }
    base.update(
        DJANGO_SETTINGS_MODULE="relax_site.settings",
        PYTHONUNBUFFERED="1",
        XDG_CACHE_HOME=str(CACHE_HOME),
    )
    base.update(env or {})
    return base


def run_manage(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """`python manage.py ARGS` to completion (for commands expected to exit by themselves)."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO_ROOT,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    port: int
    base_url: str  # http://127.0.0.1:PORT, without any --base-path (the API answers both ways)
    stdout_path: Path
    stderr_path: Path
    started_at: float  # time.perf_counter() just before the process was spawned
    ready_at: float | None = None  # time.perf_counter() when the API first answered
    returncode: int | None = None  # set by stop()
    killed: bool = False  # True when SIGTERM was not enough
    worker_pids: list[int] = field(default_factory=list)  # seen while it was running
    owned_log_dir: Path | None = None  # made for this server: read, then removed, on stop
    _captured: tuple[str, str] | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def url(self, path: str) -> str:
        return self.base_url + path

    def stdout(self) -> str:
        if self._captured is not None:
            return self._captured[0]
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        if self._captured is not None:
            return self._captured[1]
        return self.stderr_path.read_text(errors="replace")

    def output(self) -> str:
        return self.stdout() + self.stderr()

    def workers(self) -> list[int]:
        """gunicorn's worker processes right now (remembered for `stop`)."""
        pids = child_pids(self.proc.pid)
        self.worker_pids = sorted(set(self.worker_pids) | set(pids))
        return pids

    def wait_until_ready(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise ServerError(
                    f"visualize exited with code {self.proc.returncode} before answering:\n"
                    + self.output()
                )
            try:
                with urllib.request.urlopen(self.url(READY_PATH), timeout=2) as resp:
                    resp.read()
                self.ready_at = time.perf_counter()
                self.workers()
                return
            except urllib.error.HTTPError:
                self.ready_at = time.perf_counter()  # it answered, even if with an error
                self.workers()
                return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(
                    f"visualize did not answer {READY_PATH} within {timeout:.0f} s:\n"
                    + self.output()
                )
            time.sleep(0.02)

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then SIGKILL to the whole group after `timeout`; the exit code, recorded."""
        if self.returncode is not None:
            return self.returncode
        if self.proc.poll() is None:
            self.workers()
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                # Not reaped yet, so the group id cannot have been reused: it is still ours.
                self.killed = True
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.returncode = self.proc.returncode
        self._kill_stray_workers()
        if self.owned_log_dir is not None:
            self._captured = (self.stdout(), self.stderr())
            shutil.rmtree(self.owned_log_dir, ignore_errors=True)
        return self.returncode

    def _kill_stray_workers(self) -> None:
        """A worker that outlived its arbiter would hold the port: end it, by pid, if still ours."""
        for pid in self.worker_pids:
            stat = _proc_stat(pid)
            if stat is not None and stat[1] == self.proc.pid:  # still in our process group
                self.killed = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def start_visualize(
    data_dir: Path | str,
    *extra_args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    launcher: Sequence[str] = (sys.executable, "manage.py", "visualize"),
    cwd: Path = REPO_ROOT,
) -> ServerProcess:
    """Spawn `manage.py visualize DATA_DIR --port PORT ARGS` without waiting for it.

    `launcher` is what runs in place of `python manage.py visualize` (the console script);
    `cwd` is the checkout it runs from (another revision's worktree, for `bench_compare.py`).
    """
    port = free_port() if port is None else port
    owned = Path(tempfile.mkdtemp(prefix="visualize-")) if log_dir is None else None
    log_dir = owned or log_dir
    assert log_dir is not None
    stdout_path, stderr_path = log_dir / f"stdout-{port}.txt", log_dir / f"stderr-{port}.txt"
    # Positional arguments (more DATA_DIRs) may be among `extra_args`: they come first.
    argv = [*launcher, str(data_dir), *extra_args, "--port", str(port)]
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        started_at = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=child_env(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group: Ctrl+C in pytest does not reach it
        )
    return ServerProcess(
        proc,
        port,
        f"http://{LOOPBACK}:{port}",
        stdout_path,
        stderr_path,
        started_at,
        owned_log_dir=owned,
    )


@contextlib.contextmanager
def run_visualize(
    data_dir: Path | str,
    *extra_args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    start_timeout: float = START_TIMEOUT,
    launcher: Sequence[str] = (sys.executable, "manage.py", "visualize"),
) -> Iterator[ServerProcess]:
    """A running viewer, answering on `.base_url`; stopped on exit however the block ends.

    `env` is added to a clean copy of this environment (see `child_env`). A free port is picked
    unless `port` is given (needed when an argument such as --base-path must name it).
    """
    server = start_visualize(
        data_dir, *extra_args, port=port, env=env, log_dir=log_dir, launcher=launcher
    )
    try:
        server.wait_until_ready(start_timeout)
        yield server
    finally:
        server.stop()
