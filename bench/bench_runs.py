"""A folder of many runs (issue 31): the run picker's first answer, every reading, a sample page
while the runs index, memory, a restart on the disk cache, and a run folder added while serving.

    .venv/bin/python bench/bench_runs.py                   # 100, 300, 1,000 runs; 1 and 2 workers
    .venv/bin/python bench/bench_runs.py --runs 20 --steps 5   # a quick look
    .venv/bin/python bench/bench_runs.py --runs 1000 --workers 1 --keep /tmp/runs

For each N of `--runs`, it writes N runs under one parent folder
(`PARENT/run-0000/rollout_result/train/{0..steps-1}.jsonl`, `--samples` samples a step): a few
template runs are written with `rollouts.demo.write_demo` (distinct seeds and curves) and their
files copied round-robin into the N runs, each run given its own modification time (seeded
shuffle, so "most recently changed" is not the name order). Then, for each W of `--workers`:

1. cold: `manage.py visualize PARENT --disk-cache EMPTY --workers W` on a free loopback port
   (`tests/support/servers.py`); the picker's first answer (`GET /`, the whole body), then
   `GET /api/runs` every 0.5 s until `done` (before issue 31 there is no `/api/runs`: it polls
   `GET /` until the table has no `data-indexing` attribute, and says so); meanwhile a sample
   page of a run near the end of the list is asked for every 0.25 s (at most 20 times) while
   indexing runs; once done, the workers' VmRSS (and their index pool processes') and the same
   sample page idle (median of 20);
2. restart: SIGTERM to that server, a new one on the same disk cache, the same figures;
3. a new run folder written while the restarted server serves: how long until
   `GET /api/runs?q=NAME` (or `GET /`) lists it.

Every wait is bounded by `--timeout` and every loop by a count; loopback only; only the servers
started here are stopped (by their pid, then their process group). The step files were just
written (or read), so they sit in the OS page cache: figures are for a warm disk.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import write_demo  # noqa: E402
from tests.support.servers import (  # noqa: E402
    ServerProcess,
    child_pids,
    proc_status,
    request,
    start_visualize,
)

MB = 1_000_000
TEMPLATES = (("rise", 0), ("plateau", 1), ("collapse", 2), ("rise", 3))  # (curve, seed)
NEW_RUN = "run-new"
POLL_EVERY_S = 0.5
PROBES, PROBE_EVERY_S, PROBE_DELAY_S = 20, 0.25, 0.1
IDLE_PROBES = 20
NEW_RUN_WAIT_S, NEW_RUN_EVERY_S = 30.0, 0.25
START_TIMEOUT_S = 120.0
TARGET_FIRST_S, TARGET_RESTART_ALL_S, TARGET_SAMPLE_S = 1.0, 10.0, 0.3


def run_name(i: int) -> str:
    return f"run-{i:04d}"


def verdict(value: float | None, target: float) -> str:
    """`meets` when there is a figure and it is under the target, else `MISSES`."""
    return "meets" if value is not None and value < target else "MISSES"


def int_list(raw: str) -> list[int]:
    values = [int(part) for part in raw.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{raw!r}: a comma-separated list of positive numbers")
    return values


def write_templates(root: Path, steps: int, samples: int, with_eval: bool) -> list[Path]:
    """A few distinct runs written by the demo (reused when complete); their rollout_result/s."""
    out = []
    for k, (curve, seed) in enumerate(TEMPLATES):
        save = root / f"t{k}"
        done = root / f"t{k}.complete"
        if not done.exists():
            shutil.rmtree(save, ignore_errors=True)
            write_demo(save, train_steps=steps, samples_per_step=samples, seed=seed, curve=curve)
            if not with_eval:
                shutil.rmtree(save / "rollout_result" / "eval")
            done.touch()
        out.append(save / "rollout_result")
    return out


def copy_run(template: Path, run: Path, changed_ns: int) -> int:
    """The template's files into run/rollout_result/, the bytes copied. Each file's mtime is
    `changed_ns` less a minute per step after its own (the last step changed last)."""
    size = 0
    for folder in sorted(p for p in template.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.iterdir() if p.is_file())
        steps = [int(p.name.split(".")[0]) for p in files if p.name.split(".")[0].isdigit()]
        last = max(steps, default=0)
        target_dir = run / "rollout_result" / folder.name
        target_dir.mkdir(parents=True, exist_ok=True)
        for source in files:
            target = target_dir / source.name
            shutil.copyfile(source, target)
            size += target.stat().st_size
            stem = source.name.split(".")[0]
            behind = last - int(stem) if stem.isdigit() else 0
            mtime = changed_ns - behind * 60 * 1_000_000_000
            os.utime(target, ns=(mtime, mtime))
    return size


def changed_times(n: int, now_ns: int, seed: str = "bench-runs") -> list[int]:
    """Each run's last change: a seeded shuffle of one run an hour back from `now_ns`."""
    ranks = list(range(n))
    random.Random(seed).shuffle(ranks)
    return [now_ns - rank * 3600 * 1_000_000_000 for rank in ranks]


