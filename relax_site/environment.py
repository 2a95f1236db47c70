"""Every RELAX_* environment variable, read and checked in one place (no Django).

`read_environment()` turns the variables into typed values, or raises `BadVariable` whose
message is one line naming the variable and what it takes. `relax_site.settings` and
`relax_site.gunicorn_conf` both read it at start-up, so a typo stops the viewer with that line
instead of a traceback at start or a 500 later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rollouts.conf import DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_MEMORY_MB, MIN_POLL_MS

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# A host name or IP as ALLOWED_HOSTS takes it: `name`, `.domain` (and its subdomains), `*`, an
# IPv4 address or a bracketed IPv6 one; never a scheme, a port or a path.
_LABEL = r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?"
_HOST = re.compile(rf"^(\*|\.?{_LABEL}(\.{_LABEL})*\.?|\[[0-9a-f:.]+\])$", re.IGNORECASE)
_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_BIND = re.compile(r"^(unix:.+|fd://\d+|(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]*):\d{1,5})$")


class BadVariable(ValueError):
    """An environment variable the viewer cannot use; the message is one line."""

    def __init__(self, name: str, raw: str, takes: str) -> None:
        super().__init__(f"{name}={raw!r} is not usable: {name} takes {takes}")
        self.name = name


@dataclass(frozen=True)
class Environment:
    data_dir: str | None = None
    data_dirs: dict[str, str] = field(default_factory=dict)
    runs_dir: str | None = None  # a folder of runs, listed while serving
    base_path: str = ""
    allowed_hosts: tuple[str, ...] = LOOPBACK_NAMES
    cache_memory_mb: int = DEFAULT_CACHE_MEMORY_MB
    cache_entries: int = DEFAULT_CACHE_ENTRIES
    mask_str: str | None = None
    disk_cache: str | None = None  # None: the user's cache dir; "": off
    poll_ms: int | None = None
    index_processes: int | None = None
    tokenizer: str | None = None  # a local tokenizer.json (the `tokens` extra)
    tensorboard: str | None = None  # None: found beside the data; "": off
    secret_key: str | None = None
    debug: bool = False
    static_root: str | None = None
    # gunicorn's (relax_site/gunicorn_conf.py)
    bind: str | None = None
    workers: int = 1
    threads: int = 8


def read_environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The RELAX_* variables of `environ` (os.environ by default), checked; `BadVariable`."""
    env = os.environ if environ is None else environ

    def text(name: str) -> str | None:
        value = env.get(name)
        return value if value else None

    def positive(name: str, unit: str, default: int | None, least: int = 1) -> int | None:
        raw = env.get(name, "").strip()
        if not raw:
            return default
        if not raw.isascii() or not raw.isdigit() or int(raw) < least:
            shown = f" (default {default})" if default is not None else ""
            raise BadVariable(name, raw, f"a whole number of {unit}, at least {least}{shown}")
        return int(raw)

    return Environment(
        data_dir=text("RELAX_DATA_DIR"),
        data_dirs=_data_dirs(env.get("RELAX_DATA_DIRS", "")),
        runs_dir=text("RELAX_RUNS_DIR"),
        base_path=_base_path(env.get("RELAX_BASE_PATH", "")),
        allowed_hosts=_hosts(env.get("RELAX_ALLOWED_HOSTS", "")),
        cache_memory_mb=positive("RELAX_CACHE_MEMORY_MB", "MB", DEFAULT_CACHE_MEMORY_MB) or 1,
        cache_entries=positive("RELAX_CACHE_ENTRIES", "step indexes", DEFAULT_CACHE_ENTRIES) or 1,
        mask_str=_regex("RELAX_MASK_STR", env.get("RELAX_MASK_STR")),
        disk_cache=_disk_cache(env.get("RELAX_DISK_CACHE")),
        poll_ms=positive("RELAX_POLL_MS", "milliseconds", None, MIN_POLL_MS),
        index_processes=positive("RELAX_INDEX_PROCESSES", "processes", None),
        tokenizer=text("RELAX_TOKENIZER"),
        tensorboard=_disk_cache(env.get("RELAX_TENSORBOARD")),  # the same "off" rule
        secret_key=text("RELAX_SECRET_KEY"),
        debug=_flag("RELAX_DEBUG", env.get("RELAX_DEBUG", "")),
        static_root=text("RELAX_STATIC_ROOT"),
        bind=_bind(env.get("RELAX_BIND", "")),
        workers=positive("RELAX_WORKERS", "processes", 1) or 1,
        threads=positive("RELAX_THREADS", "threads", 8) or 1,
    )


def _hosts(raw: str) -> tuple[str, ...]:
    """Loopback names always (the machine itself must keep working), then the given names."""
    names = [name.strip() for name in raw.split(",") if name.strip()]
    for name in names:
        if not _HOST.match(name):
            raise BadVariable(
                "RELAX_ALLOWED_HOSTS",
                raw,
                "comma-separated host names without scheme or port (e.g."
                " viewer.example.com,.example.org); loopback names are always allowed",
            )
    return tuple(dict.fromkeys([*LOOPBACK_NAMES, *names]))


def _base_path(raw: str) -> str:
    stripped = raw.strip().strip("/")
    if any(c.isspace() or c in "?#%\\" for c in stripped) or "//" in stripped:
        raise BadVariable("RELAX_BASE_PATH", raw, "a URL path such as /absproxy/8080")
    return "/" + stripped if stripped else ""


def _regex(name: str, raw: str | None) -> str | None:
    if raw is None:
        return None
    try:
        re.compile(raw)
    except re.error as exc:
        raise BadVariable(name, raw, f"a regular expression ({exc})") from None
    return raw


def _disk_cache(raw: str | None) -> str | None:
    if raw is None:
        return None
    return "" if raw in ("", "off") else raw


def _flag(name: str, raw: str) -> bool:
    if raw not in ("", "0", "1"):
        raise BadVariable(name, raw, "1 (on) or 0 (off)")
    return raw == "1"


def _bind(raw: str) -> str | None:
    raw = raw.strip()
    if not raw:
        return None
    if not _BIND.match(raw):
        raise BadVariable("RELAX_BIND", raw, "HOST:PORT, [IPv6]:PORT or unix:PATH")
    return raw


def _data_dirs(raw: str) -> dict[str, str]:
    """`NAME=PATH` or `PATH` entries separated by the path separator (':'), as PATH is.

    A bare PATH is named by its folder (by the folder above, for `<save>/rollout_result`).
    """
    runs: dict[str, str] = {}
    takes = (
        f"runs separated by {os.pathsep!r}, each NAME=PATH or PATH"
        " (NAME: letters, digits, '.', '_', '-'; each name once)"
    )
    for entry in (e.strip() for e in raw.split(os.pathsep)):
        if not entry:
            continue
        name, sep, path = entry.partition("=")
        if not sep:
            folder = Path(entry.rstrip("/"))
            path = entry
            name = folder.parent.name if folder.name == "rollout_result" else folder.name
        if not path or not _RUN_NAME.match(name) or name in runs:
            raise BadVariable("RELAX_DATA_DIRS", raw, takes)
        runs[name] = path
    return runs
