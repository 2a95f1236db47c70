"""Issue 26, item 9, through real `visualize` servers: a TensorBoard directory of more event files
than are read says so (banner, `api/scalars`, the trends JSON the trends page draws its note
from); a scalar at a negative step is in `tags` and `series` alike; and a file rewritten over
and over while clients poll never gives an answer that mixes two versions.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rollouts.store.scalars.discovery import MAX_EVENT_FILES
from tests.support.data import relax_line, sample
from tests.support.events import record, scalar_event
from tests.support.servers import get_json, run_visualize

pytestmark = pytest.mark.e2e

STARTED = 1_700_000_000
ANSWERS = 300  # answers checked while the file is rewritten (bounded, and by time below)
WINDOW_S = 60.0
LIMIT_SAID = f"Read the newest {MAX_EVENT_FILES:,} of {MAX_EVENT_FILES + 1:,} event files"


def save_with_steps(root: Path) -> Path:
    train = root / "rollout_result" / "train"
    train.mkdir(parents=True)
    for step in range(3):
        (train / f"{step}.jsonl").write_text(relax_line(sample(0, rollout_id=step)))
    (root / "tensorboard_log").mkdir()
    return root


def two_tag_version(steps: int, fraction: float) -> bytes:
    """Tags "a" and "b" at steps 0..steps-1, each value `step + fraction`: the versions 0.25
    and 0.75 have the same length and wall times, and differ in every value."""
    return b"".join(
        record(scalar_event(tag, s, s + fraction, 100.0 + s)) for s in range(steps) for tag in "ab"
    )


def test_more_event_files_than_are_read_is_said_everywhere(tmp_path: Path) -> None:
    save = save_with_steps(tmp_path / "save")
    for k in range(MAX_EVENT_FILES + 1):  # file k: the k-th restart, logging step k
        path = save / "tensorboard_log" / f"events.out.tfevents.{STARTED + k}.host.{k}"
        path.write_bytes(record(scalar_event("train/loss", k, 1.0, STARTED + k)))
    with run_visualize(save / "rollout_result") as server:
        assert f"; {LIMIT_SAID.lower()} (at most 10,000)" in server.stdout()  # the banner
        status, body = get_json(server.url("/api/scalars"), timeout=120)
        assert status == 200 and body["source"]["message"].startswith(LIMIT_SAID)
        # The answer names at most 100 of the files it read (the newest), and counts them all.
        files = body["source"]["files"]
        assert (len(files), body["source"]["files_total"]) == (100, MAX_EVENT_FILES)
        assert (
            files[-1]["name"]
            == f"events.out.tfevents.{STARTED + MAX_EVENT_FILES}.host.{MAX_EVENT_FILES}"
        )
        (tag,) = body["tags"]
        assert (tag["points"], tag["first_step"], tag["last_step"]) == (
            MAX_EVENT_FILES,
            1,  # the oldest file (step 0) is the one left out
            MAX_EVENT_FILES,
        )
        assert len(body["series"]["train/loss"]) == MAX_EVENT_FILES
        status, trends = get_json(server.url("/api/jsonl/train/trends"), timeout=120)
        assert status == 200 and trends["scalars"]["message"].startswith(LIMIT_SAID)


def test_a_negative_step_is_counted_and_served_alike(tmp_path: Path) -> None:
    save = save_with_steps(tmp_path / "save")
    path = save / "tensorboard_log" / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event("a", s, float(s))) for s in (-5, 0, 2)))
    with run_visualize(save / "rollout_result") as server:
        status, body = get_json(server.url("/api/scalars"))
        assert status == 200
        (tag,) = body["tags"]
        assert (tag["points"], tag["first_step"]) == (3, -5)
        assert [p[0] for p in body["series"]["a"]] == [-5, 0, 2]
        _, after = get_json(server.url("/api/scalars?after=-6"))
        assert [p[0] for p in after["series"]["a"]] == [-5, 0, 2]
        _, after = get_json(server.url("/api/scalars?after=-5"))
        assert [p[0] for p in after["series"]["a"]] == [0, 2]


def one_version(body: dict[str, Any]) -> bool:
    """Whether every value of every tag comes from one version (or the start of one, as a
    file being written shows), and the tags count what the series hold."""
    fractions = {v - s for points in body["series"].values() for s, v, _ in points}
    counted = {t["tag"]: t["points"] for t in body["tags"]}
    return len(fractions) <= 1 and counted == {t: len(p) for t, p in body["series"].items()}


def test_a_file_rewritten_while_polled_never_mixes_versions(tmp_path: Path) -> None:
    save = save_with_steps(tmp_path / "save")
    path = save / "tensorboard_log" / "events.out.tfevents.1.host"
    versions = [two_tag_version(50, 0.25), two_tag_version(50, 0.75)]
    path.write_bytes(versions[0])
    stop = threading.Event()

    def rewrite() -> None:  # in place, as `cp` or a careless logger does: truncate, write
        n = 0
        while not stop.is_set() and n < 100_000:
            with path.open("r+b") as f:
                f.truncate(0)
                f.write(versions[n % 2])
            n += 1

    answers: list[dict[str, Any]] = []
    with run_visualize(save / "rollout_result") as server:

        def poll() -> None:
            deadline = time.monotonic() + WINDOW_S
            while len(answers) < ANSWERS and time.monotonic() < deadline:
                status, body = get_json(server.url("/api/scalars"))
                assert status == 200
                answers.append(body)

        writer = threading.Thread(target=rewrite, daemon=True)
        clients = [threading.Thread(target=poll, daemon=True) for _ in range(3)]
        writer.start()
        for client in clients:
            client.start()
        for client in clients:
            client.join(WINDOW_S + 30)
        stop.set()
        writer.join(30)
    assert len(answers) >= ANSWERS and not writer.is_alive()
    assert [a["source"]["version"] for a in answers if not one_version(a)] == []
    # One version number, one answer: two answers of the same version hold the same series.
    by_version: dict[int, Any] = {}
    for answer in answers:
        series = by_version.setdefault(answer["source"]["version"], answer["series"])
        assert series == answer["series"]
