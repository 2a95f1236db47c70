"""The run picker of a folder of runs (ROLLOUTS_RUNS_DIR; rollouts/views/runpicker.py,
rollouts/web/picker.py): 50 runs a page, name and reading filters, the sort by newest step,
bad parameters as a 400, `api/runs` and its keys, runs that come and go while serving, and a
restart that has the shown page's rows from the disk entries within its first request."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches

from rollouts.store import StepIndex
from rollouts.web import picker as picker_module
from rollouts.web import runs as runs_module
from tests.support.data import relax_line, sample
from tests.support.wait import wait_for

PREFIX = "/portal/rollouts"
COUNT = 120
PER_PAGE = 50
# Mixed case on disk: the name filter ignores case.
NAMES = [f"PPO-{i:03d}" if i % 3 == 0 else f"grpo-{i:03d}" for i in range(COUNT)]
# How many minutes ago each run's step was written: a permutation, so the newest-first order is
# neither the names' order nor its reverse.
AGE_MIN = {name: (i * 37) % COUNT for i, name in enumerate(NAMES)}
LISTED = sorted(NAMES)  # the picker's order without a sort: the folder's, by name
FEW = ["alpha", "beta", "gamma"]
TOP_KEYS = {"runs", "total", "listed", "page", "pages", "per_page", "pending", "done", "gone",
            "next_url", "prev_url"}  # fmt: skip
ROW_KEYS = {"name", "url", "trends_url", "colour", "bucket", "steps", "changed_ns",
            "latest_reward", "latest_step", "spark", "reading", "state", "error"}  # fmt: skip
INDEXED_S = 60.0  # the most the background indexing of the folder may take


def write_run(root: Path, name: str, age_min: float, steps: int = 1) -> Path:
    """<name>/rollout_result/train/<N>.jsonl, written `age_min` minutes ago (its folders too,
    as when the step file was created)."""
    data_dir = root / name / "rollout_result"
    train = data_dir / "train"
    train.mkdir(parents=True)
    when = time.time() - age_min * 60
    for step in range(steps):
        rewards = [(step + len(name)) % 2 / 2, 0.5]
        path = train / f"{step}.jsonl"
        path.write_text("".join(relax_line(sample(i, reward=r)) for i, r in enumerate(rewards)))
        os.utime(path, (when, when))
    for folder in (train, data_dir, root / name):
        os.utime(folder, (when, when))
    return data_dir


@pytest.fixture
def served(settings, tmp_path, monkeypatch) -> Any:
    """The folder of runs `tmp_path/runs`, served with a disk cache of this test's own."""
    root = tmp_path / "runs"
    root.mkdir()
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {}
    settings.ROLLOUTS_RUNS_DIR = str(root)
    settings.ROLLOUTS_DISK_CACHE = str(tmp_path / "cache")
    settings.ROLLOUTS_INDEX_PROCESSES = 1
    caches["rollouts"].clear()
    monkeypatch.setattr(picker_module, "_rows", None)  # this test's rows, from nothing
    yield root
    shutil.rmtree(root)  # what this test's indexing has left to do ends at once


@pytest.fixture
def folder(served: Path) -> Path:
    """120 runs: three pages."""
    for name in NAMES:
        write_run(served, name, AGE_MIN[name])
    return served


@pytest.fixture
def few(served: Path) -> Path:
    for age, name in enumerate(FEW):
        write_run(served, name, age)
    return served


def api(client, query: str = "") -> dict[str, Any]:
    response = client.get(f"{PREFIX}/api/runs{query}")
    assert response.status_code == 200, response.content[:300]
    return json.loads(response.content)


def indexed(client, query: str = "") -> dict[str, Any]:
    """The JSON once every run is read (asked every 0.2 s: each request makes the indexing
    wait while it is answered)."""
    return wait_for(lambda: api(client, query), "every run read", INDEXED_S,
                    until=lambda body: body["done"], interval=0.2)  # fmt: skip


def rows_html(html: str) -> list[str]:
    return re.findall(r'<tr class="rv-run-item[^"]*"[^>]* data-run="([^"]+)"', html)


