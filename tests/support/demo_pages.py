"""One page of each type on `./run demo`'s data (three runs), for the accessibility tests and
docs/screenshots.py: the same pages are checked and shown."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.data import write_picker_runs
from tests.support.servers import ServerProcess, get_json, run_visualize
from tests.support.wait import wait_for

RUN = "/runs/steady-rise"
PAGES = {
    "runs": "/",
    "sample": f"{RUN}/train/{{train}}/sample/0/",
    "sample-eval": f"{RUN}/eval/{{eval}}/sample/0/",
    "group": f"{RUN}/train/{{train}}/group/0/?from=0",
    "stats": f"{RUN}/train/{{train}}/stats/",
    "table": f"{RUN}/train/{{train}}/table/?sort=reward&order=desc",
    "trends": f"{RUN}/train/trends/",
    "error": f"{RUN}/train/999/sample/0/",
    "search": f"{RUN}/train/search/?q=boxed",
    "sample-search": f"{RUN}/train/{{train}}/sample/0/?q=boxed",
    "prompt": f"{RUN}/train/prompt/{{prompt}}/",
    "compare": f"{RUN}/eval/compare/?a=0&b={{eval}}",
}


def write_demo_runs(root: Path) -> dict[str, int | str]:
    """The demo runs under `root`; the latest train and eval step of the run the pages show,
    and the prompt id of that train step's first sample."""
    subprocess.run(
        [sys.executable, "-m", "rollouts.demo", str(root), "--runs"], check=True, timeout=300
    )
    buckets = root / RUN.rsplit("/", 1)[1] / "rollout_result"
    latest: dict[str, int | str] = {
        bucket: max(int(f.stem) for f in (buckets / bucket).glob("*.jsonl") if f.stem.isdigit())
        for bucket in ("train", "eval")
    }
    with (buckets / "train" / f"{latest['train']}.jsonl").open(encoding="utf-8") as f:
        latest["prompt"] = format_prompt_id(prompt_id_of_value(json.loads(f.readline())["prompt"]))
    return latest


def page_urls(latest: dict[str, int | str]) -> dict[str, str]:
    return {name: path.format(**latest) for name, path in PAGES.items()}


@contextmanager
def demo_viewer(root: Path) -> Iterator[ServerProcess]:
    """`visualize` on the demo runs written under `root`; `server.pages` names one URL of
    each page type."""
    latest = write_demo_runs(root)
    with run_visualize(root) as server:
        server.pages = page_urls(latest)  # type: ignore[attr-defined]
        yield server


# The run picker of a folder of more runs than a page holds, filtered and sorted: the filter
# form filled in and the paging links (`write_picker_runs`' runs: 55 grpo-NN, 5 ppo-NN).
PICKER_PAGE = "/?q=grpo-*&sort=name&order=desc"
PICKER_READ_WITHIN = 120.0  # s: a bound on the wait for every reading, never a speed claim


@contextmanager
def picker_viewer(parent: Path) -> Iterator[ServerProcess]:
    """`visualize PARENT` on 60 runs written under `parent`, once every reading is in."""
    parent.mkdir(parents=True, exist_ok=True)
    write_picker_runs(parent, 55, 5)
    with run_visualize(parent) as server:
        every_reading_in(server, PICKER_READ_WITHIN)
        yield server


def every_reading_in(server: ServerProcess, within: float) -> None:
    """Wait (at most `within` seconds) until the run picker's `api/runs` says `done`."""
    wait_for(
        lambda: get_json(server.url("/api/runs"))[1],
        "every run's reading",
        within,
        until=lambda data: data["done"],
        interval=0.3,
    )
