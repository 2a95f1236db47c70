"""How the viewer is served by gunicorn: one set of options for `manage.py visualize` (which runs
gunicorn in-process, no config file needed) and `relax_site/gunicorn.conf.py` (gunicorn behind
a reverse proxy) alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

SERVING: dict[str, Any] = {
    # Threads, not processes: the threads of a worker share its index cache (a 1 GB step
    # costs its index once), and a request reading a big step does not hold up the others.
    "worker_class": "gthread",
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


def serve(
    application: Callable[..., Any], *, host: str, port: int, workers: int, threads: int
) -> None:
    """Serve until SIGINT/SIGTERM. Threads share one worker's cache, so the default is 1 worker."""
    bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    options = {"bind": [bind], "workers": workers, "threads": threads}
    ViewerServer(application, {**options, "errorlog": "-", "loglevel": "warning"}).run()
