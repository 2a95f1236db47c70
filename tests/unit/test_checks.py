"""The app's system checks warn at start-up about what would otherwise fail per request."""

from __future__ import annotations

import pytest

from rollouts.checks import check_settings
from rollouts.conf import DEFAULT_POLL_MS, conf, default_index_processes


def ids(settings) -> list[str]:
    return [str(w.id) for w in check_settings()]


def test_configured_app_passes(settings, data_dir):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    assert ids(settings) == []


def test_missing_data_dir_setting_warns(settings):
    settings.ROLLOUTS_DATA_DIR = None
    assert ids(settings) == ["rollouts.W001"]


def test_data_dir_that_is_not_a_directory_warns_with_its_own_id(settings, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(tmp_path / "nope")
    assert ids(settings) == ["rollouts.W004"]


def test_cache_that_is_not_byte_limited_warns(settings, data_dir):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.CACHES = {
        **settings.CACHES,
        "rollouts": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }
    assert ids(settings) == ["rollouts.W002"]


def test_several_runs_need_no_single_data_dir_but_each_must_exist(settings, data_dir, tmp_path):
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {"a": str(data_dir)}
    assert ids(settings) == []
    settings.ROLLOUTS_DATA_DIRS = {"a": str(data_dir), "b": str(tmp_path / "gone")}
    warnings = check_settings()
    assert [w.id for w in warnings] == ["rollouts.W004"]
    assert "ROLLOUTS_DATA_DIRS['b']" in warnings[0].msg


def test_a_disk_cache_inside_a_data_dir_warns(settings, data_dir, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_DISK_CACHE = str(data_dir / "cache")
    assert ids(settings) == ["rollouts.W003"]
    settings.ROLLOUTS_DISK_CACHE = str(tmp_path / "elsewhere")
    assert ids(settings) == []
    settings.ROLLOUTS_DISK_CACHE = ""  # off
    assert ids(settings) == []


def test_a_disk_cache_others_can_write_warns(settings, data_dir, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    shared = tmp_path / "shared"
    shared.mkdir()
    settings.ROLLOUTS_DISK_CACHE = str(shared)
    assert ids(settings) == []
    shared.chmod(0o777)
    warnings = check_settings()
    assert [w.id for w in warnings] == ["rollouts.W006"]
    assert "writable by group or others" in warnings[0].msg
    settings.ROLLOUTS_DISK_CACHE = str(shared / "not-yet")  # made private on first write
    assert [w.id for w in check_settings()] == ["rollouts.W006"]  # but its parent is open


@pytest.mark.parametrize("raw", ["fast", "0", "-2", "1.5", 0, True, [3]])
def test_an_integer_setting_that_is_not_a_positive_integer_warns_and_keeps_its_default(
    settings, data_dir, raw
):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_POLL_MS = raw
    settings.ROLLOUTS_INDEX_PROCESSES = raw
    warnings = check_settings()
    assert [w.id for w in warnings] == ["rollouts.W005", "rollouts.W005"]
    assert "ROLLOUTS_POLL_MS" in warnings[0].msg and "ROLLOUTS_INDEX_PROCESSES" in warnings[1].msg
    defaults = (DEFAULT_POLL_MS, default_index_processes())
    assert defaults == (conf.POLL_MS, conf.INDEX_PROCESSES)


def test_a_poll_interval_below_its_least_warns_and_keeps_its_default(settings, data_dir):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_POLL_MS = 1  # a page would ask a thousand times a second
    warnings = check_settings()
    assert [w.id for w in warnings] == ["rollouts.W005"]
    assert "ROLLOUTS_POLL_MS must be an integer of at least 100, got 1" in warnings[0].msg
    assert conf.POLL_MS == DEFAULT_POLL_MS
    settings.ROLLOUTS_POLL_MS = 100
    assert ids(settings) == [] and conf.POLL_MS == 100


def test_integer_settings_are_read_when_used(settings, data_dir):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_POLL_MS = "250"  # from the environment: digits
    settings.ROLLOUTS_INDEX_PROCESSES = 1
    assert ids(settings) == []
    assert (conf.POLL_MS, conf.INDEX_PROCESSES) == (250, 1)
