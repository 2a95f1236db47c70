"""No response ever holds the server's absolute path (issue 12, section 2): every URL pattern,
HTML and JSON, ordinary and error cases, on a fixture tree with bad lines, hostile values and
missing steps, in single-run and several-runs mode. A URL pattern the walk does not exercise
fails the test (see tests/support/walk.py). The unreadable step is walked by the server that
may not read it: tests/e2e/test_unreadable.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import caches

from tests.support.pages import PREFIX
from tests.support.walk import (
    leaks,
    paths,
    pattern_names,
    server_errors,
    top_paths,
    uncovered,
    walk,
    write_tree,
)


@pytest.fixture
def tree(tmp_path) -> tuple[Path, Path]:
    """(the real data dir, a symlink to it): the app is given the link, so both the path it
    was given and the resolved one are secrets."""
    real = tmp_path / "real" / "rollout_result"
    write_tree(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    caches["rollouts"].clear()
    return real, link


def client_get(client):
    def get(method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        response = client.generic(method, PREFIX + path)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        return response.status_code, dict(response.items()), body

    return get


def secrets(tmp_path: Path, tree: tuple[Path, Path]) -> list[str]:
    real, link = tree
    return [str(real), str(real.resolve()), str(link), str(tmp_path), str(tmp_path.resolve())]


def test_every_pattern_is_walked_in_both_modes():
    assert uncovered(run="a") == set()
    assert uncovered(run=None) == {name for name in pattern_names() if name.startswith("run:")}


def test_a_pattern_the_walk_does_not_know_is_caught():
    from django.http import HttpResponse
    from django.urls import path

    from rollouts import urls

    extra = path("api/new-thing", lambda request: HttpResponse(), name="api-new-thing")
    assert "api-new-thing" in pattern_names([*urls.urlpatterns, extra])


def test_no_response_holds_the_data_dirs_path(client, settings, tmp_path, tree):
    settings.ROLLOUTS_DATA_DIR = str(tree[1])
    answers = walk(client_get(client), [*paths([1, 2]), *top_paths()])
    assert len(answers) > 150
    assert leaks(answers, secrets(tmp_path, tree)) == []
    assert server_errors(answers) == []
    # The walk reached real pages, not only errors.
    assert answers[("GET", "/train/2/sample/2/")][0] == 200
    assert answers[("GET", "/train/2/sample/1/")][0] == 422
    assert answers[("GET", "/api/jsonl/train/file/..%2Fx.jsonl/stats")][0] == 404


def test_no_response_holds_a_runs_path(client, settings, tmp_path, tree):
    other = tmp_path / "other"
    write_tree(other)
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {"a": str(tree[1]), "b": str(other)}
    answers = walk(client_get(client), [*paths([1, 2], "/runs/a"), *top_paths(), *paths([1])])
    assert leaks(answers, [*secrets(tmp_path, tree), str(other)]) == []
    assert server_errors(answers) == []
    assert answers[("GET", "/runs/a/train/2/sample/2/")][0] == 200


def test_the_leak_check_finds_a_path_in_a_body_a_header_or_json_escaped():
    answers = {
        ("GET", "/a"): (200, {}, b'{"error": "[Errno 13] Permission denied: \'/srv/d/8.jsonl\'"}'),
        ("GET", "/b"): (302, {"Location": "/srv/d/x"}, b""),
        ("GET", "/c"): (200, {}, json_text("/srv/d\u00e9/x")),
        ("GET", "/d"): (200, {}, b"nothing here"),
    }
    assert leaks(answers, ["/srv/d", "/srv/d\u00e9"]) == ["GET /a", "GET /b", "GET /c"]


def json_text(value: str) -> bytes:
    import json

    return json.dumps({"x": value}).encode()
