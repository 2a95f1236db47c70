"""A folder of runs listed while serving (rollouts/store/runfolder.py): which sub-folders are
runs, runs that appear and go between listings, `get` without a listing, and what a run's
`changed_ns` follows."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from rollouts.store import RunFolder
from rollouts.store.runfolder import GONE_KEPT


def nested_run(root: Path, name: str) -> Path:
    """A run as Relax saves it: <name>/rollout_result/train/0.jsonl; its data directory."""
    train = root / name / "rollout_result" / "train"
    train.mkdir(parents=True)
    (train / "0.jsonl").write_text("{}\n")
    return root / name / "rollout_result"


def flat_run(root: Path, name: str) -> Path:
    """A run with its buckets at the top: <name>/train/0.jsonl; its data directory."""
    train = root / name / "train"
    train.mkdir(parents=True)
    (train / "0.jsonl").write_text("{}\n")
    return root / name


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "runs"
    path.mkdir()
    return path


def names(folder: RunFolder) -> list[str]:
    return [run.name for run in folder.listing()]


def test_both_layouts_are_runs_with_their_data_directories(root):
    nested = nested_run(root, "nested")
    flat = flat_run(root, "flat")
    listed = {run.name: run.data_dir for run in RunFolder(root).listing()}
    assert listed == {"nested": nested.resolve(), "flat": flat.resolve()}


def test_folders_without_rollouts_and_plain_files_are_not_runs(root):
    nested_run(root, "real")
    (root / "notes").mkdir()
    (root / "notes" / "readme.txt").write_text("not a run")
    (root / "empty").mkdir()
    (root / "README.md").write_text("a file beside the runs")
    (root / "0.jsonl").write_text("{}\n")  # a step file at the top is no run of the folder
    assert names(RunFolder(root)) == ["real"]


def test_a_link_leading_out_of_the_folder_is_not_a_run(root, tmp_path):
    outside = flat_run(tmp_path, "outside")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    inside = nested_run(root, "inside")
    (root / "alias").symlink_to(root / "inside", target_is_directory=True)
    folder = RunFolder(root)
    assert names(folder) == ["alias", "inside"]  # a link within the folder is a run
    assert folder.get("escape") is None
    assert folder.get("alias") == inside.resolve()


def test_a_run_created_after_a_listing_is_in_the_next(root):
    nested_run(root, "first")
    folder = RunFolder(root)
    assert names(folder) == ["first"]
    flat_run(root, "second")
    assert names(folder) == ["first", "second"]


def test_a_folder_that_becomes_a_run_is_listed_then(root):
    (root / "later").mkdir()
    old = time.time() - 1000  # (a change then gives another mtime however coarse the clock)
    os.utime(root / "later", (old, old))
    folder = RunFolder(root)
    assert names(folder) == []  # kept as "no run" for this version of the folder
    (root / "later" / "train").mkdir()
    assert names(folder) == ["later"]


def test_a_removed_run_is_gone_and_comes_back_when_recreated(root):
    nested_run(root, "stays")
    nested_run(root, "leaves")
    folder = RunFolder(root)
    assert names(folder) == ["leaves", "stays"]
    assert folder.gone() == [] and not folder.was_listed("leaves")
    shutil.rmtree(root / "leaves")
    assert names(folder) == ["stays"]
    assert folder.gone() == ["leaves"]
    assert folder.was_listed("leaves") and not folder.was_listed("stays")
    assert folder.get("leaves") is None
    nested_run(root, "leaves")
    assert names(folder) == ["leaves", "stays"]
    assert folder.gone() == [] and not folder.was_listed("leaves")


def test_gone_says_the_most_recently_gone_first(root):
    for name in ("x", "y", "z"):
        flat_run(root, name)
    folder = RunFolder(root)
    folder.listing()
    shutil.rmtree(root / "x")
    folder.listing()
    shutil.rmtree(root / "y")
    folder.listing()
    assert folder.gone() == ["y", "x"]


def test_a_run_never_listed_is_not_gone(root):
    folder = RunFolder(root)
    nested_run(root, "brief")
    shutil.rmtree(root / "brief")  # came and went between two listings
    assert names(folder) == []
    assert folder.gone() == [] and not folder.was_listed("brief")


def test_get_finds_a_run_without_a_listing(root):
    data_dir = nested_run(root, "alpha")
    folder = RunFolder(root)
    assert folder.get("alpha") == data_dir.resolve()
    assert folder.get("beta") is None
    flat_run(root, "beta")  # created after the folder was made: found all the same
    assert folder.get("beta") == (root / "beta").resolve()


@pytest.mark.parametrize("name", ["..", ".", "a/b", "", "alpha\0", "/alpha", "../runs/alpha"])
def test_get_refuses_names_that_are_no_sub_folder(root, name):
    nested_run(root, "alpha")
    nested_run(root / "a", "b")  # a/b is a run, one level too deep
    assert RunFolder(root / "a").get("b") is not None  # (it is one, of its own folder)
    assert RunFolder(root).get(name) is None


def test_get_of_a_file_is_no_run(root):
    (root / "file").write_text("x")
    assert RunFolder(root).get("file") is None


def test_changed_ns_grows_when_a_step_is_added_to_a_bucket(root):
    data_dir = nested_run(root, "live")
    old = time.time() - 1000
    for path in (data_dir / "train" / "0.jsonl", data_dir / "train", data_dir, root / "live"):
        os.utime(path, (old, old))
    folder = RunFolder(root)
    (before,) = folder.listing()
    assert before.changed_ns == pytest.approx(old * 1e9, abs=1e6)
    (data_dir / "train" / "1.jsonl").write_text("{}\n")  # only train/'s mtime changes
    (after,) = folder.listing()
    assert after.changed_ns > before.changed_ns + 500 * 10**9


def test_a_second_listing_reads_no_unchanged_sub_folder_again(root, monkeypatch):
    from rollouts.store import runfolder

    for i in range(5):
        nested_run(root, f"run{i}")
    folder = RunFolder(root)
    seen: list[Path] = []
    real = runfolder.is_run

    def counted(path: Path) -> bool:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(runfolder, "is_run", counted)
    assert len(folder.listing()) == 5
    assert len(seen) == 5
    seen.clear()
    assert len(folder.listing()) == 5
    assert seen == []
    nested_run(root, "run9")
    assert len(folder.listing()) == 6
    assert [p.name for p in seen] == ["run9"]


def test_gone_keeps_at_most_gone_kept_names_the_most_recent_first(root):
    first = [f"a{i:03d}" for i in range(5)]
    then = [f"b{i:03d}" for i in range(GONE_KEPT)]
    for name in first + then:
        (root / name / "train").mkdir(parents=True)
    folder = RunFolder(root)
    assert len(folder.listing()) == len(first) + len(then)
    for name in first:
        shutil.rmtree(root / name)
    folder.listing()
    assert sorted(folder.gone()) == first
    for name in then:
        shutil.rmtree(root / name)
    folder.listing()
    gone = folder.gone()
    assert len(gone) == GONE_KEPT
    assert sorted(gone) == then  # the older ones made room
    assert not folder.was_listed(first[0]) and folder.was_listed(then[0])


def test_a_missing_folder_lists_nothing_and_says_all_its_runs_went(root):
    nested_run(root, "only")
    folder = RunFolder(root)
    assert names(folder) == ["only"]
    shutil.rmtree(root)
    assert names(folder) == []
    assert folder.gone() == ["only"]


def test_a_name_that_is_not_utf8_is_listed_as_pages_show_it_and_found_by_it(root):
    raw = os.fsencode(root) + b"/run-\xff"
    os.makedirs(raw + b"/train")
    folder = RunFolder(root)
    (run,) = folder.listing()
    assert run.name == "run-\ufffd"
    assert folder.get(run.name) == Path(os.fsdecode(raw)).resolve()
