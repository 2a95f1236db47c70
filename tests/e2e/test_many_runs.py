"""`visualize PARENT` on a folder of many runs, end to end: real `manage.py visualize` processes
(one worker and two) on loopback ports, real files, a real disk cache, no mocks.

The picker answers at once with every run listed and the rows still being read, fills them in
in the background, sees run folders come and go while it serves, and after a restart takes the
rows from the disk cache's compact entries without decoding a step again. Two gunicorn workers
sharing one disk cache leave one entry per step, no lock behind, and never write a step's entry
twice (an entry is written by an atomic rename, so a second write is a new inode).

No timing is asserted (that is the bench's job): every wait is bounded (`wait_for`) and only
says how long the test is willing to wait for the evidence.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import relax_line, sample
from tests.support.servers import ServerProcess, get_json, request, run_visualize
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

RUNS = 60  # more than one page of the picker
PER_PAGE = 50  # the picker's page (runpicker.PER_PAGE), as the spec states it
STEPS = 4
SAMPLES = 8
INDEXED_WITHIN = 120.0  # s: a bound on the wait for every reading, never a speed claim
STEP_ENTRY = re.compile(r"^[0-9a-f]{40}\.msgpack$")
RUN_ENTRY = re.compile(r"^run-[0-9a-f]{40}\.msgpack$")


# -- the runs ------------------------------------------------------------------------------------
def write_run(run_dir: Path, steps: int, samples: int, *, salt: int = 0, pad: int = 0) -> None:
    bucket = run_dir / "rollout_result" / "train"
    bucket.mkdir(parents=True)
    for step in range(steps):
        lines = (
            relax_line(
                sample(i, reward=((i + step + salt) % 4) / 4, response=f"answer {i} " + "a" * pad)
            )
            for i in range(samples)
        )
        (bucket / f"{step}.jsonl").write_text("".join(lines), encoding="utf-8")


def write_runs(parent: Path, count: int, steps: int = STEPS, samples: int = SAMPLES) -> list[str]:
    """`count` runs `run-000`... under `parent`: one written, the rest copies (quick to make;
    each copy is its own files, so its own entries in the disk cache)."""
    names = [f"run-{n:03d}" for n in range(count)]
    write_run(parent / names[0], steps, samples)
    for name in names[1:]:
        shutil.copytree(parent / names[0], parent / name)
    return names


def private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    return path


# -- reading the picker --------------------------------------------------------------------------
class PickerRows(HTMLParser):
    """The picker page's rows: `tr.rv-run-item` by `data-run`, with their classes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: dict[str, set[str]] = {}
        self.table_indexing = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        classes = set((attr.get("class") or "").split())
        if tag == "table" and attr.get("id") == "rv-runs":
            self.table_indexing = "data-indexing" in attr
        elif tag == "tr" and "rv-run-item" in classes:
            self.rows[attr.get("data-run") or ""] = classes


def picker_html(server: ServerProcess, query: str = "") -> PickerRows:
    status, _, body = request(server.url("/" + query))
    assert status == 200, body[:500]
    return PickerRows(body.decode())


def runs_api(server: ServerProcess, query: str = "") -> dict[str, Any]:
    status, data = get_json(server.url("/api/runs" + query))
    assert status == 200, data
    return data


def every_page(server: ServerProcess) -> dict[str, dict[str, Any]]:
    """Every listed run's row, from every page of `api/runs`."""
    first = runs_api(server)
    rows = {row["name"]: row for row in first["runs"]}
    for page in range(2, first["pages"] + 1):
        rows |= {row["name"]: row for row in runs_api(server, f"?page={page}")["runs"]}
    return rows


def wait_done(server: ServerProcess, query: str = "") -> dict[str, Any]:
    return wait_for(
        lambda: runs_api(server, query),
        "every run's reading (done)",
        INDEXED_WITHIN,
        until=lambda data: data["done"],
        interval=0.2,
    )


# -- the disk cache ------------------------------------------------------------------------------
def entries(cache: Path) -> dict[str, int]:
    """Every file of the disk cache by name, with its inode (a rewrite is a new one)."""
    found = {}
    for entry in os.scandir(cache):
        try:
            found[entry.name] = entry.inode()
        except FileNotFoundError:  # a temporary file renamed meanwhile
            continue
    return found


