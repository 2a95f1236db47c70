"""The disk cache is trusted only when it is ours: private directory, entries of the right shape,
never inside a data directory, checked at every read and write (issue 12, section 3).

Entries are crafted by decoding a real entry, damaging one thing, and writing it back; the pages
and endpoints of the step must then answer exactly as they did before (a bad entry is a miss).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pwd
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from django.core.cache import caches

from rollouts.store import Catalog, FileIdentity
from rollouts.store.disk.cache import DiskCache
from rollouts.store.stats import step_stats
from rollouts.store.statsshape import validate_stats
from rollouts.web import runs
from tests.support.data import sample
from tests.support.pages import PREFIX

STEP = "/api/jsonl/train/file/0.jsonl"
# Every page and endpoint that reads a step's columns or statistics.
READERS = (
    f"{STEP}/stats",
    f"{STEP}/samples?sort=reward&order=desc",
    f"{STEP}/samples?sort=status",
    f"{STEP}/samples?dataset=gsm8k",
    f"{STEP}/columns",
    f"{STEP}/group/1",
    "/api/view/train/0?sort=reward&order=desc",
    "/train/0/",
    "/train/0/?sort=dataset&order=desc",
    "/train/0/sample/3/?status=truncated",
    "/train/0/stats/",
    "/train/0/group/1/",
)


def records() -> list[dict[str, Any]]:
    return [
        sample(
            i,
            reward=[0.0, 1.0, 0.5, 0.25][i % 4],
            status="truncated" if i % 3 == 0 else "completed",
            dataset="gsm8k" if i % 2 else "math",
            label=f"answer {i}",
        )
        for i in range(8)
    ]


@pytest.fixture
def cache_dir(settings, data_dir: Path, tmp_path: Path) -> Iterator[Path]:
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    directory = tmp_path / "cache"
    settings.ROLLOUTS_DISK_CACHE = str(directory)
    restart()
    yield directory
    restart()


def restart() -> None:
    """What a new server process starts with: no catalogs, no indexes in memory."""
    caches["rollouts"].clear()
    runs._catalogs.clear()
    runs._histories.clear()


def read_all(client) -> dict[str, tuple[int, bytes]]:
    answers = {}
    for path in READERS:
        response = client.get(PREFIX + path)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        answers[path] = (response.status_code, body)
    return answers


def the_entry(directory: Path) -> Path:
    entries = list(directory.glob("*.msgpack"))
    assert len(entries) == 1, entries
    return entries[0]


def rewrite(entry: Path, damage: Callable[[dict[str, Any]], None]) -> None:
    raw = msgspec.msgpack.decode(entry.read_bytes())
    damage(raw)
    entry.write_bytes(msgspec.msgpack.encode(raw))


def codes(values: list[int]) -> bytes:
    from array import array

    return array("i", values).tobytes()


def qs(values: list[int]) -> bytes:
    from array import array

    return array("q", values).tobytes()


def set_path(raw: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        raw = raw[key]
    if value is DELETE:
        del raw[last]
    else:
        raw[last] = value


DELETE = object()

DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "numeric bytes not a multiple of 8": lambda e: e["numeric"].update(
        reward=e["numeric"]["reward"][:-3]
    ),
    "numeric column one row short": lambda e: e["numeric"].update(
        reward=e["numeric"]["reward"][:-8]
    ),
    "numeric column one row long": lambda e: e["numeric"].update(
        reward=e["numeric"]["reward"] + bytes(8)
    ),
    "categorical bytes not a multiple of 4": lambda e: e["categorical"].update(
        status=e["categorical"]["status"][:-1]
    ),
    "categorical column one row short": lambda e: e["categorical"].update(
        status=e["categorical"]["status"][:-4]
    ),
    "category code past the last category": lambda e: e["categorical"].update(
        status=codes([7] * e["rows"])
    ),
    "category code below -1": lambda e: e["categorical"].update(status=codes([-5] * e["rows"])),
    "categorical column without its categories": lambda e: e["categories"].pop("dataset"),
    "categories that repeat a value": lambda e: e["categories"].update(
        status=[*e["categories"]["status"], e["categories"]["status"][0]]
    ),
    "labels one short": lambda e: e.update(labels=e["labels"][:-1]),
    "invalid line past the last row": lambda e: e.update(invalid={e["rows"] + 5: "bad"}),
    "negative invalid line": lambda e: e.update(invalid={-1: "bad"}),
    "rows that disagree with the columns": lambda e: e.update(rows=e["rows"] + 1),
    "line starts out of order": lambda e: e["lines"].update(
        starts=e["lines"]["starts"][8:16] + e["lines"]["starts"][:8] + e["lines"]["starts"][16:]
    ),
    "a line that ends past the file": lambda e: e["lines"].update(
        ends=e["lines"]["ends"][:-8] + qs([10**9])
    ),
    "a line that ends before it starts": lambda e: e["lines"].update(
        ends=qs([0]) + e["lines"]["ends"][8:]
    ),
    "line numbers that go backwards": lambda e: e["lines"].update(
        lines=qs(list(range(e["rows"], 0, -1)))
    ),
    "a line table one record short": lambda e: e["lines"].update(starts=e["lines"]["starts"][:-8]),
    "a line table of other bytes (same size and time)": lambda e: e["lines"].update(
        head_fingerprint=b"x" * len(e["lines"]["head_fingerprint"])
    ),
    "a committed length past the file": lambda e: e["lines"].update(committed=10**9),
    "statistics without reward": lambda e: set_path(e, "stats.reward", DELETE),
    "statistics without histograms": lambda e: set_path(e, "stats.histograms", DELETE),
    "a histogram without its counts": lambda e: set_path(
        e, "stats.histograms.reward.counts", DELETE
    ),
    "a histogram of an unknown kind": lambda e: set_path(e, "stats.histograms.reward.kind", "pie"),
    "a histogram with more values than counts": lambda e: set_path(
        e, "stats.histograms.reward.values", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    ),
    "a reward mean that is text": lambda e: set_path(e, "stats.reward.mean", "high"),
    "a reward mean that is infinite": lambda e: set_path(e, "stats.reward.mean", float("inf")),
    "status counts that are not numbers": lambda e: set_path(e, "stats.status", {"x": "many"}),
    "groups that are a list": lambda e: set_path(e, "stats.groups", [1, 2]),
    "a sample count that disagrees with the rows": lambda e: set_path(e, "stats.samples", 999),
    "statistics with a key step_stats never writes": lambda e: set_path(
        e, "stats.subdir", "planted"
    ),
    "statistics that are a list": lambda e: e.update(stats=[1, 2, 3]),
}


@pytest.fixture(scope="module")
def undamaged() -> dict[str, tuple[int, bytes]]:
    """Every reader's answer on `records()` with a sound entry, read by the first damage test
    of a process and kept for the other 31: the bytes do not depend on where the
    step lies (no answer holds a path: test_no_paths.py)."""
    return {}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_entry_is_a_miss_on_every_page(client, write_step, cache_dir, damage, undamaged):
    path = write_step("train", 0, records())
    if not undamaged:
        undamaged.update(read_all(client))
        assert {status for status, _ in undamaged.values()} == {200}
    else:  # any reader writes the whole entry
        assert client.get(PREFIX + f"{STEP}/stats").status_code == 200
    entry = the_entry(cache_dir)
    rewrite(entry, DAMAGE[damage])
    restart()
    assert read_all(client) == undamaged
    # Recomputed and written again: the next start has an entry to read.
    assert DiskCache(cache_dir).load(path.resolve(), FileIdentity.of(path.stat())) is not None


STATS_DAMAGE = list(DAMAGE)[list(DAMAGE).index("statistics without reward") :]


@pytest.mark.parametrize("damage", [*STATS_DAMAGE, "invalid line past the last row"])
def test_a_damaged_entry_is_a_miss_for_the_trends_too(
    client, write_step, cache_dir, data_dir, damage
):
    """The trends read only the statistics of steps other than the newest (`load_stats`)."""
    first = write_step("train", 0, records())
    write_step("train", 1, records()[:5])

    def trends() -> dict[str, Any]:
        catalog = runs.catalog_of(data_dir)
        runs.history_of(catalog, "train").wait(timeout=30)
        response = client.get(PREFIX + "/api/jsonl/train/trends")
        assert response.status_code == 200
        return response.json()

    truth = trends()
    assert truth["done"] and len(truth["points"]) == 2
    name = hashlib.sha1(str(first.resolve()).encode(), usedforsecurity=False).hexdigest()
    entry = cache_dir / f"{name}.msgpack"  # named by the step's resolved path
    rewrite(entry, DAMAGE[damage])
    restart()
    assert trends() == truth


def test_every_statistics_step_stats_writes_are_what_the_disk_cache_accepts():
    """Change step_stats, change diskentry's shape of it: this names the mismatch."""
    from rollouts.store.columns import Columns
    from rollouts.store.jsonio import decode_line
    from tests.support.data import relax_line

    columns = Columns()
    for record in [*records(), sample(9, reward={"acc": 1.0, "fmt": 0.5})]:
        columns.append(decode_line(relax_line(record).encode()))
    columns.append(None)
    columns.pad()
    for invalid in ({}, {9: "bad"}):
        stats = step_stats(columns, invalid)
        assert validate_stats(stats, columns.rows, len(invalid)) is None
    empty = Columns()
    assert validate_stats(step_stats(empty, {}), 0, 0) is None


