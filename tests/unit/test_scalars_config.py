"""Where a run's TensorBoard event files are looked for (issue 17), and how that is configured:
the discovery and its containment rules, the settings and RELAX_TENSORBOARD, the system checks
and the training spec's `tensorboard` field. Nothing here imports tensorboard (slow to import):
reading event files is tested in tests/e2e/test_scalars_*.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from relax_site.environment import read_environment
from rollouts.checks import check_settings
from rollouts.install import install_hint
from rollouts.store.scalars import event_files, find_tensorboard, support
from rollouts.training.spec import SpecError
from rollouts.training.specfile import parse_spec
from rollouts.web.scalars import configured_dir, kind_of

EVENTS = "events.out.tfevents.1.host"


def make_save(tmp_path: Path) -> Path:
    save = tmp_path / "save"
    (save / "rollout_result" / "train").mkdir(parents=True)
    (save / "tensorboard_log").mkdir()
    (save / "tensorboard_log" / EVENTS).write_bytes(b"")
    return save


def test_found_inside_the_save_dir_and_beside_its_rollout_result(tmp_path):
    save = make_save(tmp_path)
    inside = find_tensorboard(save.resolve())
    beside = find_tensorboard((save / "rollout_result").resolve())
    assert inside is not None and inside.root == (save / "tensorboard_log").resolve()
    assert (inside.shown, inside.origin) == ("tensorboard_log", "inside the data directory")
    assert beside is not None and beside.root == inside.root
    assert (beside.shown, beside.origin) == ("save/tensorboard_log", "beside rollout_result")
    # One level up only from a directory named rollout_result: not from one of its buckets.
    assert find_tensorboard((save / "rollout_result" / "train").resolve()) is None


def test_a_tensorboard_log_linking_out_of_the_save_dir_is_not_followed(tmp_path):
    save = make_save(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (save / "tensorboard_log" / EVENTS).unlink()
    (save / "tensorboard_log").rmdir()
    (save / "tensorboard_log").symlink_to(outside)
    assert find_tensorboard((save / "rollout_result").resolve()) is None
    assert find_tensorboard(save.resolve()) is None


def test_event_files_are_found_in_subdirectories_and_links_stay_inside(tmp_path):
    root = tmp_path / "tb"
    (root / "run-2" / "deeper").mkdir(parents=True)
    (root / EVENTS).write_bytes(b"")
    (root / "run-2" / "deeper" / EVENTS).write_bytes(b"")
    (root / "notes.txt").write_text("not an event file")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / EVENTS).write_bytes(b"")
    (root / "linked-dir").symlink_to(secret)  # a linked directory is not walked into
    (root / "events.out.tfevents.2.link").symlink_to(secret / EVENTS)  # leaves: ignored
    (root / "events.out.tfevents.3.link").symlink_to(root / EVENTS)  # stays inside: kept
    names = [name for name, _ in event_files(root.resolve())]
    assert names == [EVENTS, "events.out.tfevents.3.link", f"run-2/deeper/{EVENTS}"]


def test_a_named_directory_replaces_the_search(tmp_path):
    save = make_save(tmp_path)
    other = tmp_path / "board"
    other.mkdir()
    found = find_tensorboard(save.resolve(), other)
    assert found is not None and found.root == other.resolve() and found.shown == "board"
    assert find_tensorboard(save.resolve(), tmp_path / "missing") is None


def test_the_setting_per_run_and_off(settings):
    settings.ROLLOUTS_TENSORBOARD = None
    assert configured_dir(None) is None
    settings.ROLLOUTS_TENSORBOARD = "/some/board"
    assert configured_dir(None) == Path("/some/board")
    assert configured_dir("a-run") is None  # a plain path is ROLLOUTS_DATA_DIR's
    settings.ROLLOUTS_TENSORBOARD = {"a-run": "/boards/a", "b-run": "off"}
    assert (configured_dir("a-run"), configured_dir("b-run")) == (Path("/boards/a"), False)
    assert configured_dir("c-run") is None
    settings.ROLLOUTS_TENSORBOARD = "off"
    assert configured_dir(None) is False


def test_scalars_are_grouped_by_their_prefix():
    assert [kind_of(t) for t in ("train/kl_loss", "perf/x/y", "loss", "/odd")] == [
        "tb:train",
        "tb:perf",
        "tb:",
        "tb:",
    ]


def test_relax_tensorboard_variable():
    assert read_environment({}).tensorboard is None
    assert read_environment({"RELAX_TENSORBOARD": "off"}).tensorboard == ""
    assert read_environment({"RELAX_TENSORBOARD": "/x/tb"}).tensorboard == "/x/tb"


def ids() -> list[str]:
    return [str(w.id) for w in check_settings()]


def test_a_named_directory_that_is_missing_warns(settings, data_dir, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_TENSORBOARD = str(tmp_path / "missing")
    assert ids() == ["rollouts.W011"]
    settings.ROLLOUTS_TENSORBOARD = 42
    assert ids() == ["rollouts.W011"]


def test_event_files_without_the_package_warn_once(settings, tmp_path, monkeypatch):
    save = make_save(tmp_path)
    settings.ROLLOUTS_DATA_DIR = str(save / "rollout_result")
    settings.ROLLOUTS_TENSORBOARD = None
    assert ids() == []
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if the extra were not installed
    warnings = check_settings()
    assert [w.id for w in warnings] == ["rollouts.W010"]
    assert install_hint("tensorboard") in warnings[0].msg
    settings.ROLLOUTS_TENSORBOARD = "off"  # turned off: nothing to warn about
    assert ids() == []


def test_whether_tensorboard_is_installed_is_searched_for_once(monkeypatch):
    """Every trends answer and poll asks; the search of sys.path (dozens of stats) is made once,
    and an import blocked or made meanwhile is still seen."""
    monkeypatch.delitem(sys.modules, "tensorboard", raising=False)
    support._found.cache_clear()
    searched: list[str] = []
    real = importlib.util.find_spec

    def counted(name, *args):
        searched.append(name)
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", counted)
    first = support.tensorboard_available()
    assert [support.tensorboard_available() for _ in range(3)] == [first] * 3
    assert searched == ["tensorboard"]
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # blocked: never available
    assert support.tensorboard_available() is False
    support._found.cache_clear()


SPEC = {"job": {"command": ["python", "train.py"]}}


def test_the_spec_names_a_tensorboard_directory_inside_the_run(tmp_path):
    spec = parse_spec({"job": {**SPEC["job"], "tensorboard": "tb_logs"}}, tmp_path / "s.toml")
    assert spec.tensorboard == "tb_logs"
    assert parse_spec(SPEC, tmp_path / "s.toml").tensorboard is None
    for bad in ("../elsewhere", "/abs/tb", "", 3):
        with pytest.raises(SpecError, match="tensorboard must be"):
            parse_spec({"job": {**SPEC["job"], "tensorboard": bad}}, tmp_path / "s.toml")
