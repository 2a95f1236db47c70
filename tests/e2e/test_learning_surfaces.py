"""One verdict on every surface: for the demo runs (with their TensorBoard scalars), the run
picker's chip, the trends JSON and page, and the Training snapshot of the same state say the same
label in the same tone (presentation/learning.py decides once; the pages only draw it). In e2e,
not the fast tier: it writes TensorBoard event files, and importing tensorboard costs seconds."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches

from rollouts import demo
from rollouts.demo.scalars import write_demo_scalars
from tests.support.wait import wait_for

pytest.importorskip("tensorboard")  # the demo's scalars, whose KL rule the collapse run reads

PREFIX = "/portal/rollouts"
STEPS = 24
# A demo run and the Training preview of the same state.
SAME_STATE = {"steady-rise": "rising", "plateau": "plateau", "collapse": "kl"}


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("learning")
    runs = demo.write_demo_runs(root, train_steps=STEPS, eval_every=8, samples_per_step=48)
    for name, save in runs.items():
        write_demo_scalars(save, STEPS, demo.RUNS[name])
    return runs


@pytest.fixture
def several_runs(settings, demo_runs: dict[str, Path]) -> dict[str, Path]:
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {name: str(save) for name, save in demo_runs.items()}
    caches["rollouts"].clear()
    return demo_runs


def picker_chips(client) -> dict[str, dict[str, str]]:
    """Each run's chip on the run picker: its text, class and tone, once every run is read."""

    def chips() -> dict[str, dict[str, str]]:
        page = client.get(f"{PREFIX}/runs/").content.decode()
        found = re.findall(
            r'data-run="([\w-]+)">.*?<span class="rv-run-reading ([^"]+)" data-reading="[^"]*"'
            r' data-tone="(\w+)" title="[^"]*">([^<]*)</span>',
            page,
            re.S,
        )
        return {
            run: {"label": html.unescape(text), "class": cls, "tone": tone}
            for run, cls, tone, text in found
        }

    return wait_for(chips, "every run's reading", until=lambda got: len(got) == len(SAME_STATE))


def trends_reading(client, run: str) -> dict[str, Any]:
    url = f"{PREFIX}/runs/{run}/api/jsonl/train/trends"
    answer = wait_for(lambda: client.get(url).json(), f"{run}'s trends", until=lambda a: a["done"])
    return answer["reading"]


def test_the_picker_and_the_trends_say_the_same_for_every_demo_run(client, several_runs):
    chips = picker_chips(client)
    for run in SAME_STATE:
        verdict = trends_reading(client, run)["verdict"]
        assert chips[run]["label"] == verdict["label"], run
        assert chips[run]["tone"] == verdict["tone"], run
        assert chips[run]["class"] == f"rv-learning rv-learning-{verdict['tone']}", run
        # The trends page draws the answer it embeds: the same verdict.
        page = client.get(f"{PREFIX}/runs/{run}/train/trends/").content.decode()
        embedded = re.search(r'id="rv-trends-data">(.*?)</script>', page, re.S)
        assert embedded is not None
        assert json.loads(embedded.group(1))["reading"]["verdict"] == verdict
    # The issue's run: its scalars' KL rule overrides the falling curve, on both pages alike.
    assert chips["collapse"] == {
        "label": "KL too large",
        "class": "rv-learning rv-learning-bad",
        "tone": "bad",
    }
    assert chips["steady-rise"]["tone"] == "good"


def test_the_training_snapshot_says_what_the_trends_say_for_the_same_state(
    client, several_runs, hosted
):
    for run, preview in SAME_STATE.items():
        trends = trends_reading(client, run)
        snapshot = client.get(f"{PREFIX}/api/train/state?preview={preview}").json()
        assert snapshot["reading"]["reading"] == trends["reading"], (run, preview)
        shown = {k: snapshot["reading"]["verdict"][k] for k in ("state", "label", "tone")}
        assert shown == {k: trends["verdict"][k] for k in ("state", "label", "tone")}, run


def test_the_terminal_ui_is_given_the_trends_reading(client, several_runs):
    """`visualize --tui` hands the app the trends' own reading (the run's TensorBoard rules), so
    the terminal's line says "KL too large" for the collapse run too, not the bare curve."""
    from rollouts.management.commands.visualize import tui_reading
    from rollouts.store import Catalog

    catalog = Catalog(several_runs["collapse"])
    reading = wait_for(lambda: tui_reading(catalog, "train"), "the collapse run read")
    assert reading is not None
    assert reading["verdict"] == trends_reading(client, "collapse")["verdict"]
    assert reading["verdict"]["label"] == "KL too large"


# A job whose reward rises over 12 points, then exits 3: a crash over a rising curve.
CRASH_SCRIPT = (
    "import json\n"
    "for n in range(12):\n"
    "    point = {'event': 'progress', 'timesteps': 100 * (n + 1), 'ep_rew_mean': 0.1 * n}\n"
    "    print(json.dumps(point), flush=True)\n"
    "raise SystemExit(3)\n"
)
CRASHER = f"""
[job]
command = ["{{python}}", "-c", {json.dumps(CRASH_SCRIPT)}]
control = false
grace_seconds = 0.5
"""


def test_a_crashed_job_reads_failed_in_the_bad_tone_over_its_rising_curve(
    client, settings, tmp_path
):
    from rollouts.training.manager import forget_managers, manager_for

    spec = tmp_path / "crasher.toml"
    spec.write_text(CRASHER)
    settings.ROLLOUTS_TRAIN_SPEC = str(spec)
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    try:
        started = client.post(f"{PREFIX}/api/train/start", "{}", content_type="application/json")
        assert started.status_code == 200, started.content
        job = manager_for(spec).job
        assert job is not None and job.wait(20)
        state = wait_for(
            lambda: client.get(f"{PREFIX}/api/train/state").json(),
            "the crash and its points",
            until=lambda s: s["job"]["outcome"] == "failed" and len(s["metrics"]["points"]) == 12,
        )
    finally:
        forget_managers()
    verdict = state["reading"]["verdict"]
    assert (verdict["state"], verdict["label"], verdict["tone"]) == ("failed", "failed", "bad")
    assert "exit code 3" in verdict["why"]
    assert "before it failed the curve read rising" in state["reading"]["notes"][0]
