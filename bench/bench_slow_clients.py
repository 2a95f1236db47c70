"""How long a normal request waits while slow and idle clients hold connections open.

    .venv/bin/python bench/bench_slow_clients.py                  # every option, 8 slow + 30 idle
    .venv/bin/python bench/bench_slow_clients.py --only chosen --slow 32 --idle 300
    PYTHONPATH=/tmp/uvicorn-target .venv/bin/python bench/bench_slow_clients.py  # + uvicorn

Each option is a fresh gunicorn (or uvicorn) serving a small demo data dir on a free loopback
port. For each, three scenarios run one after the other on the same server:

- `idle`: `--idle` sockets connect and send nothing;
- `slow`: `--slow` sockets send the start of a request header, then one more header byte every
  `--trickle` seconds, never finishing it;
- `both`: the two at once.

While a scenario's sockets are open, normal requests (`GET` of a sample's JSON, a new
connection each, as a browser tab or `curl` makes them) run one after the other for `--window`
seconds, each given up after `--cap` seconds. Printed per option and scenario: the request's
usual time (median of 5 before any socket opens), the first request's delay and the worst
delay over the window (time minus usual time; `>CAP` when it was given up), and whether the
server still answers once the sockets are closed. Everything is bounded: the sockets and
requests by count, each scenario by `--window` + `--cap`, each server start by 30 s.

Options (the first is the configuration before issue 26, the last the one `rollouts/server.py`
serves with now):

| name | what |
|---|---|
| `gthread` | gunicorn's stock threaded worker, 8 threads, keep-alive 2 s (before) |
| `gthread-64` | the same with 64 threads and keep-alive 1 s: more threads, shorter holds |
| `asgi-django` | gunicorn 27's `asgi` worker (an asyncio loop) with Django's ASGI handler |
| `asgi-wsgi` | gunicorn's `asgi` worker with the WSGI app behind asgiref's `WsgiToAsgi` |
| `uvicorn` | uvicorn's WSGI interface, when `import uvicorn` works (not a dependency) |
| `chosen` | `relax_site.gunicorn_conf` as it is: what `rollouts.server.SERVING` says |

Loopback only; every process started here is stopped by its process group on exit.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import write_demo  # noqa: E402
from tests.support.servers import LOOPBACK, child_env, free_port  # noqa: E402
from tests.support.slow_clients import HeldOpen, held_open, timed_get  # noqa: E402

GUNICORN = (sys.executable, "-m", "gunicorn", "-c", "python:relax_site.gunicorn_conf")
ASGI_DJANGO = "django.core.asgi:get_asgi_application()"
ASGI_WSGI = "bench.bench_slow_clients:asgi_from_wsgi()"
START_TIMEOUT = 30.0  # seconds until a server must answer
USUAL_REQUESTS = 5
MAX_REQUESTS = 2000  # per scenario, whatever the window
PACE = 0.02  # seconds between two normal requests: the window is time, not a request count


def asgi_from_wsgi() -> Any:
    """The viewer's WSGI app as an ASGI app (gunicorn's factory syntax calls this)."""
    from asgiref.wsgi import WsgiToAsgi

    from relax_site.wsgi import application

    return WsgiToAsgi(application)


@dataclass(frozen=True)
class Option:
    name: str
    argv: tuple[str, ...]  # {port} is replaced by the port

    def command(self, port: int) -> list[str]:
        return [part.replace("{port}", str(port)) for part in self.argv]


def options() -> list[Option]:
    bind = ("-b", f"{LOOPBACK}:{{port}}")
    more_threads = ("--threads", "64", "--keep-alive", "1")
    uvicorn = ("--interface", "wsgi", "--host", LOOPBACK, "--port", "{port}")
    found = [
        Option("gthread", (*GUNICORN, *bind, "-k", "gthread", "relax_site.wsgi")),
        Option("gthread-64", (*GUNICORN, *bind, "-k", "gthread", *more_threads, "relax_site.wsgi")),
        Option("asgi-django", (*GUNICORN, *bind, "-k", "asgi", ASGI_DJANGO)),
        Option("asgi-wsgi", (*GUNICORN, *bind, "-k", "asgi", ASGI_WSGI)),
    ]
    if importlib.util.find_spec("uvicorn") is not None:
        argv = (sys.executable, "-m", "uvicorn", *uvicorn, "relax_site.wsgi:application")
        found.append(Option("uvicorn", argv))
    found.append(Option("chosen", (*GUNICORN, *bind, "relax_site.wsgi")))
    return found


@contextlib.contextmanager
def serving(option: Option, data_dir: Path, log_dir: Path) -> Iterator[int]:
    """The option's server on a free loopback port, stopped (its whole group) on exit."""
    port = free_port()
    env = child_env(
        {
            "RELAX_DATA_DIR": str(data_dir),
            "RELAX_DISK_CACHE": "off",
            "PORT": str(port),
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
            ),
        }
    )
    log = log_dir / f"{option.name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            option.command(port),
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not answers(port, "/api/jsonl/subdirs", timeout=2.0):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{option.name} did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def answers(port: int, path: str, timeout: float) -> bool:
    return timed_get(f"http://{LOOPBACK}:{port}{path}", timeout)[1] is not None