# -- trust: whose directory is it -------------------------------------------------------------
def planted_stats_entry(client, write_step, cache_dir: Path) -> Path:
    """A well-formed entry whose statistics say the mean reward is 42 (the truth is 0.4375)."""
    write_step("train", 0, records())
    status = client.get(PREFIX + f"{STEP}/stats").status_code
    assert status == 200
    entry = the_entry(cache_dir)
    rewrite(entry, lambda e: set_path(e, "stats.reward.mean", 42.0))
    restart()
    return entry


def reward_mean(client) -> float:
    response = client.get(PREFIX + f"{STEP}/stats")
    assert response.status_code == 200
    return response.json()["reward"]["mean"]


def test_a_planted_entry_in_a_private_directory_is_served(client, write_step, cache_dir):
    """The control for the tests below: the planted entry is read when the directory is ours."""
    planted_stats_entry(client, write_step, cache_dir)
    assert reward_mean(client) == 42.0


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o703, 0o1777])
def test_a_cache_directory_others_can_write_is_not_used(
    client, write_step, cache_dir, caplog, mode
):
    entry = planted_stats_entry(client, write_step, cache_dir)
    cache_dir.chmod(mode)
    with caplog.at_level(logging.WARNING, logger="rollouts.store"):
        assert reward_mean(client) == 0.4375
        reward_mean(client)
        restart()
        assert reward_mean(client) == 0.4375
    why = [r.getMessage() for r in caplog.records if "disk cache" in r.getMessage()]
    assert len(why) == 1, why  # once, naming why
    assert "writable by" in why[0] and str(cache_dir) in why[0]
    assert list(cache_dir.iterdir()) == [entry]  # and nothing written there either