def every_row(client) -> dict[str, dict[str, Any]]:
    rows = {}
    for page in (1, 2, 3):
        rows.update({row["name"]: row for row in api(client, f"?page={page}")["runs"]})
    return rows


def test_fifty_runs_a_page_and_a_page_past_the_end_is_the_last(client, folder):
    first = api(client)
    assert (first["total"], first["listed"], first["pages"], first["per_page"]) == (
        COUNT,
        COUNT,
        3,
        PER_PAGE,
    )
    assert [row["name"] for row in first["runs"]] == LISTED[:PER_PAGE]  # by name, as listed
    third = api(client, "?page=3")
    assert len(third["runs"]) == COUNT - 2 * PER_PAGE
    assert third["runs"][-1]["name"] == LISTED[-1]
    assert third["next_url"] is None and third["prev_url"] == "?page=2"
    beyond = api(client, "?page=999")
    assert beyond["page"] == 3 and beyond["runs"] == third["runs"][: len(beyond["runs"])]
    assert api(client, "?page=0")["page"] == 1
    last = client.get(f"{PREFIX}/?page=999").content.decode()
    assert len(rows_html(last)) == COUNT - 2 * PER_PAGE
    assert 'rel="prev" href="?page=2"' in last and 'rel="next"' not in last
    second = client.get(f"{PREFIX}/runs/?page=2").content.decode()
    assert rows_html(second) == LISTED[PER_PAGE : 2 * PER_PAGE]
    assert 'rel="next" href="?page=3"' in second and 'rel="prev" href="?"' in second


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("page=abc", "page must be a whole number"),
        ("page=1.5", "page must be a whole number"),
        ("page=" + "9" * 5000, "page must be a whole number"),
        ("reading=bogus", "reading must be one of"),
        ("reading=%3Cscript%3E", "reading must be one of"),
        ("q=" + "x" * 201, "q is longer than 200 characters"),
    ],
)
def test_a_bad_parameter_is_a_400_that_says_why_on_the_page_and_in_the_json(
    client, few, query, says
):
    for url in (f"{PREFIX}/?{query}", f"{PREFIX}/runs/?{query}", f"{PREFIX}/api/runs?{query}"):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == 400, url
        assert says in body
        assert str(few) not in body and "Traceback" not in body
        assert "<script>" not in body


def test_the_name_filter_is_a_substring_or_a_glob_either_case(client, folder):
    ppo = api(client, "?q=ppo")
    expected = [n for n in LISTED if n.startswith("PPO-")]
    assert ppo["total"] == len(expected) and ppo["listed"] == COUNT
    assert [row["name"] for row in ppo["runs"]] == expected[:PER_PAGE]
    assert api(client, "?q=O-11")["total"] == len([n for n in NAMES if "o-11" in n.lower()])
    glob = api(client, "?q=GRPO-1?0")
    expected = [n for n in LISTED if n.startswith("grpo-1") and n.endswith("0")]
    assert [row["name"] for row in glob["runs"]] == expected and expected
    assert api(client, "?q=*-00[12]")["total"] == 2  # PPO-000 is not one
    assert api(client, "?q=nothing*")["total"] == 0
    assert api(client, "?q=*")["total"] == COUNT
    assert api(client, "?q=[")["total"] == 0  # an unclosed bracket: itself, no error
    assert api(client, "?q=%20%20")["total"] == COUNT  # blank: no filter
    second = client.get(f"{PREFIX}/?q=GRPO&page=2").content.decode()
    assert rows_html(second) == [n for n in LISTED if n.startswith("grpo-")][PER_PAGE:]
    paged = api(client, "?q=grpo&page=2")
    assert paged["next_url"] is None and paged["prev_url"] == "?q=grpo"  # 80 runs: 2 pages


