"""An error page leads somewhere: a step that is not there links the bucket's latest and first
steps, a sample that is not there links its step's first and last sample, and the step
selector keeps the step that does exist instead of going back to "Choose a step"."""

from __future__ import annotations

import re

import pytest

from tests.support.pages import PREFIX, page


@pytest.fixture(autouse=True)
def _steps(settings, data_dir, write_step):
    for step in (3, 10, 12):
        write_step("train", step, [{"prompt": f"p{n}", "response": "r"} for n in range(5)])
    settings.ROLLOUTS_DATA_DIR = str(data_dir)


def links(html: str) -> list[tuple[str, str]]:
    found = re.search(r'<p class="rv-error-links">(.*?)</p>', html, re.S)
    assert found, "no links on the error page"
    return re.findall(r'<a href="([^"]+)">([^<]+)</a>', found.group(1))


def test_a_step_that_is_not_there_links_the_latest_and_the_first(client):
    p = page(client, "/train/99/", status=404)
    assert links(p.html) == [
        (f"{PREFIX}/train/12/", "train has 3 steps: the latest, 12"),
        (f"{PREFIX}/train/3/", "the first, 3"),
    ]
    assert "Choose a step" in p.html  # that step does not exist: nothing to keep


def test_a_sample_that_is_not_there_links_its_steps_first_and_last(client):
    p = page(client, "/train/10/sample/7/", status=404)
    assert links(p.html) == [
        (f"{PREFIX}/train/10/sample/0/", "step 10 has 5 samples: the first, 0"),
        (f"{PREFIX}/train/10/sample/4/", "step 10 has 5 samples: the last, 4"),
    ]
    assert "Choose a step" not in p.html  # the selector keeps step 10
    assert re.search(r'<option value="[^"]*/train/10/"[^>]*selected', p.html)


def test_an_unknown_bucket_still_links_what_exists(client):
    p = page(client, "/nope/", status=404)
    assert (f"{PREFIX}/train/12/", "train has 3 steps: the latest, 12") in links(p.html)