def test_a_cache_directory_owned_by_someone_else_is_not_used(client, write_step, cache_dir, caplog):
    if os.geteuid() != 0:
        pytest.skip("giving a directory away needs root")
    planted_stats_entry(client, write_step, cache_dir)
    os.chown(cache_dir, pwd.getpwnam("nobody").pw_uid, -1)
    with caplog.at_level(logging.WARNING, logger="rollouts.store"):
        assert reward_mean(client) == 0.4375
    assert any("owned by" in r.getMessage() for r in caplog.records)


def test_an_entry_others_can_write_is_not_used(client, write_step, cache_dir):
    entry = planted_stats_entry(client, write_step, cache_dir)
    entry.chmod(0o666)
    assert reward_mean(client) == 0.4375


def test_a_cache_under_a_directory_others_can_write_is_not_used(
    client, write_step, settings, tmp_path, caplog
):
    shared = tmp_path / "shared"
    shared.mkdir()
    cache_dir = shared / "cache"
    settings.ROLLOUTS_DATA_DIR = str(tmp_path / "data")
    settings.ROLLOUTS_DISK_CACHE = str(cache_dir)
    restart()
    planted_stats_entry(client, write_step, cache_dir)
    shared.chmod(0o777)  # anyone may rename our directory away and put theirs in its place
    with caplog.at_level(logging.WARNING, logger="rollouts.store"):
        assert reward_mean(client) == 0.4375
    assert any(str(shared) in r.getMessage() for r in caplog.records)
    shared.chmod(0o1777)  # sticky, like /tmp: only we may rename what is ours
    restart()
    assert reward_mean(client) == 42.0


