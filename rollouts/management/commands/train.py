"""`python manage.py train SPEC.toml`: the whole viewer on the job's rollout_result, plus the
training API and page, on loopback only. Ctrl+C stops the training process first (gracefully,
then by force after the grace period), then the server."""

from __future__ import annotations

import ipaddress
import json
import math
import os
import signal
import sys
import webbrowser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from rollouts.conf import DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_MEMORY_MB, normalize_base_path
from rollouts.management.serving import apply_settings, listen
from rollouts.training import (
    PREVIEWS,
    HostedElsewhere,
    Spec,
    SpecError,
    claim_runs,
    latest_run_dir,
    load_spec,
    manager_for,
    preview_snapshot,
    stop_leftover,
)
from rollouts.training.backends import (
    BACKENDS,
    shown_address,
    unavailable,
    with_backend,
)

from . import visualize

SERVER_DEFAULTS: dict[str, Any] = {
    "mask_str": None,
    "disk_cache": None,
    "cache_memory": DEFAULT_CACHE_MEMORY_MB,
    "cache_entries": DEFAULT_CACHE_ENTRIES,
    "allowed_host": [],
}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Command(BaseCommand):
    help = "Host a training run (SPEC.toml) with the viewer: start, watch, pause, stop, resume."
    requires_system_checks: tuple[str, ...] = ()
    # Not a ClassVar: django-stubs declare it an instance attribute; nothing mutates it.
    suppressed_base_arguments: set[str] = set(visualize.DJANGO_OPTIONS)  # noqa: RUF012

    def get_version(self) -> str:
        return visualize.installed_version()

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("spec", metavar="SPEC.toml", help="the job spec")
        parser.add_argument(
            "--port", "--ui-port", dest="port", type=int, default=8036, help="port (default 8036)"
        )
        parser.add_argument("--host", default="127.0.0.1", help="a loopback address only")
        parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
        parser.add_argument(
            "--print-schema", action="store_true", help="print the configuration contract and exit"
        )
        parser.add_argument(
            "--print-preview", action="store_true", help="print the offline previews and exit"
        )
        parser.add_argument("--base-path", default="", help="URL prefix behind a reverse proxy")
        parser.add_argument("--threads", type=int, default=8, help="threads (one process)")
        parser.add_argument(
            "--backend",
            choices=tuple(BACKENDS),
            default=None,
            help="where jobs run: local (this machine) or ray (a Ray cluster); default: the spec's",
        )
        parser.add_argument(
            "--ray-address",
            default=None,
            metavar="URL",
            help="the Ray cluster's dashboard, e.g. http://HOST:8265 (default: the spec's [ray])",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            spec = with_backend(
                load_spec(options["spec"]), options["backend"], options["ray_address"]
            )
        except SpecError as exc:
            raise CommandError(str(exc)) from None
        if options["print_schema"]:
            self.stdout.write(json.dumps(spec.schema(), indent=2))
            return
        if options["print_preview"]:
            previews = {name: preview_snapshot(spec, name) for name in PREVIEWS}
            self.stdout.write(json.dumps(previews, indent=2))
            return
        host = options["host"]
        if not is_loopback(host):
            raise CommandError(
                f"--host {host} is not a loopback address: training is hosted on this machine only"
            )
        if not 0 <= options["port"] <= 65535:
            raise CommandError("--port must be between 0 and 65535")
        if options["threads"] < 1:
            raise CommandError("--threads must be at least 1")
        missing = unavailable(spec.backend)
        if missing is not None:
            raise CommandError(missing)
        try:
            os.close(claim_runs(spec))  # one line now, not a 503 page, if another viewer hosts it
        except HostedElsewhere as exc:
            raise CommandError(str(exc).split(";")[0]) from None
        listener = listen(host, options["port"])
        options["port"] = listener.getsockname()[1]
        base_path = normalize_base_path(options["base_path"])
        run_dir = latest_run_dir(spec)
        data_dir = (run_dir or spec.runs_root()) / spec.rollout_result
        apply_settings(data_dir, {}, base_path, {**SERVER_DEFAULTS, **options})
        settings.ROLLOUTS_TRAIN_SPEC = str(spec.path)
        settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
        settings.ROLLOUTS_TRAIN_FOLLOW = True
        settings.ROLLOUTS_TRAIN_BACKEND = spec.backend
        settings.ROLLOUTS_TRAIN_RAY_ADDRESS = spec.ray.get("address")
        if not data_dir.is_dir():  # no run yet: the first job makes it, no need to warn
            settings.SILENCED_SYSTEM_CHECKS = [*settings.SILENCED_SYSTEM_CHECKS, "rollouts.W004"]
        self.check(display_num_errors=False)

        from django.core.handlers.wsgi import WSGIHandler

        from rollouts.server import serve

        url = f"http://{'[' + host + ']' if ':' in host else host}:{options['port']}{base_path}/"
        self.stdout.write(
            "\n".join(
                [
                    f"Relax Rollout Viewer: training {spec.name}",
                    f"  spec:   {spec.path.name} (runs in {spec.run_dir})",
                    *_where(spec),
                    f"  open:   {url}training/",
                    "  Press Ctrl+C to stop the training process, then the server.",
                ]
            )
        )
        self.stdout.flush()
        if not options["no_browser"]:
            webbrowser.open(url + "training/")
        try:
            serve(
                WSGIHandler(),
                listener=listener,
                workers=1,  # the job lives in the one worker
                threads=options["threads"],
                post_worker_init=_quit_stops_the_job_first(spec),
                worker_exit=_stop_job_in_worker(spec),
                graceful_timeout=math.ceil(spec.grace_seconds) + 10,
            )
        finally:
            stop_leftover(spec)  # the worker was killed before it could stop the job


def _quit_stops_the_job_first(spec: Spec) -> Any:
    """Ctrl+C reaches the worker twice (SIGINT from the terminal, SIGQUIT from the arbiter), and
    gthread's quit handler, re-entered, deadlocks on its pool's lock until the arbiter kills the
    worker: so the first signal stops the job, then quits once; the others are ignored."""

    def post_worker_init(worker: Any) -> None:
        def quit_once(sig: int, frame: Any) -> None:
            _ignore_quits()
            _stop_job(spec)
            worker.handle_quit(sig, frame)

        for sig in (signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, quit_once)

    return post_worker_init


def _stop_job_in_worker(spec: Spec) -> Any:
    def worker_exit(server: Any, worker: Any) -> None:
        if os.getpid() != worker.pid:
            return  # called in the arbiter for a worker that died: nothing of ours here
        _ignore_quits()  # a second Ctrl+C does not cut the stop short
        _stop_job(spec)

    return worker_exit


def _ignore_quits() -> None:
    """The quit signals handled by doing nothing. Not SIG_IGN: a signal already delivered but
    not yet run by Python (the arbiter's SIGQUIT right behind the terminal's SIGINT) would then
    raise "OSError: Signal 3 ignored due to race condition" in the middle of the stop."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
        signal.signal(sig, _nothing)


def _nothing(sig: int, frame: Any) -> None:
    return None


def _where(spec: Spec) -> list[str]:
    if spec.backend != "ray":
        return []
    address = shown_address(spec.ray["address"])
    return [f"  jobs:   Ray jobs on {address} (Ctrl+C leaves a running one to its cluster)"]


def _stop_job(spec: Spec) -> None:
    """Stop the hosted job, saying so on the terminal (a stop may take the whole grace period).
    A Ray job is left running on its cluster, as `ray job submit` leaves it: the next `train`
    re-attaches to it."""
    try:
        manager = manager_for(spec.path, spec.backend, spec.ray.get("address"))
    except (HostedElsewhere, SpecError):
        return  # this worker never hosted it: nothing of ours to stop
    job = manager.job
    if job is None or not job.running:
        return
    if job.backend == "ray":
        sid = job.record.get("submission_id")
        print(
            f"Leaving Ray job {sid} running on its cluster: `train` with this spec re-attaches"
            f" to it; stop it from the Training page or with `ray job stop {sid}`.",
            file=sys.stderr,
            flush=True,
        )
        return
    grace = f"{spec.grace_seconds:g}"
    print(f"Stopping training job {job.record['id']} (up to {grace} s)...", file=sys.stderr)
    manager.shutdown()
    print(f"Training job {job.record['id']}: {job.status()}.", file=sys.stderr, flush=True)
