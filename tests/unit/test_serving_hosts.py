"""`visualize` and `train` set the Host names the viewer answers to (rollouts/management/
serving.py). With the app's Host guard in MIDDLEWARE (the standalone site), the guard checks them
and Django's ALLOWED_HOSTS stays open for it; in a portal without the guard, Django's own check
gets the names instead. The guard is found by its class, whichever dotted path names it."""

from __future__ import annotations

import pytest

from rollouts.management.serving import apply_hosts, host_guard_installed

GUARD_PATHS = ["rollouts.web.HostCheckMiddleware", "rollouts.web.hosts.HostCheckMiddleware"]
OTHERS = ["django.middleware.common.CommonMiddleware"]


@pytest.mark.parametrize("path", GUARD_PATHS)
def test_the_guard_is_found_under_either_path(settings, path):
    settings.MIDDLEWARE = [*OTHERS, path]
    assert host_guard_installed()


def test_without_the_guard_django_checks_the_names(settings):
    settings.MIDDLEWARE = [*OTHERS, "no.such.module.Middleware"]  # not importable: skipped
    settings.ALLOWED_HOSTS = ["testserver"]
    assert not host_guard_installed()
    apply_hosts("127.0.0.1", ["viewer.example.com"])
    assert "viewer.example.com" in settings.ALLOWED_HOSTS and "*" not in settings.ALLOWED_HOSTS
    apply_hosts("0.0.0.0", [])  # any IP: Django's check cannot say that, so "*"
    assert settings.ALLOWED_HOSTS == ["*"]


def test_with_the_guard_allowed_hosts_is_left_to_it(settings):
    settings.MIDDLEWARE = [*OTHERS, GUARD_PATHS[0]]
    settings.ALLOWED_HOSTS = ["*"]
    apply_hosts("127.0.0.1", ["viewer.example.com"])
    assert settings.ALLOWED_HOSTS == ["*"]
    assert "viewer.example.com" in settings.RELAX_HOSTS