def test_a_missing_cache_directory_is_created_private(client, write_step, settings, tmp_path):
    cache_dir = tmp_path / "new" / "deeper" / "cache"
    settings.ROLLOUTS_DATA_DIR = str(tmp_path / "data")
    settings.ROLLOUTS_DISK_CACHE = str(cache_dir)
    restart()
    write_step("train", 0, records())
    old = os.umask(0o002)
    try:
        assert client.get(PREFIX + f"{STEP}/stats").status_code == 200
    finally:
        os.umask(old)
    for directory in (cache_dir, cache_dir.parent, cache_dir.parent.parent):
        assert directory.stat().st_mode & 0o777 == 0o700, directory
    assert the_entry(cache_dir).stat().st_mode & 0o777 == 0o600


# -- never inside a data directory, checked at every write -----------------------------------
def files_in(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file()}  # fmt: skip


def grow(path: Path) -> None:
    """A live run appends a sample: the step's entry is stale and written again."""
    with path.open("a") as f:
        f.write(msgspec.json.encode(sample(99)).decode() + "\n")


@pytest.mark.parametrize("swapped", ["the directory", "its parent"])
def test_a_cache_directory_swapped_for_a_link_into_the_data_dir_is_never_written(
    write_step, tmp_path, swapped
):
    path = write_step("train", 0, records())
    data = tmp_path / "data"
    parent = tmp_path / "home"
    cache_dir = parent / "cache"
    catalog = Catalog(data, disk=DiskCache(cache_dir))
    catalog.stats(catalog.open_step("train", "0.jsonl"))
    assert the_entry(cache_dir)
    (data / "cache").mkdir()
    if swapped == "the directory":
        cache_dir.rename(tmp_path / "moved-away")
        cache_dir.symlink_to(data / "cache")
    else:
        parent.rename(tmp_path / "moved-away")
        parent.symlink_to(data)
    grow(path)
    before = files_in(data)
    index = catalog.open_step("train", "0.jsonl")
    assert catalog.stats(index)["samples"] == 9
    restarted = Catalog(data, disk=DiskCache(cache_dir))
    restarted.stats(restarted.open_step("train", "0.jsonl"))
    assert files_in(data) == before


def test_no_served_data_dir_is_written_by_another_run_s_catalog(write_step, tmp_path):
    """Two runs share the cache directory; it is swapped for a link into the second run."""
    path = write_step("train", 0, records())
    second = tmp_path / "second"
    (second / "train").mkdir(parents=True)
    cache_dir = tmp_path / "cache"
    first = Catalog(tmp_path / "data", disk=DiskCache(cache_dir))
    Catalog(second, disk=DiskCache(cache_dir))
    cache_dir.symlink_to(second / "train")
    before = files_in(second)
    first.stats(first.open_step("train", "0.jsonl"))
    grow(path)
    first.stats(first.open_step("train", "0.jsonl"))
    assert files_in(second) == before


def test_history_pool_processes_check_the_cache_directory_too(write_step, tmp_path):
    from rollouts.store.history import decode_step

    path = write_step("train", 0, records())
    data = tmp_path / "data"
    link = tmp_path / "cache"
    link.symlink_to(data / "train")
    before = files_in(data)
    _, stats = decode_step(str(path), "train/0.jsonl", str(link), (str(data),))
    assert stats["samples"] == 8
    assert files_in(data) == before


def test_a_lone_surrogate_is_kept_on_disk_as_the_pages_show_it(client, write_step, cache_dir):
    # Python's json.dumps writes text decoded with surrogateescape as a lone surrogate escape;
    # msgpack cannot hold one, but decoding replaced it already (U+FFFD), so the step is kept.
    line = json.dumps(sample(0, status="caf\udcc3", label="caf\udcc3")) + "\n"
    write_step("train", 0, [line, sample(1)])
    response = client.get(PREFIX + f"{STEP}/samples?sort=reward")
    assert response.status_code == 200
    assert len(list(cache_dir.glob("*.msgpack"))) == 1
    caches["rollouts"].clear()  # a restart: the statistics come from the entry
    stats = json.loads(client.get(PREFIX + f"{STEP}/stats").content)
    assert stats["status"]["caf\ufffd"] == 1


