"""gunicorn, run in-process: the production server behind one command, no config file needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication


class ViewerServer(BaseApplication):
    def __init__(self, application: Callable[..., Any], options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)
        # gunicorn 27 opens a control socket at ~/.gunicorn/gunicorn.ctl, one per user: a second
        # viewer would take it over from the first. We use none of its commands.
        if "control_socket_disable" in self.cfg.settings:
            self.cfg.set("control_socket_disable", True)

    def load(self) -> Callable[..., Any]:
        return self.application


def serve(
    application: Callable[..., Any], *, host: str, port: int, workers: int, threads: int
) -> None:
    """Serve until SIGINT/SIGTERM. Threads share one worker's cache, so the default is 1 worker."""
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    ViewerServer(
        application,
        {
            "bind": [bind],
            "workers": workers,
            "threads": threads,
            "worker_class": "gthread",
            # Streaming a multi-GB step can take a while on a slow link.
            "timeout": 300,
            "graceful_timeout": 5,
            "errorlog": "-",
            "loglevel": "warning",
            "proc_name": "relax-viewer",
        },
    ).run()
