"""A real nginx in front of a real gunicorn, for the reverse-proxy tests (standard library only).

`run_proxy(style, data_dir, workdir)` starts `gunicorn relax_site.wsgi -c
python:relax_site.gunicorn_conf` configured only by environment variables, then Debian's nginx as a
standalone process (its config, pid file, logs and temp files all under `workdir`), each on a
free loopback port in its own process group, and always stops both again: SIGQUIT/SIGTERM
first, SIGKILL for the whole group if that is not enough. Output goes to files, never pipes.

`LOCATIONS` holds the two nginx `location` blocks docs/deployment.md documents, as written.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.recipes import recipe
from tests.support.servers import LOOPBACK, REPO_ROOT, child_env, free_port, process_group_members

PREFIX = "/absproxy/8080"  # the proxy's path, whatever port nginx really listens on
GUNICORN_CONFIG = "python:relax_site.gunicorn_conf"  # importable: no checkout needed
START_TIMEOUT = 30.0  # seconds until a server must answer
STOP_TIMEOUT = 10.0  # seconds between the polite signal and SIGKILL

# The nginx snippets of docs/deployment.md, as written there (port 8080 becomes `{port}`,
# gunicorn's). `Host $http_host` (not `$host`, which drops the port) lets Django see the host
# the browser used: ALLOWED_HOSTS checks it, and the same-origin check of POST api/cache/clear
# compares it with the browser's Origin.
LOCATIONS = {
    # A URI after the address replaces the matched prefix: gunicorn sees /api/...
    "prefix-stripped": recipe("nginx-strip").replace("127.0.0.1:8080", "127.0.0.1:{port}"),
    # No URI after the address: gunicorn sees the full /absproxy/8080/api/...
    "prefix-forwarded": recipe("nginx-full").replace("127.0.0.1:8080", "127.0.0.1:{port}"),
}

# Everything nginx writes stays in the directory given to it with `-p`, so it needs neither
# root nor /var; `daemon off` keeps the master our child, so we can stop it by pid.
_NGINX_CONF = """\
daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;
{user}
events {{
    worker_connections 64;
}}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen {host}:{listen_port};
{location}
    }}
}}
"""


def nginx_path() -> str | None:
    """`RELAX_NGINX`, else nginx on PATH or in /usr/sbin (not on a normal user's PATH)."""
    configured = os.environ.get("RELAX_NGINX")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("nginx", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin"]))


def require_nginx() -> str:
    path = nginx_path()
    if path is None:
        message = "no nginx: install Debian's `nginx` or set RELAX_NGINX to its path"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: the proxy tests must run)", pytrace=False)
        pytest.skip(message)
    return path


def location_block(style: str, upstream_port: int) -> str:
    return LOCATIONS[style].replace("{port}", str(upstream_port))


def write_nginx_conf(workdir: Path, listen_port: int, location: str) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    # As root, nginx would run its workers as `nobody`, who cannot enter pytest's private
    # temp directory to write proxy buffers; keep them as the user running the test.
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
    indented = "\n".join("        " + line for line in location.splitlines())
    conf = workdir / "nginx.conf"
    conf.write_text(
        _NGINX_CONF.format(
            dir=workdir, user=user, host=LOOPBACK, listen_port=listen_port, location=indented
        )
    )
    return conf


@dataclass
class Process:
    """A server started in its own process group, with its output in `log_dir`."""

    name: str
    proc: subprocess.Popen[bytes]
    port: int
    log_dir: Path
    stop_signal: signal.Signals
    stopped: bool = False

    @property
    def pgid(self) -> int:
        return self.proc.pid  # start_new_session made it the group leader

    def output(self) -> str:
        texts = []
        for path in sorted(self.log_dir.glob("*.log")) + sorted(self.log_dir.glob("*.txt")):
            texts.append(f"--- {path.name}\n{path.read_text(errors='replace')}")
        return "\n".join(texts)

    def wait_until_answers(self, path: str, timeout: float = START_TIMEOUT) -> None:
        """Until an HTTP request on `path` gets any answer (the app, not just the socket)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with code {self.proc.returncode}:\n{self.output()}"
                )
            try:
                fetch(f"http://{LOOPBACK}:{self.port}", path, timeout=2)
                return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not answer within {timeout:.0f} s")
            time.sleep(0.02)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """The polite signal, then SIGKILL to the whole group; then nothing of it may remain."""
        if not self.stopped and self.proc.poll() is None:
            self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                # Not reaped yet, so the group id cannot have been reused: it is still ours.
                os.killpg(self.pgid, signal.SIGKILL)
                self.proc.wait()
        self.stopped = True
        leftovers = process_group_members(self.pgid)
        for pid in leftovers:  # workers that outlived their master
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert not leftovers, f"{self.name} left processes {leftovers} behind:\n{self.output()}"


def start(
    name: str,
    argv: list[str],
    *,
    port: int,
    log_dir: Path,
    stop_signal: signal.Signals,
    env: Mapping[str, str] | None = None,
) -> Process:
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "stdout.txt").open("wb") as out, (log_dir / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            argv,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,  # its own process group: Ctrl+C in pytest does not reach it
        )
    return Process(name, proc, port, log_dir, stop_signal)


def gunicorn_env(data_dir: Path, bind_env: Mapping[str, str], **relax: str) -> dict[str, str]:
    """Only environment variables configure the server, as in docs/deployment.md."""
    env = child_env({"RELAX_DATA_DIR": str(data_dir), "RELAX_BASE_PATH": PREFIX, **relax})
    for name in ("PORT", "GUNICORN_CMD_ARGS", "SCRIPT_NAME", "FORWARDED_ALLOW_IPS"):
        env.pop(name, None)  # a developer's shell must not change what is tested
    env.update(bind_env)
    return env


def start_gunicorn(env: Mapping[str, str], port: int, log_dir: Path) -> Process:
    gunicorn = Path(sys.executable).with_name("gunicorn")  # the venv's console script
    argv = [str(gunicorn), "relax_site.wsgi", "-c", GUNICORN_CONFIG]
    return start("gunicorn", argv, port=port, log_dir=log_dir, stop_signal=signal.SIGTERM, env=env)


def start_nginx(nginx: str, workdir: Path, location: str) -> Process:
    port = free_port()
    conf = write_nginx_conf(workdir, port, location)
    # -e: even messages from before the config is read go to our directory.
    argv = [nginx, "-p", str(workdir), "-c", str(conf), "-e", str(workdir / "error.log")]
    # SIGQUIT is nginx's graceful shutdown (SIGTERM is its fast one).
    return start("nginx", argv, port=port, log_dir=workdir, stop_signal=signal.SIGQUIT)


@dataclass
class Proxy:
    style: str
    gunicorn: Process
    nginx: Process

    @property
    def origin(self) -> str:
        """What a browser on the proxied pages sends as `Origin`."""
        return f"http://{LOOPBACK}:{self.nginx.port}"


@contextlib.contextmanager
def stopping(*processes: Process) -> Iterator[None]:
    """Stop every process on exit, the last started first, however the block ends."""
    try:
        yield
    finally:
        errors: list[Exception] = []
        for process in reversed(processes):
            try:
                process.stop()
            except Exception as exc:  # stop the others anyway, then report the first
                errors.append(exc)
        if errors:
            raise errors[0]


@contextlib.contextmanager
def run_proxy(
    style: str,
    data_dir: Path,
    workdir: Path,
    *,
    nginx: str,
    bind_env: Mapping[str, str] | None = None,
    relax: Mapping[str, str] | None = None,
) -> Iterator[Proxy]:
    """gunicorn (bound as `bind_env` says, default `PORT`) behind nginx in `style`; both stopped
    on exit. `bind_env` may use `{port}` for the free port picked for gunicorn."""
    port = free_port()
    bind = {k: v.format(port=port) for k, v in (bind_env or {"PORT": "{port}"}).items()}
    env = gunicorn_env(data_dir, bind, **dict(relax or {}))
    gunicorn = start_gunicorn(env, port, workdir / "gunicorn")
    with stopping(gunicorn):
        gunicorn.wait_until_answers("/api/jsonl/subdirs")
        front = start_nginx(nginx, workdir / "nginx", location_block(style, port))
        with stopping(front):
            front.wait_until_answers(PREFIX + "/api/jsonl/subdirs")
            yield Proxy(style, gunicorn, front)


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


def fetch(
    base_url: str,
    path: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = 30.0,
) -> Response:
    """One request, redirects not followed (a test must see where they point)."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname or LOOPBACK, parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def is_loopback_listener(log: str, port: int) -> bool:
    """gunicorn's own word on its address ("Listening at: http://127.0.0.1:PORT")."""
    return f"Listening at: http://{LOOPBACK}:{port} " in log


def port_is_closed(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex((LOOPBACK, port)) != 0