def test_a_value_msgpack_cannot_hold_is_not_saved_and_not_an_error(write_step, cache_dir):
    index = Catalog(write_step("train", 0, [sample(0)]).parent.parent).open_step("train", "0.jsonl")
    columns = index.ensure_columns()
    DiskCache(cache_dir).save(index, columns, {"status": {"caf\udcc3": 1}})
    assert not list(cache_dir.glob("*"))  # nothing kept, nothing half-written


# -- what the documentation says -------------------------------------------------------------
def test_the_help_names_the_real_default_directory(monkeypatch):
    """`--disk-cache`'s help (and so docs/reference/cli.md, generated from it) names the
    directory the viewer really uses."""
    import re

    from rollouts.management.commands.visualize import Command
    from rollouts.store.disk.cache import default_directory

    parser = Command().create_parser("manage.py", "visualize")
    flag = next(a for a in parser._actions if "--disk-cache" in a.option_strings)
    found = re.search(r"default: (.*)\)$", " ".join(str(flag.help).split()))
    assert found is not None, flag.help
    in_help = found.group(1)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert Path(in_help.split()[0]).expanduser() == default_directory()
    monkeypatch.setenv("XDG_CACHE_HOME", "/elsewhere")
    assert default_directory() == Path("/elsewhere", *Path(in_help.split()[0]).parts[2:])


# -- memory kept after a big column pass (issue 12, 7.4) -------------------------------------
def test_a_big_column_pass_gives_freed_memory_back_and_a_small_one_does_not(
    write_step, tmp_path, monkeypatch
):
    from rollouts.store import memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: trims.append)
    path = write_step("train", 0, records())
    size = path.stat().st_size
    catalog = Catalog(tmp_path / "data")
    catalog.columns(catalog.open_step("train", "0.jsonl"))
    assert trims == []  # below RELEASE_AFTER_BYTES: not worth a trim
    monkeypatch.setattr(memory, "RELEASE_AFTER_BYTES", size - 100)
    write_step("eval", 0, records())
    index = catalog.open_step("eval", "0.jsonl")
    trims.clear()  # opening scanned it (the test below): this one is about the column pass
    catalog.columns(index)
    assert trims == [0]
    grow(tmp_path / "data" / "eval" / "0.jsonl")  # the new line alone is a small pass
    catalog.columns(catalog.open_step("eval", "0.jsonl"))
    assert trims == [0]


def test_without_malloc_trim_nothing_is_released(monkeypatch):
    from rollouts.store import memory

    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    assert memory.release_freed_memory(10**12) is False


# -- a sorted page after a restart reads the disk, never decodes (issue 12, 7.1) -------------
@pytest.mark.parametrize("first", [None, f"{STEP}/sample/0", "/train/0/"])
def test_a_sorted_page_after_a_restart_reads_the_columns_from_disk(
    client, write_step, cache_dir, monkeypatch, first
):
    import threading

    from rollouts.store import StepIndex
    from rollouts.views import samples

    # Big enough that the HTML page opens at once and decodes in the background, as 1 GB does.
    monkeypatch.setattr(samples, "INLINE_COLUMNS_BYTES", 0)
    write_step("train", 0, records())
    sorted_page = f"{STEP}/samples?sort=reward&order=desc"
    truth = client.get(PREFIX + sorted_page)
    assert truth.status_code == 200
    truth_body = b"".join(truth.streaming_content)
    restart()
    decoded: list[int] = []
    original = StepIndex._extend_columns

    def counting(self, f):
        decoded.append(len(self))
        return original(self, f)

    monkeypatch.setattr(StepIndex, "_extend_columns", counting)
    if first is not None:  # which starts the background column pass the sorted page meets
        assert client.get(PREFIX + first).status_code == 200
    response = client.get(PREFIX + sorted_page)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == truth_body
    for thread in threading.enumerate():
        if thread.name.startswith("columns "):
            thread.join(timeout=30)
    assert decoded == []


