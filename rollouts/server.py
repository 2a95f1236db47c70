"""How the viewer is served by gunicorn: one set of options for `manage.py visualize` (which runs
gunicorn in-process, no config file needed) and `relax_site.gunicorn_conf` (gunicorn behind
a reverse proxy) alike."""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

SERVING: dict[str, Any] = {
    # Threads, not processes: the threads of a worker share its index cache (a 1 GB step
    # costs its index once), and a request reading a big step does not hold up the others.
    # gunicorn's gthread, except that a thread gets a connection only once its request has
    # arrived: slow or silent clients hold no thread (rollouts/server_worker.py).
    "worker_class": "rollouts.server_worker.WholeRequestWorker",
    # An idle kept-alive connection is closed after 2 s (gunicorn's default, said here)...
    "keepalive": 2,
    # ...and a worker keeps at most this many connections open, idle or arriving ones
    # included (gunicorn's default); more wait in the listen backlog.
    "worker_connections": 1000,
    # A worker busy indexing or streaming a multi-GB step is not mistaken for a hung one...
    "timeout": 300,
    # ...and a stop (SIGTERM) does not wait minutes for such a download to finish.
    "graceful_timeout": 5,
    "proc_name": "relax-viewer",
    # gunicorn >= 25 opens a control socket at one path per user ($HOME/.gunicorn/gunicorn.ctl),
    # so a second viewer run by the same user would take it over. We use none of its commands.
    "control_socket_disable": True,
}


class ViewerServer(BaseApplication):
    def __init__(self, application: Callable[..., Any], options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in {**SERVING, **self.options}.items():
            if key in self.cfg.settings:  # an older gunicorn lacks the newest settings
                self.cfg.set(key, value)

    def load(self) -> Callable[..., Any]:
        return self.application


def listen(host: str, port: int) -> socket.socket:
    """The listening socket gunicorn serves on, bound here so that `--port 0` (any free port)
    can be printed as the port it got; OSError when the address cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(2048)
    except OSError:
        listener.close()
        raise
    return listener


def serve(
    application: Callable[..., Any],
    *,
    listener: socket.socket,
    workers: int,
    threads: int,
    **extra: Any,
) -> None:
    """Serve on `listener` (bound and listening) until SIGINT/SIGTERM.

    Threads share one worker's cache, so the default is 1 worker. `extra`: more gunicorn
    settings (`manage.py train` adds a worker_exit hook and a longer graceful_timeout).
    """
    options = {
        "bind": [f"fd://{listener.fileno()}"],
        "workers": workers,
        "threads": threads,
        "post_worker_init": freeze_startup_objects,
        **extra,
    }
    ViewerServer(application, {**options, "errorlog": "-", "loglevel": "warning"}).run()


def freeze_startup_objects(_worker: Any = None) -> None:
    """Everything alive once a worker has started (Django, the app, their modules: ~70,000
    objects) is never garbage: `gc.freeze()` leaves it out of every later collection. A full
    collection then walks only what requests made, 5 ms instead of 70 ms, and no page waits
    for one (`bench/bench_compare.py`: the p99 of the group page)."""
    gc.freeze()
