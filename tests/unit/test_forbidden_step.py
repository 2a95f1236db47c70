"""A step file the server may not read is a 403 naming the step (issue 26, item 12: it was a 503,
but a file's permission is no outage: the viewer and the rest of the bucket answer). A data
directory missing or unreadable as a whole stays a 503 (tests/unit/test_unavailable.py).

Root reads a `chmod 000` file anyway, so the tests with a real permission skip as root, as in
test_unavailable.py; tests/e2e/test_unreadable.py runs the same against a server that really
is subject to permissions (as `nobody`, or root without CAP_DAC_OVERRIDE)."""

from __future__ import annotations

import errno
import json
import os
import pickle
from http import HTTPStatus

import pytest
from django.core.cache import caches

from rollouts.store.errors import ForbiddenFile, NotFound, UnreadableFile, unreadable
from rollouts.web.responses import status_of
from tests.support.data import sample
from tests.support.pages import PREFIX
from tests.support.wait import wait_for

MESSAGE = "train/2.jsonl cannot be read: permission denied"
as_root = pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")


def test_permission_denied_is_forbidden_and_other_io_errors_stay_unavailable():
    denied = unreadable("train/2.jsonl", PermissionError(errno.EACCES, "Permission denied", "/x"))
    assert isinstance(denied, ForbiddenFile) and str(denied) == MESSAGE
    assert status_of(denied) == HTTPStatus.FORBIDDEN
    # Through a process pool's pickling, it is still the same error.
    assert type(pickle.loads(pickle.dumps(denied))) is ForbiddenFile
    broken = unreadable("train/2.jsonl", OSError(errno.EIO, "Input/output error", "/x"))
    assert type(broken) is UnreadableFile
    assert status_of(broken) == HTTPStatus.SERVICE_UNAVAILABLE
    gone = unreadable("train/2.jsonl", FileNotFoundError(errno.ENOENT, "No such file", "/x"))
    assert isinstance(gone, NotFound) and status_of(gone) == HTTPStatus.NOT_FOUND


@pytest.fixture
def forbidden(settings, data_dir, write_step):
    """train/1.jsonl readable, train/2.jsonl chmod 000."""
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step("train", 1, [sample(0), sample(1)])
    step = write_step("train", 2, [sample(0), sample(1)])
    step.chmod(0)
    yield data_dir
    step.chmod(0o644)


@as_root
@pytest.mark.parametrize(
    "path",
    [
        "/api/jsonl/train/file/2.jsonl/sample/0",
        "/api/jsonl/train/file/2.jsonl/columns",
        "/api/jsonl/train/file/2.jsonl/stats",
        "/api/view/train/2",
        "/api/view/train/2/sample/0",
    ],
)
def test_every_endpoint_of_the_step_is_a_json_403_naming_it(client, forbidden, path):
    response = client.get(PREFIX + path)
    assert response.status_code == 403 and response["Content-Type"] == "application/json"
    error = json.loads(response.content)
    assert (error["status"], error["error"], error["message"]) == (403, "Forbidden", MESSAGE)
    assert str(forbidden) not in response.content.decode()


@as_root
@pytest.mark.parametrize("path", ["/train/2/", "/train/2/sample/0/", "/train/2/stats/"])
def test_every_page_of_the_step_is_the_viewers_error_page_with_a_403(client, forbidden, path):
    response = client.get(PREFIX + path)
    html = response.content.decode()
    assert response.status_code == 403 and 'class="rv-error"' in html and MESSAGE in html
    assert str(forbidden) not in html


@as_root
def test_the_rest_of_the_bucket_answers_and_lists_the_step_with_the_same_message(client, forbidden):
    assert client.get(PREFIX + "/train/1/").status_code == 200
    trends = wait_for(
        lambda: json.loads(client.get(PREFIX + "/api/jsonl/train/trends").content),
        "the background pass over the two steps",
        until=lambda answer: answer["done"],
    )
    assert trends["failed"] == [{"name": "2.jsonl", "error": MESSAGE}]