def test_opening_a_big_step_gives_the_scan_s_freed_memory_back(write_step, tmp_path, monkeypatch):
    from rollouts.store import memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: trims.append)
    path = write_step("train", 0, records())
    catalog = Catalog(tmp_path / "data")
    catalog.open_step("train", "0.jsonl")
    assert trims == []
    monkeypatch.setattr(memory, "RELEASE_AFTER_BYTES", path.stat().st_size)
    write_step("train", 1, records())
    catalog.open_step("train", "1.jsonl")
    assert trims == [0]
    catalog.open_step("train", "1.jsonl")  # already open: nothing scanned
    assert trims == [0]


# -- the line table: a restart opens a step without scanning it -------------------------------
TABLE = ("starts", "ends", "lines", "committed", "committed_lines", "tentative_tail",
         "partial_tail_bytes", "fingerprint", "identity")  # fmt: skip


def table_of(index) -> tuple:
    return tuple(
        bytes(v) if hasattr(v, "tobytes") else v for v in (getattr(index, n) for n in TABLE)
    )


@pytest.mark.parametrize(
    "ending",
    ["newline", "no final newline", "a half-written last line", "blank lines and CRLF"],
)
def test_a_restart_opens_a_step_from_its_line_table_as_a_scan_would(
    write_step, tmp_path, monkeypatch, ending
):
    from rollouts.store import StepIndex

    lines: list[Any] = [*records()[:3], "not json\n", *records()[3:6]]
    if ending == "no final newline":
        lines.append(msgspec.json.encode(sample(50)).decode())
    elif ending == "a half-written last line":
        lines.append('{"sample_index": 51, "rew')
    elif ending == "blank lines and CRLF":
        lines = ["\n", *lines[:2], "  \n\n", msgspec.json.encode(sample(52)).decode() + "\r\n"]
    path = write_step("train", 0, lines)
    disk = DiskCache(tmp_path / "cache")
    first = Catalog(tmp_path / "data", disk=disk)
    scanned = first.open_step("train", "0.jsonl")
    stats = first.stats(scanned)
    monkeypatch.setattr(StepIndex, "_scan", lambda *a: pytest.fail("scanned again"))
    monkeypatch.setattr(StepIndex, "_extend_columns", lambda *a: pytest.fail("decoded again"))
    restarted = Catalog(tmp_path / "data", disk=disk)
    index = restarted.open_step("train", "0.jsonl")
    assert table_of(index) == table_of(scanned)
    assert index.columns_ready and index.invalid == scanned.invalid
    assert restarted.stats(index) == stats
    assert [index.read(p).data for p in range(len(index)) if p not in index.invalid] == [
        scanned.read(p).data for p in range(len(scanned)) if p not in scanned.invalid
    ]
    monkeypatch.undo()
    # A live run appends: the restored index grows like a scanned one.
    with path.open("a") as f:
        f.write("\n" + msgspec.json.encode(sample(60)).decode() + "\n")
    grown = restarted.open_step("train", "0.jsonl")
    fresh = StepIndex.build(path, "train/0.jsonl")
    assert table_of(grown) == table_of(fresh)
    assert (
        restarted.stats(grown)["samples"]
        == step_stats(fresh.ensure_columns(), fresh.invalid)["samples"]
    )


def test_a_page_of_big_samples_gives_its_buffers_back_and_a_small_page_does_not(
    client, write_step, cache_dir, monkeypatch
):
    from rollouts.store import memory

    trims: list[int] = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: trims.append)
    from rollouts.views import api

    def page(size: int) -> list[int]:
        response = client.get(PREFIX + f"{STEP}/samples?page_size={size}")
        assert response.status_code == 200
        return json.loads(b"".join(response.streaming_content))["positions"]

    path = write_step("train", 0, records())
    assert page(8) == list(range(8))
    assert trims == []  # 8 small samples: not worth a trim
    monkeypatch.setattr(api, "PAGE_RELEASE_BYTES", path.stat().st_size // 2)
    assert page(8) == list(range(8))
    assert trims == [0]
    assert page(2) == [0, 1]
    assert trims == [0]
