"""A data directory that is missing or cannot be read: every page and endpoint answers 503 with
the reason (the JSON error shape under api/, the viewer's error page otherwise), never a server
path and never a made-up bucket."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from django.core.cache import caches

from rollouts.store import Catalog, Unavailable
from rollouts.web.runs import catalog_of
from tests.support.data import sample
from tests.support.pages import PREFIX

API = ["/api/jsonl/subdirs", "/api/jsonl/train/steps", "/api/jsonl/train/file/0.jsonl",
       "/api/jsonl/train/file/0.jsonl/samples", "/api/jsonl/train/file/0.jsonl/sample/0",
       "/api/jsonl/train/file/0.jsonl/columns", "/api/jsonl/train/file/0.jsonl/stats",
       "/api/jsonl/train/file/0.jsonl/group/0", "/api/jsonl/train/trends",
       "/api/jsonl/train/poll", "/api/view/train/0", "/api/view/train/0/sample/0",
       "/api/jsonl/default/steps"]  # fmt: skip
PAGES = ["/", "/train/", "/train/0/", "/train/0/sample/0/", "/train/0/stats/",
         "/train/0/group/0/", "/train/trends/", "/train/abc/", "/default/"]  # fmt: skip


def remove(data_dir: Path) -> None:
    shutil.rmtree(data_dir)


def replace_with_a_file(data_dir: Path) -> None:
    shutil.rmtree(data_dir)
    data_dir.write_text("not a directory\n")


def make_unreadable(data_dir: Path) -> None:
    data_dir.chmod(0)


FAULTS = [remove, replace_with_a_file,
          pytest.param(make_unreadable, marks=pytest.mark.skipif(
              os.geteuid() == 0, reason="root reads a chmod 000 directory anyway"))]  # fmt: skip


@pytest.fixture
def broken(settings, write_step, data_dir, request):
    """A data dir the viewer has already read (its catalog is cached), then broken."""
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step("train", 0, [sample(0), sample(1)])
    catalog_of(data_dir).buckets()  # read once while it was fine
    request.param(data_dir)
    yield data_dir
    if data_dir.is_dir():
        data_dir.chmod(0o755)


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("broken", FAULTS, indirect=True)
@pytest.mark.parametrize("path", API)
def test_every_endpoint_is_a_json_503_naming_the_directory_not_its_path(client, broken, path):
    response = client.get(PREFIX + path)
    assert response.status_code == 503, body_of(response)[:300]
    assert response["Content-Type"] == "application/json"
    data = json.loads(body_of(response))
    assert data["ok"] is False and data["status"] == 503
    assert f"the data directory {broken.name!r} is missing or cannot be read" in data["message"]
    assert str(broken.parent) not in body_of(response).decode()


@pytest.mark.parametrize("broken", FAULTS, indirect=True)
@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_the_error_page_with_a_503(client, broken, path):
    response = client.get(PREFIX + path)
    assert response.status_code == 503
    html = response.content.decode()
    assert 'class="rv-error" role="alert"' in html
    assert "is missing or cannot be read" in html
    assert str(broken.parent) not in html


def test_a_data_dir_missing_from_the_start_is_503_everywhere(client, settings, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(tmp_path / "never-there")
    for path in API:
        assert client.get(PREFIX + path).status_code == 503, path
    for path in PAGES:
        assert client.get(PREFIX + path).status_code == 503, path


def test_the_store_says_unavailable_and_recovers_when_the_directory_returns(tmp_path):
    data = tmp_path / "data"
    (data / "train").mkdir(parents=True)
    catalog = Catalog(data)
    assert catalog.buckets() == ["train"]
    (data / "train").rmdir()
    data.rmdir()
    with pytest.raises(Unavailable, match="'data' is missing"):
        catalog.buckets()
    with pytest.raises(Unavailable):
        catalog.steps("default")
    (data / "eval").mkdir(parents=True)
    assert catalog.buckets() == ["eval"]
