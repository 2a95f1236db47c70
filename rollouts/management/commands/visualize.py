"""`python manage.py visualize DATA_DIR`: the viewer served by gunicorn, with the original flags."""

from __future__ import annotations

import os
import re
import socket
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from rollouts.conf import (
    DEFAULT_CACHE_ENTRIES,
    DEFAULT_CACHE_MEMORY_MB,
    DEFAULT_MASK_STR,
    conf,
    normalize_base_path,
)
from rollouts.management.reading_options import check_reading_options
from rollouts.management.serving import ANY_ADDRESS, LOOPBACK_HOSTS, apply_settings, listen
from rollouts.store import Catalog, runs_of
from rollouts.store.disk import DEFAULT_DIRECTORY_TEXT, DiskCache
from rollouts.web import bucket_reading, history_of, scalars_state, trend_scalars

# Django's options of every command: still accepted, but left out of --help and the usage line,
# which then show only the viewer's own flags (`relax-viewer --help` is what users read first).
DJANGO_OPTIONS = (
    "--version",
    "--verbosity",
    "--settings",
    "--pythonpath",
    "--traceback",
    "--no-color",
    "--force-color",
)


def installed_version() -> str:
    try:
        return version("relax-rollout-viewer")
    except PackageNotFoundError:  # a checkout that was never installed
        return "unknown (not installed)"


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
    # Not a ClassVar: django-stubs declare it an instance attribute; nothing mutates it.
    suppressed_base_arguments: set[str] = set(DJANGO_OPTIONS)  # noqa: RUF012

    def get_version(self) -> str:
        return installed_version()

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "data_dirs",
            nargs="+",
            metavar="DATA_DIR",
            help="directory of step files (several, or a folder of runs: one run each, listed"
            " while serving)",
        )
        parser.add_argument(
            "--port", type=int, default=8080, help="port (default 8080; 0: any free one)"
        )
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 exposes it)",
        )
        parser.add_argument(
            "--allowed-host",
            action="append",
            default=[],
            metavar="NAME",
            help="a host name the viewer answers to besides loopback, IP addresses and this"
            " machine's names (repeatable; .example.com: the domain and its subdomains)",
        )
        parser.add_argument(
            "--cache-memory",
            type=int,
            default=DEFAULT_CACHE_MEMORY_MB,
            metavar="MB",
            help="index cache budget (MB)",
        )
        parser.add_argument(
            "--cache-entries",
            type=int,
            default=DEFAULT_CACHE_ENTRIES,
            help=f"most step indexes kept (default {DEFAULT_CACHE_ENTRIES})",
        )
        parser.add_argument(
            "--base-path", default="", help="URL prefix behind a reverse proxy, e.g. /absproxy/8080"
        )
        parser.add_argument("--tui", action="store_true", help="terminal UI (the tui extra)")
        parser.add_argument(
            "--mask-str",
            help=f"regex of pad tokens shown as one badge ('': none; default {DEFAULT_MASK_STR})",
        )
        parser.add_argument(
            "--disk-cache",
            default=None,
            metavar="DIR",
            help="where per-step statistics are kept between runs ('off' for nowhere;"
            f" default: {DEFAULT_DIRECTORY_TEXT})",
        )
        parser.add_argument(
            "--tokenizer", metavar="PATH", help="a local tokenizer.json (tokens extra): token text"
        )
        parser.add_argument(
            "--tensorboard",
            default=None,
            metavar="DIR",
            help="the run's TensorBoard event files, shown on the trends page ('off' for none;"
            " default: tensorboard_log/ in DATA_DIR or beside its rollout_result/)",
        )
        parser.add_argument("--workers", type=int, default=1, help="processes, one cache each")
        parser.add_argument("--threads", type=int, default=8, help="threads per process")

    def handle(self, *args: Any, **options: Any) -> None:
        dirs = [self._check_data_dir(raw) for raw in options["data_dirs"]]
        runs = runs_of(dirs)
        data_dir = None if runs else dirs[0]
        self._check_numbers(options)
        for directory in dirs:
            self._check_disk_cache(directory, options["disk_cache"])
        check_reading_options(options, runs)
        if options["tui"]:
            if data_dir is None:
                # The terminal UI shows one run: the first (./run demo --tui opens a demo run).
                first, *others = runs
                self.stdout.write(
                    f"the terminal UI shows one run: opening {first!r}"
                    f" (to open another, pass its directory: {', '.join(others)})"
                )
                data_dir = runs[first]
            self._run_tui(data_dir, options)
            return
        for name in options["allowed_host"]:
            if not re.fullmatch(r"\.?[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]", name):
                raise CommandError(
                    f"--allowed-host {name!r} is not a host name (no scheme, port or path)"
                )
        listener = listen(options["host"], options["port"])
        options["port"] = listener.getsockname()[1]  # the one bound, when --port 0 asked for any
        base_path = normalize_base_path(options["base_path"])
        # One folder of runs is listed while serving: runs added later show up in the picker.
        folder = dirs[0].resolve() if runs and len(dirs) == 1 else None
        apply_settings(data_dir, runs, base_path, options, runs_dir=folder)
        self.check(display_num_errors=False)

        from django.core.handlers.wsgi import WSGIHandler

        from rollouts.server import serve

        application = WSGIHandler()
        self._print_banner(data_dir, runs, base_path, options)
        serve(
            application, listener=listener, workers=options["workers"], threads=options["threads"]
        )

    def _run_tui(self, data_dir: Path, options: dict[str, Any]) -> None:
        from rollouts import tui

        if not tui.available():
            raise CommandError(tui.INSTALL_HINT)
        from rollouts.cache import ByteLimitedCache

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
            app = tui.make_app(data_dir, mask, cache, reading_of=tui_reading)
        except OSError as exc:
            raise CommandError(f"cannot read DATA_DIR {data_dir.name}: {exc.strerror}") from None
        app.session.catalog.flag_rules = conf.FLAGS  # ROLLOUTS_FLAGS, as the web pages judge
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

    def _print_banner(
        self, data_dir: Path | None, runs: dict[str, Path], base_path: str, options: dict[str, Any]
    ) -> None:
        host, port = options["host"], options["port"]
        shown_host = socket.gethostname() if host in ANY_ADDRESS else host
        if ":" in shown_host:
            shown_host = f"[{shown_host}]"
        shown = {"data": data_dir} if data_dir is not None else runs
        lines = ["Relax Rollout Viewer"]
        if len(shown) > BANNER_RUNS:
            more = len(shown) - BANNER_RUNS
            shown = dict(list(shown.items())[:BANNER_RUNS])
            lines.append(
                f"  runs:   {len(runs)} (the first {BANNER_RUNS} below, {more} more in the picker)"
            )
        for name, directory in shown.items():
            catalog = Catalog(directory)
            buckets = ", ".join(f"{b} ({len(catalog.steps(b))} steps)" for b in catalog.buckets())
            lines.append(f"  {name + ':':<7} {directory}  [{buckets}]")
            lines.append(f"  scalars: {scalars_state(catalog.root, name if runs else None)}")
        lines += [
            f"  open:   http://{shown_host}:{port}{base_path}/",
            f"  cache:  {options['cache_memory']} MB, {options['cache_entries']} step indexes;"
            f" {options['workers']} worker(s) x {options['threads']} threads",
            f"  stats:  {_disk_cache_state(list(shown.values()))}",
        ]
        if host not in LOOPBACK_HOSTS:
            ips = ", any IP address" if getattr(settings, "RELAX_ACCEPT_IP_HOSTS", False) else ""
            names = ", ".join(getattr(settings, "RELAX_HOSTS", ()))
            lines += [
                f"  note:   listening on {host}: anyone who can reach this machine"
                " can read the data",
                f"  hosts:  answers to {names}{ips} (more with --allowed-host NAME)",
            ]
        lines.append("  Press Ctrl+C to stop.")
        self.stdout.write("\n".join(lines))
        self.stdout.flush()


BANNER_RUNS = 10  # the most runs the banner describes (a folder may hold thousands)


def tui_reading(catalog: Catalog, bucket: str) -> dict[str, Any] | None:
    """The terminal UI's reading of a bucket: the trends page's own (the run's TensorBoard rules
    and the verdict), so the terminal says what the web says; None while the steps are read."""
    snapshot = history_of(catalog, bucket).snapshot()
    if not snapshot.done:
        return None
    scalars = trend_scalars(catalog.root, None, [p.step for p in snapshot.points])
    return bucket_reading(snapshot.points, scalars)
