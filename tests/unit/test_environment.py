"""The standalone project's RELAX_* variables (relax_site/environment.py) and the Host names it
answers to (rollouts/web/hosts.py): plain functions, so every case is one call."""

from __future__ import annotations

import os

import pytest

from relax_site.environment import LOOPBACK_NAMES, BadVariable, read_environment
from rollouts.web.hosts import refusal

NUMBERS = ["RELAX_CACHE_MEMORY_MB", "RELAX_CACHE_ENTRIES", "RELAX_POLL_MS",
           "RELAX_INDEX_PROCESSES", "RELAX_WORKERS", "RELAX_THREADS"]  # fmt: skip


def refused(env: dict[str, str]) -> str:
    with pytest.raises(BadVariable) as caught:
        read_environment(env)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_nothing_set_is_the_defaults():
    env = read_environment({})
    assert (env.data_dir, env.data_dirs, env.base_path) == (None, {}, "")
    assert env.allowed_hosts == LOOPBACK_NAMES
    assert (env.cache_memory_mb, env.cache_entries, env.workers, env.threads) == (4096, 20, 1, 8)
    assert (env.poll_ms, env.index_processes, env.mask_str, env.disk_cache) == (None,) * 4
    assert env.debug is False and env.bind is None


@pytest.mark.parametrize("name", NUMBERS)
@pytest.mark.parametrize("raw", ["-1", "abc", "0", "1.5", "٣", " 2 x"])
def test_a_number_that_is_not_a_positive_integer_is_one_line_naming_it(name, raw):
    message = refused({name: raw})
    assert message.startswith(f"{name}={raw.strip()!r} is not usable: {name} takes a whole number")
    assert f"at least {100 if name == 'RELAX_POLL_MS' else 1}" in message


def test_a_poll_interval_a_person_could_not_see_is_refused():
    from rollouts.conf import MIN_POLL_MS

    assert MIN_POLL_MS == 100  # the same least in both places
    assert "RELAX_POLL_MS takes a whole number of milliseconds, at least 100" in refused(
        {"RELAX_POLL_MS": "99"}
    )
    assert read_environment({"RELAX_POLL_MS": "100"}).poll_ms == 100


@pytest.mark.parametrize("name", NUMBERS)
def test_good_numbers_are_taken(name):
    env = read_environment({name: " 700 "})
    field = name.removeprefix("RELAX_").lower()
    assert getattr(env, field) == 700


def test_allowed_hosts_keep_the_loopback_names():
    env = read_environment({"RELAX_ALLOWED_HOSTS": "viewer.example.com, .example.org"})
    assert env.allowed_hosts == (*LOOPBACK_NAMES, "viewer.example.com", ".example.org")
    assert read_environment({"RELAX_ALLOWED_HOSTS": "localhost"}).allowed_hosts == LOOPBACK_NAMES


@pytest.mark.parametrize(
    "raw", ["https://viewer.example.com", "viewer.example.com:8080", "a b", "x/y", "exa$mple"]
)
def test_an_allowed_host_with_a_scheme_port_or_junk_is_refused(raw):
    assert "RELAX_ALLOWED_HOSTS takes comma-separated host names" in refused(
        {"RELAX_ALLOWED_HOSTS": raw}
    )


@pytest.mark.parametrize(
    ("name", "raw", "takes"),
    [
        ("RELAX_MASK_STR", "([", "a regular expression"),
        ("RELAX_DEBUG", "yes", "1 (on) or 0 (off)"),
        ("RELAX_BIND", "8080", "HOST:PORT"),
        ("RELAX_BASE_PATH", "/a b", "a URL path"),
        ("RELAX_BASE_PATH", "/x?y=1", "a URL path"),
        ("RELAX_DATA_DIRS", "a=/x:a=/y", "NAME=PATH or PATH"),
        ("RELAX_DATA_DIRS", "bad name=/x", "NAME=PATH or PATH"),
        ("RELAX_DATA_DIRS", "a=", "NAME=PATH or PATH"),
    ],
)
def test_other_bad_values_are_one_line_saying_what_the_variable_takes(name, raw, takes):
    message = refused({name: raw})
    assert message.startswith(f"{name}={raw!r} is not usable: {name} takes")
    assert takes in message


def test_data_dirs_are_named_runs_or_named_by_their_folder():
    raw = os.pathsep.join(["first=/srv/a", "/runs/beta/rollout_result", "/runs/gamma/"])
    assert read_environment({"RELAX_DATA_DIRS": raw}).data_dirs == {
        "first": "/srv/a",
        "beta": "/runs/beta/rollout_result",
        "gamma": "/runs/gamma/",
    }


def test_disk_cache_off_and_mask_and_debug():
    env = read_environment({"RELAX_DISK_CACHE": "off", "RELAX_MASK_STR": "", "RELAX_DEBUG": "1"})
    assert (env.disk_cache, env.mask_str, env.debug) == ("", "", True)


# -- hosts -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("host", "accept_ip", "ok"),
    [
        ("127.0.0.1:8080", False, True),
        ("localhost", False, True),
        ("[::1]:8080", False, True),
        ("viewer.example.com", False, True),
        ("VIEWER.example.com.", False, True),
        ("evil.example", False, False),
        ("10.0.0.5:8080", False, False),  # an address only counts with --host 0.0.0.0
        ("10.0.0.5:8080", True, True),
        ("[2001:db8::5]:80", True, True),
        ("evil.example:8080", True, False),  # DNS rebinding: a name, not an address
        ("10.0.0.5.evil.example", True, False),
        ("", True, False),
        ("bad host", True, False),
    ],
)
def test_which_hosts_are_answered(host, accept_ip, ok):
    names = [*LOOPBACK_NAMES, "viewer.example.com"]
    why = refusal(host, names, accept_ip)
    assert (why is None) == ok
    if not ok:
        assert why


def test_a_refusal_says_which_name_and_how_to_allow_it():
    why = refusal("evil.example:8080", list(LOOPBACK_NAMES), True)
    assert why is not None
    assert "'evil.example'" in why and "any IP address" in why
    assert "--allowed-host evil.example" in why and "RELAX_ALLOWED_HOSTS" in why
