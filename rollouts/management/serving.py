"""What `visualize` and `train` share to serve the viewer: the listening socket (a port in use is
one line, not gunicorn retrying) and the settings their flags set, applied before the WSGI
application is built. One module, so neither command calls into the other's methods."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.utils.module_loading import import_string

from rollouts.conf import conf
from rollouts.server import listen as bind
from rollouts.web import HostCheckMiddleware

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # as the Host header spells them
ANY_ADDRESS = ("0.0.0.0", "::")  # noqa: S104


def listen(host: str, port: int) -> socket.socket:
    """A port in use is one line here, instead of gunicorn retrying for five seconds."""
    try:
        return bind(host, port)
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def apply_settings(
    data_dir: Path | None,
    runs: dict[str, Path],
    base_path: str,
    options: dict[str, Any],
    runs_dir: Path | None = None,
) -> None:
    """The flags win over the environment; applied before the WSGI app is built. `runs_dir`:
    a folder of runs, listed while serving (then `runs` are not named)."""
    settings.ROLLOUTS_DATA_DIR = str(data_dir) if data_dir is not None else None
    settings.ROLLOUTS_DATA_DIRS = {} if runs_dir else {n: str(p) for n, p in runs.items()}
    settings.ROLLOUTS_RUNS_DIR = str(runs_dir) if runs_dir is not None else None
    if options["mask_str"] is not None:
        settings.ROLLOUTS_MASK_STR = options["mask_str"]
    if options.get("tokenizer") is not None:  # `train` applies these settings too, without it
        settings.ROLLOUTS_TOKENIZER = str(Path(options["tokenizer"]).expanduser().resolve())
    board = options.get("tensorboard")
    if board is not None:
        settings.ROLLOUTS_TENSORBOARD = "" if board == "off" else str(Path(board).resolve())
    disk = options["disk_cache"]
    if disk is not None:
        settings.ROLLOUTS_DISK_CACHE = "" if disk == "off" else disk
    # Item assignment into the very dict Django's cache handler reads: cache objects are
    # made per thread on first use (none exists yet), and each reads its entry then.
    settings.CACHES[conf.CACHE_ALIAS] = {
        "BACKEND": "rollouts.cache.ByteLimitedCache",
        "OPTIONS": {
            "MAX_BYTES": options["cache_memory"] * 1024 * 1024,
            "MAX_ENTRIES": options["cache_entries"],
        },
    }
    if base_path:
        settings.FORCE_SCRIPT_NAME = base_path
        settings.STATIC_URL = f"{base_path}/static/"
    apply_hosts(options["host"], options["allowed_host"])


def apply_hosts(host: str, allowed: list[str]) -> None:
    """The Host names answered to (rollouts/web/hosts.py): loopback, RELAX_ALLOWED_HOSTS and
    --allowed-host; the bound address; with 0.0.0.0 this machine's names and any IP address.
    A DNS-rebinding page on another name is refused."""
    names = [*LOOPBACK_NAMES, *getattr(settings, "RELAX_HOSTS", ()), *allowed]
    accept_ip = host in ANY_ADDRESS
    if accept_ip:
        names += [socket.gethostname(), socket.getfqdn()]
    elif host not in LOOPBACK_HOSTS:
        names.append(f"[{host}]" if ":" in host else host)
    names = list(dict.fromkeys(name.lower() for name in names if name))
    settings.RELAX_HOSTS = names
    settings.RELAX_ACCEPT_IP_HOSTS = accept_ip
    if not host_guard_installed():
        # Another project's settings: Django's own check, which cannot take "any IP".
        settings.ALLOWED_HOSTS = ["*"] if accept_ip else names


def host_guard_installed() -> bool:
    """Whether the settings' MIDDLEWARE has the app's Host guard (the standalone site's do),
    under whichever dotted path names it."""
    for entry in settings.MIDDLEWARE:
        try:
            if import_string(entry) is HostCheckMiddleware:
                return True
        except ImportError:  # Django says so itself when it builds the middleware chain
            continue
    return False