def test_readings_fill_in_and_filter_and_the_newest_step_sorts_first(client, folder):
    # The first look: nothing read yet, every run pending (three pages of them).
    page = client.get(f"{PREFIX}/?reading=pending").content.decode()
    assert "data-indexing" in page and "page 1 of 3" in page
    assert page.count('class="rv-run-item rv-run-pending"') == PER_PAGE
    first = api(client)
    assert first["done"] is False and first["pending"] > 0
    body = indexed(client)
    assert set(body) == TOP_KEYS
    assert (body["pending"], body["gone"]) == (0, [])
    for row in body["runs"]:
        assert set(row) == ROW_KEYS
        assert row["state"] == "read" and row["steps"] == 1 and row["bucket"] == "train"
        assert row["url"] == f"{PREFIX}/runs/{row['name']}/"
    assert api(client, "?reading=pending")["total"] == 0
    rows = every_row(client)
    assert set(rows) == set(NAMES)
    states = {name: row["reading"]["verdict"]["state"] for name, row in rows.items()}
    for state in set(states.values()):
        filtered = api(client, f"?reading={state}&page=1")
        assert filtered["total"] == sum(1 for s in states.values() if s == state)
        assert {row["reading"]["verdict"]["state"] for row in filtered["runs"]} == {state}
    newest = api(client, "?sort=changed&order=desc")
    by_age = sorted(NAMES, key=lambda n: AGE_MIN[n])
    assert [row["name"] for row in newest["runs"]] == by_age[:PER_PAGE]
    changed = [row["changed_ns"] for row in newest["runs"]]
    assert changed == sorted(changed, reverse=True)
    assert newest["next_url"] == "?sort=changed&order=desc&page=2"
    last = client.get(f"{PREFIX}/?sort=changed&order=desc&page=3").content.decode()
    assert rows_html(last) == by_age[2 * PER_PAGE :]
    assert "data-indexing" not in last and "rv-run-pending" not in last


def test_a_run_that_appears_is_listed_and_one_that_goes_says_so(client, few):
    assert api(client)["listed"] == len(FEW)
    write_run(few, "zz-new", 0)
    body = api(client, "?q=zz-new")
    assert (body["listed"], body["total"]) == (len(FEW) + 1, 1)
    assert body["runs"][0]["url"] == f"{PREFIX}/runs/zz-new/"
    assert client.get(f"{PREFIX}/runs/zz-new/").status_code == 302  # to its newest step
    shutil.rmtree(few / "beta")
    body = api(client)
    assert body["listed"] == len(FEW) and body["gone"] == ["beta"]
    assert [row["name"] for row in body["runs"]] == ["alpha", "gamma", "zz-new"]
    for url in (f"{PREFIX}/runs/beta/", f"{PREFIX}/runs/beta/api/jsonl/train/trends"):
        response = client.get(url)
        said = html.unescape(response.content.decode())
        assert response.status_code == 404, url
        assert "the run 'beta' is no longer there" in said and str(few) not in said
    never = client.get(f"{PREFIX}/runs/never-was/")
    assert never.status_code == 404
    assert "no run 'never-was'" in html.unescape(never.content.decode())
    write_run(few, "beta", 0)
    assert api(client)["gone"] == []
    assert client.get(f"{PREFIX}/runs/beta/").status_code == 302