def request_time(port: int, path: str, cap: float) -> float | None:
    """Seconds for one GET on a new connection; None when it did not answer within `cap`."""
    took, status = timed_get(f"http://{LOOPBACK}:{port}{path}", cap)
    return took if status is not None else None


def scenario(port: int, path: str, usual: float, clients: HeldOpen, args: Any) -> str:
    delays: list[float | None] = []
    end = time.monotonic() + args.window
    while time.monotonic() < end and len(delays) < MAX_REQUESTS:
        took = request_time(port, path, args.cap)
        delays.append(None if took is None else max(took - usual, 0.0))
        time.sleep(PACE)
    given_up = f">{args.cap:g} s"

    def shown(delay: float | None) -> str:
        return given_up if delay is None else f"{delay:.3f} s"

    worst = None if None in delays else max(d for d in delays if d is not None)
    still = clients.open_count()
    return (
        f"first {shown(delays[0]):>9}  worst {shown(worst):>9}  ({len(delays)} requests;"
        f" {still}/{len(clients.sockets)} sockets still open)"
    )


def run_option(option: Option, data_dir: Path, log_dir: Path, path: str, args: Any) -> None:
    print(f"\n{option.name}: {' '.join(option.command(0)[1:])}", flush=True)
    try:
        with serving(option, data_dir, log_dir) as port:
            times = [request_time(port, path, args.cap) for _ in range(USUAL_REQUESTS)]
            if None in times:
                print("  a normal request did not answer on an idle server", flush=True)
                return
            usual = statistics.median(t for t in times if t is not None)
            print(f"  usual time {usual * 1000:.1f} ms", flush=True)
            for name, slow, idle in (
                ("idle", 0, args.idle),
                ("slow", args.slow, 0),
                ("both", args.slow, args.idle),
            ):
                with held_open(port, slow=slow, idle=idle, trickle=args.trickle) as clients:
                    line = scenario(port, path, usual, clients, args)
                after = request_time(port, path, args.cap)
                recovered = "answers after" if after is not None else "NO ANSWER after"
                print(f"  {name:>4} ({slow:>2} slow, {idle:>3} idle): {line}; {recovered}")
    except RuntimeError as exc:
        print(f"  skipped: {exc}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=8, help="slow-header sockets (default 8)")
    parser.add_argument("--idle", type=int, default=30, help="idle sockets (default 30)")
    parser.add_argument("--trickle", type=float, default=2.0, help="seconds between slow bytes")
    parser.add_argument("--window", type=float, default=6.0, help="seconds of requests per case")
    parser.add_argument("--cap", type=float, default=15.0, help="seconds before giving up")
    parser.add_argument("--only", action="append", default=[], help="an option's name")
    args = parser.parse_args()
    if not (0 <= args.slow <= 500 and 0 <= args.idle <= 900):
        parser.error("--slow takes 0-500 and --idle 0-900 sockets (one process's file limit)")
    chosen = [o for o in options() if not args.only or o.name in args.only]
    with tempfile.TemporaryDirectory(prefix="bench-slow-") as tmp:
        data_dir = write_demo(Path(tmp) / "data", train_steps=2, samples_per_step=8)
        path = "/api/jsonl/train/file/0.jsonl/sample/0"
        print(
            f"normal request: GET {path}; {args.slow} slow (a byte every {args.trickle:g} s),"
            f" {args.idle} idle; {args.window:g} s of requests per case, each capped at"
            f" {args.cap:g} s"
        )
        for option in chosen:
            run_option(option, data_dir, Path(tmp), path, args)


if __name__ == "__main__":
    main()
