"""Several runs in one portal (ROLLOUTS_DATA_DIRS): a run picker, each run under runs/<name>/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.cache import caches

from tests.support.data import relax_line, sample

PREFIX = "/portal/rollouts"


def write_run(root: Path, name: str, steps: dict[int, int]) -> Path:
    """root/name/rollout_result/train/<step>.jsonl with `count` samples naming their run."""
    train = root / name / "rollout_result" / "train"
    train.mkdir(parents=True)
    for step, count in steps.items():
        prompts = [f"{name} step {step} sample {i}" for i in range(count)]
        lines = [relax_line(sample(i, prompt=prompt)) for i, prompt in enumerate(prompts)]
        (train / f"{step}.jsonl").write_text("".join(lines))
    return root / name / "rollout_result"


@pytest.fixture(autouse=True)
def runs(settings, tmp_path) -> dict[str, Path]:
    dirs = {"alpha": write_run(tmp_path, "alpha", {0: 2, 5: 3}),
            "beta": write_run(tmp_path, "beta", {1: 4})}  # fmt: skip
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {name: str(path) for name, path in dirs.items()}
    caches["rollouts"].clear()
    return dirs


def hrefs(html: str) -> list[str]:
    return re.findall(r'(?:href|action|value)="(/[^"]*)"', html)


def test_root_is_a_run_picker_when_there_is_no_single_data_dir(client):
    response = client.get(PREFIX + "/")
    assert response.status_code == 200
    html = response.content.decode()
    links = re.findall(r'<a class="rv-run" href="([^"]+)">(\w+)</a>', html)
    assert links == [(f"{PREFIX}/runs/alpha/", "alpha"), (f"{PREFIX}/runs/beta/", "beta")]
    assert "Content-Security-Policy" in response


def test_a_run_opens_on_its_latest_step_and_every_link_stays_in_it(client):
    response = client.get(PREFIX + "/runs/alpha/")
    assert response["Location"] == f"{PREFIX}/runs/alpha/train/5/"
    html = client.get(response["Location"]).content.decode()
    assert "alpha step 5 sample 0" in html
    assert 'id="rv-run"' in html and "run: alpha" in html
    for url in hrefs(html):
        if url.startswith("/static/") or url in (f"{PREFIX}/", f"{PREFIX}/runs/"):
            continue  # the app's own home and the run picker
        assert url.startswith(f"{PREFIX}/runs/alpha/"), url
        assert client.get(url).status_code in (200, 302), url


def test_runs_do_not_mix(client):
    html = client.get(PREFIX + "/runs/beta/train/1/sample/3/").content.decode()
    assert "beta step 1 sample 3" in html
    assert 'class="rv-position">Sample 4 of 4<' in html
    assert client.get(PREFIX + "/runs/beta/train/5/").status_code == 404  # alpha's step


def test_api_and_json_twins_under_a_run(client, runs):
    data = json.loads(client.get(PREFIX + "/runs/beta/api/jsonl/subdirs").content)
    assert data == {"data_dir": runs["beta"].name, "subdirs": ["train"]}
    twin = json.loads(client.get(PREFIX + "/runs/alpha/api/view/train/0/sample/1").content)
    assert twin["sample"]["prompt"] == "alpha step 0 sample 1"
    assert twin["urls"]["page"] == f"{PREFIX}/runs/alpha/train/0/sample/1/"


def test_unknown_run_is_a_404_in_both_shapes(client):
    page = client.get(PREFIX + "/runs/gamma/")
    assert page.status_code == 404
    assert "no run &#x27;gamma&#x27;; the runs are: alpha, beta" in page.content.decode()
    api = client.get(PREFIX + "/runs/gamma/api/jsonl/subdirs")
    assert api.status_code == 404
    assert json.loads(api.content)["message"] == "no run 'gamma'; the runs are: alpha, beta"


def test_top_level_api_says_to_choose_a_run(client):
    response = client.get(PREFIX + "/api/jsonl/subdirs")
    assert response.status_code == 404
    assert "choose one under runs/<name>/" in json.loads(response.content)["message"]


def test_single_data_dir_and_runs_side_by_side(client, settings, runs):
    settings.ROLLOUTS_DATA_DIR = str(runs["beta"])
    assert client.get(PREFIX + "/")["Location"] == f"{PREFIX}/train/1/"
    picker = client.get(PREFIX + "/runs/").content.decode()
    assert f'href="{PREFIX}/runs/alpha/"' in picker


@pytest.mark.parametrize(
    "path",
    ["/runs/alpha/api/nope", "/runs/alpha/api/jsonl/train/file/0.jsonl/nope",
     "/runs/alpha/api/view/train/x", "/runs/nope/api/jsonl/subdirs", "/api/nope/deeper"],
)  # fmt: skip
def test_every_path_under_a_runs_api_answers_the_json_error_shape(client, path):
    response = client.get(PREFIX + path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    data = json.loads(response.content)
    assert data["ok"] is False and data["status"] == 404 and data["message"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/runs/alpha/train/abc/", "no page &#x27;abc/&#x27; in bucket &#x27;train&#x27;"),
        ("/runs/alpha/train/5/sample/x/", "no page &#x27;5/sample/x/&#x27;"),
        ("/runs/alpha/train/5/group/x/", "no page &#x27;5/group/x/&#x27;"),
        ("/runs/alpha/valid/abc/", "no bucket &#x27;valid&#x27;"),
    ],
)
def test_non_numeric_step_or_sample_urls_get_the_viewers_error_page(client, path, message):
    response = client.get(PREFIX + path)
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="rv-error" role="alert"' in html and message in html
    assert "Content-Security-Policy" in response