def test_named_runs_are_served_beside_the_folder_s(client, few, settings, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    settings.ROLLOUTS_DATA_DIRS = {
        "named": str(write_run(elsewhere, "named", 5)),
        "beta": str(write_run(elsewhere, "beta", 5, steps=2)),  # a name taken: the named run
    }
    body = indexed(client)
    assert [(row["name"], row["steps"]) for row in body["runs"]] == [
        ("named", 1),
        ("beta", 2),
        ("alpha", 1),
        ("gamma", 1),
    ]
    assert body["listed"] == len(FEW) + 1
    for name in ("named", "beta", "alpha"):
        assert client.get(f"{PREFIX}/runs/{name}/").status_code == 302, name


def test_a_restart_has_the_shown_page_from_the_disk_entries_in_its_first_answer(
    client, folder, monkeypatch
):
    indexed(client)
    # A new process: no rows, no catalogs, no index cache; only the disk cache is as it was.
    monkeypatch.setattr(picker_module, "_rows", None)
    monkeypatch.setattr(runs_module, "_catalogs", {})
    monkeypatch.setattr(runs_module, "_folders", {})
    caches["rollouts"].clear()
    monkeypatch.setattr(picker_module, "REQUEST_BUDGET_S", INDEXED_S)  # however slow this host
    decoded: list[Path] = []
    real = StepIndex.build

    def build(path: Path, *args: Any, **kwargs: Any) -> StepIndex:
        decoded.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(StepIndex, "build", build)
    first = api(client, "?page=2")
    assert [row["state"] for row in first["runs"]] == ["read"] * PER_PAGE
    assert [row["name"] for row in first["runs"]] == LISTED[PER_PAGE : 2 * PER_PAGE]
    assert all(row["reading"] is not None for row in first["runs"])
    assert first["pending"] == COUNT - PER_PAGE  # the other pages: made in the background
    assert indexed(client)["pending"] == 0
    assert decoded == []  # a restart costs the steps' stats, never a read of a step


def test_pages_asked_for_under_any_name_keep_a_bounded_memory(client, few):
    """Every page under runs/<name>/ puts that run first in line, whatever the name (a 404
    too): a stream of made-up names must not grow the process without end."""
    rows = picker_module.picker_rows()
    made_up = 20_000
    for i in range(made_up):
        rows.asked(f"made-up-{i}")
    kept = len(rows._asked)
    assert kept < made_up // 2
    assert "made-up-0" not in rows._asked and f"made-up-{made_up - 1}" in rows._asked
    assert client.get(f"{PREFIX}/runs/made-up-x/").status_code == 404
    assert "made-up-x" in rows._asked and len(rows._asked) == kept  # the newest is kept


def restart(monkeypatch) -> None:
    """A new process: no rows, no catalogs, no index cache; the disk cache as it was."""
    monkeypatch.setattr(picker_module, "_rows", None)
    monkeypatch.setattr(runs_module, "_catalogs", {})
    monkeypatch.setattr(runs_module, "_folders", {})
    caches["rollouts"].clear()
    monkeypatch.setattr(picker_module, "REQUEST_BUDGET_S", INDEXED_S)  # however slow this host


@pytest.mark.parametrize("sort", ["steps", "reading"])
def test_a_page_sorted_by_rows_it_did_not_have_yet_is_not_done(client, served, monkeypatch, sort):
    """After a restart the first answer reads the shown rows from the disk entries, but it
    ordered (or filtered) the runs before it had them: it must say so (not done, the page
    refreshing), and the next answer has them in order."""
    for name, steps in (("alpha", 1), ("beta", 3), ("gamma", 2)):
        write_run(served, name, 10, steps=steps)
    query = "?reading=pending" if sort == "reading" else f"?sort={sort}&order=desc"
    truth = [row["name"] for row in indexed(client, query)["runs"]]
    restart(monkeypatch)
    first = api(client, query)
    names = [row["name"] for row in first["runs"]]
    assert names == truth or not first["done"]
    restart(monkeypatch)
    page = client.get(f"{PREFIX}/{query}").content.decode()
    assert rows_html(page) == truth or "data-indexing" in page
    assert [row["name"] for row in indexed(client, query)["runs"]] == truth


def test_the_overlay_offers_the_20_most_recently_changed_runs_and_the_current_one(
    folder, settings, tmp_path
):
    # A thousand runs' checkboxes (and a catalog each on every trends poll) help nobody: the
    # trends overlay and compare offer the named runs, then the folder's newest, and this run.
    named = write_run(tmp_path / "named", "kept", 0)
    settings.ROLLOUTS_DATA_DIRS = {"kept": str(named)}
    newest_first = sorted(NAMES, key=lambda name: AGE_MIN[name])
    oldest = newest_first[-1]
    offered = [name for name, _ in runs_module.overlay_runs(oldest)]
    assert offered[0] == "kept"
    assert offered[1:] == [oldest, *newest_first[:19]]
    assert [name for name, _ in runs_module.overlay_runs(newest_first[3])][1:] == newest_first[:20]