def step_entries(found: dict[str, int]) -> dict[str, int]:
    return {name: ino for name, ino in found.items() if STEP_ENTRY.match(name)}


def run_entries(found: dict[str, int]) -> dict[str, int]:
    return {name: ino for name, ino in found.items() if RUN_ENTRY.match(name)}


def locks(found: dict[str, int]) -> list[str]:
    return [name for name in found if name.endswith(".lock")]


class EntryWatch:
    """Every step entry's first inode, and each one seen written again (another inode)."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.first: dict[str, int] = {}
        self.rewritten: dict[str, list[int]] = {}

    def look(self) -> dict[str, int]:
        found = entries(self.cache)
        for name, ino in step_entries(found).items():
            first = self.first.setdefault(name, ino)
            if ino != first and ino not in self.rewritten.setdefault(name, []):
                self.rewritten[name].append(ino)
        return found


# -- one worker: listed at once, filled in, runs come and go, a restart ----------------------------
@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    base = tmp_path_factory.mktemp("many-runs")
    parent = base / "runs"
    parent.mkdir()
    return parent, private_dir(base / "disk-cache"), write_runs(parent, RUNS)


@pytest.fixture(scope="module")
def cold(many: tuple[Path, Path, list[str]]) -> Iterator[ServerProcess]:
    parent, cache, _ = many
    with run_visualize(parent, "--disk-cache", str(cache)) as server:
        yield server


def test_the_first_answer_lists_every_run_with_rows_still_being_read(many, tmp_path):
    parent, _, names = many
    with run_visualize(parent, "--disk-cache", str(private_dir(tmp_path / "cache"))) as fresh:
        first = picker_html(fresh)  # the very first picker request of a cold server
        second = picker_html(fresh, "?page=2")
    assert list(first.rows) == names[:PER_PAGE]
    assert list(second.rows) == names[PER_PAGE:]
    # Cold: no row was made before this request, and the request does not decode steps.
    assert any("rv-run-pending" in classes for classes in first.rows.values()), first.rows
    assert first.table_indexing


def test_every_reading_comes_in_and_matches_its_steps(cold, many):
    _, cache, names = many
    done = wait_done(cold)
    assert (done["total"], done["listed"], done["pending"]) == (RUNS, RUNS, 0)
    assert done["pages"] == 2 and done["per_page"] == PER_PAGE
    rows = every_page(cold)
    assert sorted(rows) == names
    for row in rows.values():
        assert row["state"] == "read", row
        assert row["steps"] == STEPS
        assert row["latest_step"] == STEPS - 1
        # The mean reward of the last step, computed from the records written here.
        expected = sum(((i + STEPS - 1) % 4) / 4 for i in range(SAMPLES)) / SAMPLES
        assert row["latest_reward"] == pytest.approx(expected)
        assert row["reading"] is not None and row["reading"]["verdict"]["state"]
    found = entries(cache)  # (with the entries of runs other tests add and remove meanwhile)
    assert len(step_entries(found)) >= RUNS * STEPS
    assert len(run_entries(found)) >= RUNS
    assert locks(found) == []
    html = picker_html(cold)
    assert not html.table_indexing
    assert not any("rv-run-pending" in classes for classes in html.rows.values())


def test_a_run_folder_made_while_serving_shows_up(cold, many):
    parent, _, _ = many
    write_run(parent / "late-arrival", 3, SAMPLES, salt=1)
    try:
        a_run_shows_up(cold)
    finally:  # the other tests of `cold` count the folder's runs
        shutil.rmtree(parent / "late-arrival")


def a_run_shows_up(cold: ServerProcess) -> None:
    found = wait_for(
        lambda: runs_api(cold, "?q=late-*"),
        "the new run in the picker",
        30,
        until=lambda data: data["total"] == 1,
        interval=0.2,
    )
    assert [row["name"] for row in found["runs"]] == ["late-arrival"]
    read = wait_for(
        lambda: runs_api(cold, "?q=late-arrival")["runs"][0],
        "the new run's reading",
        INDEXED_WITHIN,
        until=lambda row: row["state"] == "read",
        interval=0.2,
    )
    assert read["steps"] == 3
    status, _, _ = request(cold.url("/runs/late-arrival/train/trends/"))
    assert status == 200


def test_a_run_folder_removed_while_serving_is_gone_and_its_pages_say_so(cold, many):
    parent, _, _ = many
    write_run(parent / "short-lived", 2, SAMPLES)
    wait_for(lambda: runs_api(cold, "?q=short-lived")["total"], "the run listed", 30)
    status, _, _ = request(cold.url("/runs/short-lived/"))
    assert status == 200
    shutil.rmtree(parent / "short-lived")
    gone = wait_for(
        lambda: runs_api(cold),
        "the removed run named as gone",
        30,
        until=lambda data: "short-lived" in data["gone"],
        interval=0.2,
    )
    assert "short-lived" not in {row["name"] for row in gone["runs"]}
    assert runs_api(cold, "?q=short-lived")["total"] == 0
    for path in ("/runs/short-lived/", "/runs/short-lived/train/trends/",
                 "/runs/short-lived/train/0/sample/0/"):  # fmt: skip
        status, _, body = request(cold.url(path))
        assert status == 404, (path, status, body[:300])
        assert b"no longer there" in body, body[:500]
        assert str(parent).encode() not in body  # no absolute path
    html = picker_html(cold)
    assert "short-lived" not in html.rows


def test_bad_picker_queries_never_fail_the_server(cold):
    for query in ("?page=abc", "?page=99999", "?page=-3", "?reading=bogus", "?sort=%00",
                  "?q=" + "x" * 500, "?q=[", "?q=%ff%fe", "?order=sideways"):  # fmt: skip
        for path in ("/", "/api/runs"):
            status, _, body = request(cold.url(path + query))
            assert status in (200, 400), (path + query, status, body[:300])
            assert b"Traceback" not in body
    assert runs_api(cold, "?page=99999")["page"] == 2  # clamped to the last


def test_a_restart_takes_the_rows_from_the_disk_cache_without_decoding(tmp_path):
    parent = tmp_path / "runs"
    parent.mkdir()
    cache = private_dir(tmp_path / "disk-cache")
    names = write_runs(parent, RUNS, steps=2)
    with run_visualize(parent, "--disk-cache", str(cache)) as cold:
        wait_done(cold)
    before = entries(cache)
    assert locks(before) == []
    with run_visualize(parent, "--disk-cache", str(cache)) as warm:
        first = runs_api(warm)  # the restarted server's first picker request
        # Read within the request from the runs' compact entries (a cold process has no row in
        # memory, and the background indexing waits while a request is answered). How many of
        # the page's 50 fit the request's budget depends on the machine: at least one does.
        assert any(row["state"] == "read" for row in first["runs"]), first["runs"]
        done = wait_done(warm)
        assert done["listed"] == len(names)
        rows = every_page(warm)
        assert all(row["state"] == "read" for row in rows.values())
        after = entries(cache)
    # Nothing was decoded or written again: the same entries, each the same file.
    assert after == before


# -- two workers, one disk cache -----------------------------------------------------------------
def test_two_workers_sharing_a_disk_cache_decode_each_step_once(tmp_path):
    parent = tmp_path / "runs"
    parent.mkdir()
    cache = private_dir(tmp_path / "disk-cache")
    count = 24
    names = write_runs(parent, count, steps=6, samples=24)
    watch = EntryWatch(cache)
    answers: list[dict[str, Any]] = []

    def both_done() -> bool:
        watch.look()
        data = runs_api(server)
        answers.append(data)
        # Each answer comes from one worker or the other: wait until the last several all say
        # done (and the cache is complete), so both have had their turn at the queue.
        found = watch.look()
        complete = len(step_entries(found)) == count * 6 and len(run_entries(found)) == count
        return complete and len(answers) >= 8 and all(a["done"] for a in answers[-8:])

    with run_visualize(parent, "--disk-cache", str(cache), "--workers", "2") as server:
        wait_for(server.workers, "two gunicorn workers", 30, until=lambda pids: len(pids) == 2)
        wait_for(both_done, "both workers done", INDEXED_WITHIN, interval=0.05)
        rows_seen = [every_page(server) for _ in range(6)]
    watch.look()
    found = entries(cache)
    assert locks(found) == []
    assert len(step_entries(found)) == count * 6
    assert len(run_entries(found)) == count
    assert watch.rewritten == {}, f"step entries written more than once: {watch.rewritten}"
    assert step_entries(found) == watch.first
    for rows in rows_seen:  # whichever worker answered, the same rows
        assert sorted(rows) == names
        assert {n: (r["state"], r["latest_reward"], r["steps"]) for n, r in rows.items()} == {
            n: (r["state"], r["latest_reward"], r["steps"]) for n, r in rows_seen[0].items()
        }


# -- a sample page while hundreds of runs index --------------------------------------------------
def test_a_sample_page_answers_while_hundreds_of_runs_index(tmp_path):
    parent = tmp_path / "runs"
    parent.mkdir()
    cache = private_dir(tmp_path / "disk-cache")
    write_run(parent / "run-000", 3, 48, pad=2000)  # bigger steps: the indexing takes a while
    names = ["run-000"]
    for n in range(1, 200):
        names.append(f"run-{n:03d}")
        shutil.copytree(parent / "run-000", parent / names[-1])
    with run_visualize(parent, "--disk-cache", str(cache)) as server:
        first = runs_api(server)
        assert first["listed"] == 200 and not first["done"]
        for name in (names[-1], names[120], names[0]):
            status, _, body = request(server.url(f"/runs/{name}/train/2/sample/0/"))
            assert status == 200, body[:300]
            assert b"answer 0" in body  # the sample's own response, from its step file
        # The check above ran while the picker was still indexing (else it proves nothing).
        assert not runs_api(server)["done"]


# -- a lock left behind ----------------------------------------------------------------------------
def test_a_lock_left_by_a_process_that_died_is_taken_over(tmp_path):
    parent = tmp_path / "runs"
    parent.mkdir()
    cache = private_dir(tmp_path / "disk-cache")
    write_runs(parent, 6, steps=3)
    with run_visualize(parent, "--disk-cache", str(cache)) as server:
        wait_done(server)
    found = entries(cache)
    assert len(step_entries(found)) == 18 and locks(found) == []
    # A viewer died while it indexed one step: its entry not written, its lock still there,
    # held by a pid that no longer exists (a process of ours, started and reaped).
    dead = _reaped_pid()
    victim = sorted(step_entries(found))[0]
    (cache / victim).unlink()
    (cache / f"{victim}.lock").write_text(f"{socket.gethostname()} {dead} {time.time():.3f}")
    for name in run_entries(found):  # the runs' compact entries gone too: steps are read
        (cache / name).unlink()
    with run_visualize(parent, "--disk-cache", str(cache)) as server:
        done = wait_done(server)
        assert all(row["state"] == "read" for row in done["runs"]), done["runs"]
    after = entries(cache)
    assert locks(after) == []
    assert victim in after  # decoded by the new viewer, which took the lock over
    assert len(step_entries(after)) == 18
    assert {n: i for n, i in step_entries(after).items() if n != victim} == {
        n: i for n, i in step_entries(found).items() if n != victim
    }  # the other steps were read from their entries, not written again


def _reaped_pid() -> int:
    """The pid of a process that has exited and been reaped (so no process has it now, unless
    the system reused it at once)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_other_runs_of_the_folder_are_offered_to_compare_and_overlay(cold, many):
    # At most OVERLAY_RUNS (20) of a folder: the most recently changed, and the current run.
    _, _, names = many
    status, _, body = request(cold.url(f"/runs/{names[0]}/train/compare/?a=0&b=1"))
    assert status == 200, body[:300]
    offered_steps = set(re.findall(r'value="([^":]+):[0-9]+"', body.decode()))
    status, trends = get_json(cold.url(f"/runs/{names[0]}/api/jsonl/train/trends"))
    assert status == 200
    offered = {choice["name"] for choice in trends["runs"]}
    assert names[0] in offered and len(offered) == 20, offered
    assert offered_steps == offered - {names[0]}  # compare offers the same others' steps
