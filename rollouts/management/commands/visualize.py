"""`python manage.py visualize DATA_DIR`: the viewer served by gunicorn, with the original flags."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from rollouts.conf import conf, normalize_base_path
from rollouts.store import Catalog, find_runs
from rollouts.store.diskcache import DEFAULT_DIRECTORY_TEXT, DiskCache

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _runs_of(dirs: list[Path]) -> dict[str, Path]:
    """Several DATA_DIRs are runs named by their folders; one folder may hold several runs."""
    if len(dirs) == 1:
        return {name: _rollouts_of(path) for name, path in find_runs(dirs[0]).items()}
    runs: dict[str, Path] = {}
    for path in dirs:
        # The save dir's name is the run's, not "rollout_result"'s.
        name = path.parent.name if path.name == "rollout_result" else path.name
        unique, n = name, 2
        while unique in runs:
            unique, n = f"{name}-{n}", n + 1
        runs[unique] = path
    return runs


def _rollouts_of(run: Path) -> Path:
    """A run's data dir: its rollout_result/ when it has one (so buckets sit at the top)."""
    inner = run / "rollout_result"
    return inner if inner.is_dir() else run


def _disk_cache_state(data_dirs: list[Path]) -> str:
    """Where statistics are kept, as the catalogs will find it (refused is off, and why)."""
    directory = conf.DISK_CACHE
    if directory is None:
        off = getattr(settings, "ROLLOUTS_DISK_CACHE", None) is not None
        return "not kept on disk (" + ("--disk-cache off)" if off else "no home directory)")
    why = DiskCache(directory, protected=data_dirs).problem()
    if why is not None:
        return f"not kept on disk: {directory} is refused, {why}"
    return f"kept on disk in {directory}"