def write_runs(parent: Path, n: int, templates: list[Path]) -> int:
    """N runs `run-0000`... under `parent`, copied round-robin from `templates`; bytes written."""
    parent.mkdir(parents=True, exist_ok=True)
    size = 0
    for i, changed in enumerate(changed_times(n, time.time_ns())):
        size += copy_run(templates[i % len(templates)], parent / run_name(i), changed)
    return size


def tree_size(parent: Path) -> int:
    return sum(p.stat().st_size for p in parent.rglob("*.json*") if p.is_file())


# What the picker says about indexing, from the JSON twin or (before issue 31) its HTML.
def html_indexing(html: str) -> bool:
    head = html.partition('id="rv-runs"')[2].partition(">")[0]
    return "data-indexing" in head


def html_lists(html: str, name: str) -> bool:
    return f'data-run="{name}"' in html


def api_lists(data: dict, name: str) -> bool:
    return any(row.get("name") == name for row in data.get("runs", []))


def timed_get(url: str, timeout: float) -> tuple[float, int, bytes]:
    start = time.perf_counter()
    status, _, body = request(url, timeout=timeout)
    return time.perf_counter() - start, status, body


@dataclass
class Phase:
    first_s: float | None = None  # GET /, the request alone
    first_from_start_s: float | None = None
    first_status: int | None = None
    all_read_s: float | None = None  # from process start; None: not within --timeout
    via: str = ""
    last_seen: str = ""
    indexing_probes: list[float] = field(default_factory=list)
    later_probes: int = 0  # probes that ended after indexing was seen done
    probe_errors: list[str] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)
    worker_rss: list[int] = field(default_factory=list)
    pool_rss: int = 0
    pools: int = 0
    new_run_s: float | None = None
    new_run_measured: bool = False


class Prober(threading.Thread):
    """The sample page, every PROBE_EVERY_S until `done` is set (at most PROBES times)."""

    def __init__(self, url: str, done: threading.Event, phase: Phase, timeout: float) -> None:
        super().__init__(daemon=True)
        self.url, self.done, self.phase, self.timeout = url, done, phase, timeout

    def run(self) -> None:
        self.done.wait(PROBE_DELAY_S)  # the picker's first request goes first
        for _ in range(PROBES):
            if self.done.is_set():
                return
            try:
                seconds, status, _ = timed_get(self.url, self.timeout)
            except OSError as exc:
                self.phase.probe_errors.append(type(exc).__name__)
                continue
            if status != 200:
                self.phase.probe_errors.append(str(status))
            elif self.done.is_set():
                self.phase.later_probes += 1
            else:
                self.phase.indexing_probes.append(seconds)
            self.done.wait(PROBE_EVERY_S)


def wait_all_read(server: ServerProcess, phase: Phase, deadline: float) -> None:
    """Poll until every reading is in (or the deadline): `/api/runs`, else `GET /`."""
    status, _, _ = request(server.url("/api/runs"), timeout=60)
    phase.via = "GET /api/runs (done)" if status != 404 else "GET / (no data-indexing; no api/runs)"
    for _ in range(int((deadline - time.monotonic()) / POLL_EVERY_S) + 2):
        if server.proc.poll() is not None:
            phase.last_seen = f"server exited ({server.proc.returncode})"
            return
        try:
            if phase.via.startswith("GET /api"):
                _, code, body = timed_get(server.url("/api/runs"), 60)
                data = json.loads(body)
                done = code == 200 and data.get("done") is True
                phase.last_seen = f"{data.get('pending')} of {data.get('listed')} pending"
            else:
                _, code, body = timed_get(server.url("/"), 60)
                done = code == 200 and not html_indexing(body.decode(errors="replace"))
                phase.last_seen = f"status {code}"
        except (OSError, ValueError) as exc:
            phase.last_seen = type(exc).__name__
            done = False
        if done:
            phase.all_read_s = time.perf_counter() - server.started_at
            return
        if time.monotonic() >= deadline:
            return
        time.sleep(POLL_EVERY_S)


