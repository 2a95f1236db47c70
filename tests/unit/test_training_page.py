"""The Training page's HTML (`training/`) through Django's test client: off unless a spec is
named, then only for users the training's own access check lets in; it carries the API's URLs
for its script and no inline script or style; the header links to it only when it is there."""

from __future__ import annotations

import re

import pytest

from tests.support.pages import PREFIX, page

# The page's modules, preloaded beside its entry module (pages/training.js).
MODULES = ["chart.js", "reading.js", "training-form.js", "training-log.js",
           "training-metrics.js", "training-points.js", "training-phases.js",
           "training-episodes.js", "training-backend.js", "training.js"]  # fmt: skip


def allow(request) -> bool:
    return True


def deny(request) -> bool:
    return False


@pytest.fixture(autouse=True)
def _app(settings, data_dir, write_step):
    write_step("train", 0, [{"prompt": "p", "response": "r", "reward": 1.0}])
    settings.ROLLOUTS_DATA_DIR = str(data_dir)


@pytest.fixture
def hosted(settings, tmp_path):
    spec = tmp_path / "job.toml"
    spec.write_text("")
    settings.ROLLOUTS_TRAIN_SPEC = str(spec)
    settings.ROLLOUTS_TRAIN_ACCESS = "tests.unit.test_training_page.allow"
    return spec


def test_the_page_is_a_404_while_no_spec_is_named(client):
    p = page(client, "/training/", 404)
    assert "rv-train-top" not in p.by_id
    assert "no training job is hosted here" in p.html


def test_the_page_carries_every_api_url_and_the_poll_interval(client, hosted, settings):
    settings.ROLLOUTS_POLL_MS = 250
    p = page(client, "/training/")
    main = p.by_id["rv-main"]
    for action in ("schema", "state", "start", "pause", "resume", "stop"):
        assert main[f"data-{action}-url"] == f"{PREFIX}/api/train/{action}"
    assert main["data-poll-ms"] == "250"
    for element in ("rv-train-form", "rv-chip-process", "rv-chip-progress", "rv-chip-wall",
                    "rv-chip-device", "rv-chip-connection", "rv-train-pause", "rv-train-stop",
                    "rv-train-resume-latest", "rv-train-refresh", "rv-train-preview",
                    "rv-trend-chart", "rv-reading", "rv-cards", "rv-log", "rv-log-filter",
                    "rv-episodes", "rv-train-bar", "rv-train-command"):  # fmt: skip
        assert element in p.by_id, element


def test_the_page_has_no_inline_script_or_style_and_a_strict_csp(client, hosted):
    response = client.get(PREFIX + "/training/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    p = page(client, "/training/")
    sources = [s.get("src", "") for s in p.scripts]
    assert all(sources), "an inline script"
    assert sources[-1] == "/static/rollouts/pages/training.js"
    preloaded = re.findall(r'<link rel="modulepreload" href="/static/rollouts/([^"]+)">', p.html)
    assert set(MODULES) <= set(preloaded)
    assert "<style" not in p.html and " style=" not in p.html


def test_the_header_links_to_the_page_only_while_training_is_hosted(client, settings, hosted):
    p = page(client, "/training/")
    assert p.by_id["rv-training-link"]["href"] == f"{PREFIX}/training/"
    assert p.by_id["rv-training-link"]["aria-current"] == "page"
    step = page(client, "/train/0/")
    assert step.by_id["rv-training-link"]["href"] == f"{PREFIX}/training/"
    del settings.ROLLOUTS_TRAIN_SPEC
    assert "rv-training-link" not in page(client, "/train/0/").by_id


def test_the_training_access_check_decides_page_and_link(client, settings, hosted):
    settings.ROLLOUTS_TRAIN_ACCESS = "tests.unit.test_training_page.deny"
    assert "rv-training-link" not in page(client, "/train/0/").by_id
    response = client.get(PREFIX + "/training/")
    assert response.status_code in (302, 403)  # sign in first, or told no
    assert b"rv-train-top" not in response.content


def test_by_default_only_staff_may_train(client, settings, hosted):
    del settings.ROLLOUTS_TRAIN_ACCESS  # the default: staff (and this site has no users)
    assert "rv-training-link" not in page(client, "/train/0/").by_id
    assert client.get(PREFIX + "/training/").status_code in (302, 403)


def test_the_app_access_check_comes_first(client, settings, hosted):
    settings.ROLLOUTS_ACCESS = "tests.unit.test_training_page.deny"
    assert client.get(PREFIX + "/training/").status_code in (302, 403)


def test_a_post_to_the_page_is_a_405(client, hosted):
    response = client.post(PREFIX + "/training/")
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD"


def test_a_trainer_that_writes_no_rollouts_lands_on_the_training_page(client, hosted, settings):
    settings.ROLLOUTS_TRAIN_FOLLOW = True
    settings.ROLLOUTS_DATA_DIR = str(hosted.parent / "runs" / "rollout_result")  # not there
    response = client.get(PREFIX + "/")
    assert response.status_code == 302 and response["Location"] == f"{PREFIX}/training/"


def test_a_trainer_with_rollouts_lands_on_its_newest_step(client, hosted, settings):
    settings.ROLLOUTS_TRAIN_FOLLOW = True  # the data dir of _app holds train/0.jsonl
    response = client.get(PREFIX + "/")
    assert response.status_code == 302 and response["Location"].startswith(f"{PREFIX}/train/0/")


def test_a_portal_without_rollouts_still_says_so_on_its_own_page(client, hosted, settings):
    settings.ROLLOUTS_DATA_DIR = str(hosted.parent / "missing")  # not following a hosted job
    assert client.get(PREFIX + "/").status_code != 302