class Command(BaseCommand):
    help = (
        "Serve the Relax Rollout Viewer for DATA_DIR (a rollout_result/ dir or a dir of steps)."
        " Several DATA_DIRs, or one folder of runs, get a run picker."
    )
    # Checks run after the flags are applied (they would warn that no data dir is set).
    requires_system_checks: tuple[str, ...] = ()

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "data_dirs",
            nargs="+",
            metavar="DATA_DIR",
            help="directory of step files (several, or a folder of runs: one run each)",
        )
        parser.add_argument("--port", type=int, default=8080, help="port (default 8080)")
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 exposes it)",
        )
        parser.add_argument(
            "--cache-memory", type=int, default=4096, metavar="MB", help="index cache budget in MB"
        )
        parser.add_argument(
            "--cache-entries", type=int, default=20, help="most step indexes kept (default 20)"
        )
        parser.add_argument(
            "--base-path", default="", help="URL prefix behind a reverse proxy, e.g. /absproxy/8080"
        )
        parser.add_argument("--tui", action="store_true", help="terminal UI instead of the web")
        parser.add_argument(
            "--mask-str", default=None, help="regex of pad tokens to collapse ('' turns it off)"
        )
        parser.add_argument(
            "--disk-cache",
            default=None,
            metavar="DIR",
            help="where per-step statistics are kept between runs ('off' for nowhere;"
            f" default: {DEFAULT_DIRECTORY_TEXT})",
        )
        parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
        parser.add_argument("--threads", type=int, default=8, help="threads per process")

    def handle(self, *args: Any, **options: Any) -> None:
        dirs = [self._check_data_dir(raw) for raw in options["data_dirs"]]
        runs = _runs_of(dirs)
        data_dir = None if runs else dirs[0]
        self._check_numbers(options)
        for directory in dirs:
            self._check_disk_cache(directory, options["disk_cache"])
        mask = options["mask_str"]
        if mask:
            try:
                re.compile(mask)
            except re.error as exc:
                raise CommandError(f"--mask-str is not a valid regular expression: {exc}") from None
        if options["tui"]:
            if data_dir is None:
                raise CommandError(
                    "the terminal UI shows one run; pass one of: "
                    + ", ".join(str(path) for path in runs.values())
                )
            self._run_tui(data_dir, options)
            return
        self._check_port_free(options["host"], options["port"])
        base_path = normalize_base_path(options["base_path"])
        self._apply_settings(data_dir, runs, base_path, options)
        self.check(display_num_errors=False)

        from django.core.handlers.wsgi import WSGIHandler

        from rollouts.server import serve

        application = WSGIHandler()
        self._print_banner(data_dir, runs, base_path, options)
        serve(
            application,
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            threads=options["threads"],
        )

    def _run_tui(self, data_dir: Path, options: dict[str, Any]) -> None:
        from rollouts import tui

        if not tui.available():
            raise CommandError(tui.INSTALL_HINT)
        from rollouts.cache import ByteLimitedCache
        from rollouts.tui.app import RolloutsApp

        mask = options["mask_str"] if options["mask_str"] is not None else conf.MASK_STR
        cache = ByteLimitedCache(
            "tui",
            {
                "OPTIONS": {
                    "MAX_BYTES": options["cache_memory"] * 1024 * 1024,
                    "MAX_ENTRIES": options["cache_entries"],
                }
            },
        )
        try:
            app = RolloutsApp(data_dir, mask, cache=cache)
        except OSError as exc:
            raise CommandError(f"cannot read DATA_DIR {data_dir.name}: {exc.strerror}") from None
        app.run()

    def _check_data_dir(self, raw: str) -> Path:
        path = Path(raw).expanduser()
        if not path.exists():
            raise CommandError(f"DATA_DIR {raw} does not exist")
        if not path.is_dir():
            raise CommandError(f"DATA_DIR {raw} is not a directory")
        if not os.access(path, os.R_OK | os.X_OK):
            raise CommandError(f"DATA_DIR {raw} is not readable")
        return path.resolve()

    def _check_disk_cache(self, data_dir: Path, raw: str | None) -> None:
        """The disk cache is ours to write; the data directory never is."""
        if raw is None or raw == "off":
            return
        if DiskCache(raw).refuses(data_dir):
            raise CommandError(
                f"--disk-cache {raw} is inside DATA_DIR, which the viewer never writes;"
                " choose another directory"
            )

    def _check_numbers(self, options: dict[str, Any]) -> None:
        if not 0 <= options["port"] <= 65535:
            raise CommandError("--port must be between 0 and 65535")
        for flag in ("cache_memory", "cache_entries", "workers", "threads"):
            if options[flag] < 1:
                raise CommandError(f"--{flag.replace('_', '-')} must be at least 1")

    def _check_port_free(self, host: str, port: int) -> None:
        """Say so in one line, instead of gunicorn retrying for five seconds and then failing."""
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None

    def _apply_settings(
        self, data_dir: Path | None, runs: dict[str, Path], base_path: str, options: dict[str, Any]
    ) -> None:
        """The flags win over the environment; applied before the WSGI app is built."""
        settings.ROLLOUTS_DATA_DIR = str(data_dir) if data_dir is not None else None
        settings.ROLLOUTS_DATA_DIRS = {name: str(path) for name, path in runs.items()}
        if options["mask_str"] is not None:
            settings.ROLLOUTS_MASK_STR = options["mask_str"]
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
        host = options["host"]
        if host not in LOOPBACK_HOSTS:
            # Reached by this machine's name or address, which we cannot list in advance.
            settings.ALLOWED_HOSTS = ["*"] if host in ("0.0.0.0", "::") else [host, "127.0.0.1"]  # noqa: S104

    def _print_banner(
        self, data_dir: Path | None, runs: dict[str, Path], base_path: str, options: dict[str, Any]
    ) -> None:
        host, port = options["host"], options["port"]
        shown_host = socket.gethostname() if host in ("0.0.0.0", "::") else host  # noqa: S104
        if ":" in shown_host:
            shown_host = f"[{shown_host}]"
        shown = {"data": data_dir} if data_dir is not None else runs
        lines = ["Relax Rollout Viewer"]
        for name, directory in shown.items():
            catalog = Catalog(directory)
            buckets = ", ".join(f"{b} ({len(catalog.steps(b))} steps)" for b in catalog.buckets())
            lines.append(f"  {name + ':':<7} {directory}  [{buckets}]")
        lines += [
            f"  open:   http://{shown_host}:{port}{base_path}/",
            f"  cache:  {options['cache_memory']} MB, {options['cache_entries']} step indexes;"
            f" {options['workers']} worker(s) x {options['threads']} threads",
            f"  stats:  {_disk_cache_state(list(shown.values()))}",
        ]
        if host not in LOOPBACK_HOSTS:
            lines.append(
                f"  note:   listening on {host}: anyone who can reach this machine"
                " can read the data"
            )
        lines.append("  Press Ctrl+C to stop.")
        self.stdout.write("\n".join(lines))
        self.stdout.flush()