def memory(server: ServerProcess, phase: Phase) -> None:
    for worker in server.workers():
        try:
            phase.worker_rss.append(proc_status(worker)["VmRSS"])
            for child in child_pids(worker):
                # The index pool's processes (multiprocessing's spawn), not its resource tracker.
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    phase.pool_rss += proc_status(child)["VmRSS"]
                    phase.pools += 1
        except (OSError, KeyError):
            continue


def new_run_visible(server: ServerProcess, parent: Path, template: Path, phase: Phase) -> None:
    copy_run(template, parent / NEW_RUN, time.time_ns())
    start = time.perf_counter()
    api = phase.via.startswith("GET /api")
    url = server.url(f"/api/runs?q={NEW_RUN}" if api else "/")
    phase.new_run_measured = True
    for _ in range(int(NEW_RUN_WAIT_S / NEW_RUN_EVERY_S) + 1):
        try:
            _, status, body = timed_get(url, NEW_RUN_WAIT_S)
            text = body.decode(errors="replace")
            if status == 200 and (
                api_lists(json.loads(text), NEW_RUN) if api else html_lists(text, NEW_RUN)
            ):
                phase.new_run_s = time.perf_counter() - start
                return
        except (OSError, ValueError):
            pass
        if time.perf_counter() - start > NEW_RUN_WAIT_S:
            return
        time.sleep(NEW_RUN_EVERY_S)


def serve_phase(
    parent: Path, cache: Path, workers: int, probe: str, timeout: float,
    new_run_from: Path | None = None,
) -> Phase:  # fmt: skip
    phase = Phase()
    server = start_visualize(parent, "--disk-cache", str(cache), "--workers", str(workers))
    try:
        server.wait_until_ready(min(timeout, START_TIMEOUT_S))
        deadline = time.monotonic() + timeout
        done = threading.Event()
        prober = Prober(server.url(probe), done, phase, timeout)
        answers: list[tuple[float, int, bytes]] = []
        start = time.perf_counter()
        first = threading.Thread(
            target=lambda: answers.append(timed_get(server.url("/"), timeout)), daemon=True
        )
        first.start()
        prober.start()  # the picker's request went first; the sample page while it works
        first.join(timeout + 1)
        if answers:
            phase.first_s, phase.first_status = answers[0][0], answers[0][1]
            phase.first_from_start_s = start + answers[0][0] - server.started_at
        wait_all_read(server, phase, deadline)
        done.set()
        prober.join(timeout)
        memory(server, phase)
        for _ in range(IDLE_PROBES):
            seconds, status, _ = timed_get(server.url(probe), timeout)
            if status == 200:
                phase.idle.append(seconds)
        if new_run_from is not None:
            new_run_visible(server, parent, new_run_from, phase)
    finally:
        server.stop()
        shutil.rmtree(parent / NEW_RUN, ignore_errors=True)
    return phase


def seconds(value: float | None, mark: str = "") -> str:
    shown = "-" if value is None else f"{value:.3f} s"
    return f"{shown} {mark}".strip()


def sample_cell(phase: Phase, pick: str) -> str:
    times = phase.indexing_probes
    if not times:
        return "n/a (not indexing)"
    value = statistics.median(times) if pick == "p50" else max(times)
    return seconds(value, verdict(value, TARGET_SAMPLE_S))


def mb(total: int) -> str:
    return f"{total / MB:.0f} MB"


