"""relax_site's base-path handling: the same URLs with or without the proxy's prefix."""

from __future__ import annotations

from django.http import HttpResponse
from django.test import RequestFactory

from relax_site.middleware import BasePathMiddleware
from rollouts.conf import normalize_base_path


def seen_path_info(settings, prefix: str | None, path: str) -> tuple[str, str]:
    settings.FORCE_SCRIPT_NAME = prefix
    seen = {}

    def view(request):
        seen["path_info"], seen["path"] = request.path_info, request.path
        return HttpResponse()

    BasePathMiddleware(view)(RequestFactory().get(path))
    return seen["path_info"], seen["path"]


def test_unstripped_prefix_is_removed_before_routing(settings):
    assert seen_path_info(settings, "/absproxy/8080", "/absproxy/8080/api/jsonl/subdirs") == (
        "/api/jsonl/subdirs",
        "/absproxy/8080/api/jsonl/subdirs",
    )


def test_bare_prefix_maps_to_the_root(settings):
    assert seen_path_info(settings, "/absproxy/8080", "/absproxy/8080")[0] == "/"


def test_stripped_paths_and_lookalike_prefixes_are_left_alone(settings):
    assert (
        seen_path_info(settings, "/absproxy/8080", "/api/jsonl/subdirs")[0] == "/api/jsonl/subdirs"
    )
    assert seen_path_info(settings, "/absproxy/8080", "/absproxy/80800/x")[0] == "/absproxy/80800/x"


def test_no_prefix_changes_nothing(settings):
    assert seen_path_info(settings, None, "/absproxy/8080/x")[0] == "/absproxy/8080/x"


def test_base_path_is_normalised():
    assert normalize_base_path("/absproxy/8080/") == "/absproxy/8080"
    assert normalize_base_path("absproxy/8080") == "/absproxy/8080"
    assert normalize_base_path("/") == ""
    assert normalize_base_path("") == ""