def median_of(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def figures(phase: Phase, restart: bool, timeout: float) -> list[str]:
    """One column of the table: the figures of a phase, each with its verdict where the issue
    sets a target for it."""
    if phase.all_read_s is None:
        all_read = f"> {timeout:g} s ({phase.last_seen})"
    else:
        mark = verdict(phase.all_read_s, TARGET_RESTART_ALL_S) if restart else ""
        all_read = seconds(phase.all_read_s, mark)
    indexing, idle = median_of(phase.indexing_probes), median_of(phase.idle)
    new_run = "-"
    if phase.new_run_measured:
        new_run = (
            seconds(phase.new_run_s, "meets")
            if phase.new_run_s is not None
            else f"not shown in {NEW_RUN_WAIT_S:g} s: MISSES"
        )
    return [
        seconds(phase.first_s, verdict(phase.first_s, TARGET_FIRST_S)),
        seconds(phase.first_from_start_s),
        all_read,
        sample_cell(phase, "p50"),
        sample_cell(phase, "max"),
        f"{len(phase.indexing_probes)} / {phase.later_probes} / {len(phase.probe_errors)}",
        seconds(idle),
        f"{indexing / idle:.1f}x" if indexing is not None and idle else "-",
        mb(sum(phase.worker_rss))
        + (
            f" ({' + '.join(mb(r) for r in phase.worker_rss)})" if len(phase.worker_rss) > 1 else ""
        ),
        f"{mb(phase.pool_rss)} in {phase.pools}",
        new_run,
    ]


ROWS = (
    ("picker first answer (GET /, the request)", f"< {TARGET_FIRST_S:g} s"),
    ("  the same from process start", ""),
    ("every reading in, from process start", f"< {TARGET_RESTART_ALL_S:g} s after a restart"),
    ("sample page while indexing, p50", f"< {TARGET_SAMPLE_S:g} s"),
    ("sample page while indexing, max", f"< {TARGET_SAMPLE_S:g} s"),
    ("  probes while indexing / after / failed", ""),
    ("sample page idle, p50", ""),
    ("  while indexing / idle (p50)", ""),
    ("worker RSS once done (all workers)", "stated"),
    ("  their index pool processes' RSS", ""),
    (f"a new run folder listed ({NEW_RUN})", "without a restart"),
)


def report(n: int, args: argparse.Namespace, workers: int, cold: Phase, warm: Phase) -> str:
    lines = [
        f"\n{n} runs x {args.steps} steps x {args.samples} samples, {workers} worker(s);"
        f" readings polled with {cold.via or '-'}; sample page {probe_path(n, args.steps)}",
        f"  {'figure':<44} {'cold':<24} {'restart':<24} target",
    ]
    columns = zip(
        ROWS, figures(cold, False, args.timeout), figures(warm, True, args.timeout), strict=True
    )
    lines += [f"  {name:<44} {a:<24} {b:<24} {target}" for (name, target), a, b in columns]
    return "\n".join(lines)


def probe_path(n: int, steps: int) -> str:
    """A sample page of a run near the end of the name order (run-0997 of 1,000)."""
    return f"/runs/{run_name(max(0, n - 3))}/train/{min(3, steps - 1)}/sample/0/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int_list, default=[100, 300, 1000], help="N, e.g. 100,300")
    parser.add_argument("--steps", type=int, default=25, help="train steps a run")
    parser.add_argument("--samples", type=int, default=64, help="samples a step")
    parser.add_argument("--workers", type=int_list, default=[1, 2], help="W, e.g. 1,2")
    parser.add_argument("--eval", action="store_true", help="copy the demo's eval steps too")
    parser.add_argument(
        "--keep", type=Path, help="write the runs here (or reuse them) and keep them"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="bound of each wait, s")
    args = parser.parse_args()
    if args.steps < 1 or args.samples < 1:
        parser.error("--steps and --samples must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    store = args.keep or work
    store.mkdir(parents=True, exist_ok=True)
    label = f"s{args.steps}-k{args.samples}{'-eval' if args.eval else ''}"
    try:
        started = time.perf_counter()
        templates = write_templates(
            store / f"templates-{label}", args.steps, args.samples, args.eval
        )
        print(
            f"{len(templates)} template runs ready in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        for n in args.runs:
            parent = store / f"runs-{n}-{label}"
            complete = store / f"runs-{n}-{label}.complete"
            started = time.perf_counter()
            shutil.rmtree(parent / NEW_RUN, ignore_errors=True)
            if complete.exists():
                size, how = tree_size(parent), "reused"
            else:
                shutil.rmtree(parent, ignore_errors=True)
                size, how = write_runs(parent, n, templates), "written"
                complete.touch()
            print(f"{n} runs {how} in {time.perf_counter() - started:.1f} s:"
                  f" {size / 1e9:.2f} GB under {parent}", flush=True)  # fmt: skip
            for workers in args.workers:
                cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
                probe = probe_path(n, args.steps)
                cold = serve_phase(parent, cache, workers, probe, args.timeout)
                warm = serve_phase(parent, cache, workers, probe, args.timeout, templates[0])
                shutil.rmtree(cache, ignore_errors=True)
                print(report(n, args, workers, cold, warm), flush=True)
            if args.keep is None:
                shutil.rmtree(parent, ignore_errors=True)
                complete.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
