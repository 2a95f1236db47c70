"""The URLs the keyboard shortcuts go to, as the server renders them on the help dialog
(#rv-keys) and the sample: the neighbouring steps in numeric order, none past either end, and
every one under the mount prefix."""

from __future__ import annotations

import pytest

from tests.support.data import sample
from tests.support.pages import PREFIX, page

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def key_links(path: str, client) -> dict[str, str]:
    keys = page(client, path).by_id["rv-keys"]
    return {name: value for name, value in keys.items() if name.startswith("data-")}


def test_sample_page_names_the_neighbouring_steps_in_numeric_order(client, write_step):
    for step in (10, 2, 9):
        write_step("train", step, [sample(0), sample(1)])
    assert key_links("/train/9/", client) == {
        "data-page": "sample",
        "data-trends-url": f"{PREFIX}/train/trends/",
        "data-stats-url": f"{PREFIX}/train/9/stats/",
        "data-prev-step-url": f"{PREFIX}/train/2/",
        "data-prev-step-stats-url": f"{PREFIX}/train/2/stats/",
        "data-next-step-url": f"{PREFIX}/train/10/",
        "data-next-step-stats-url": f"{PREFIX}/train/10/stats/",
        "data-table-url": f"{PREFIX}/train/9/table/",
        "data-prev-step-table-url": f"{PREFIX}/train/2/table/",
        "data-next-step-table-url": f"{PREFIX}/train/10/table/",
    }


def test_the_first_and_last_steps_have_no_step_beyond_them(client, write_step):
    for step in (1, 2):
        write_step("train", step, [sample(0)])
    first, last = key_links("/train/1/", client), key_links("/train/2/stats/", client)
    assert "data-prev-step-url" not in first and first["data-next-step-url"] == f"{PREFIX}/train/2/"
    assert "data-next-step-url" not in last and last["data-page"] == "stats"
    assert last["data-prev-step-stats-url"] == f"{PREFIX}/train/1/stats/"


def test_a_page_of_no_step_links_to_the_newest_steps_pages(client, write_step):
    """The header's view links are the same on every page of a bucket; on trends (no step of
    its own) they, and the keys that follow them, go to the newest step."""
    for step in (1, 12, 3):
        write_step("train", step, [sample(0)])
    links = key_links("/train/trends/", client)
    assert links == {
        "data-page": "trends",
        "data-trends-url": f"{PREFIX}/train/trends/",
        "data-stats-url": f"{PREFIX}/train/12/stats/",
        "data-table-url": f"{PREFIX}/train/12/table/",
    }
    header = page(client, "/train/trends/")
    assert header.by_id["rv-samples-link"]["href"] == f"{PREFIX}/train/12/"
    assert header.by_id["rv-compare-link"]["href"] == f"{PREFIX}/train/compare/?a=3&b=12"
    assert "aria-current" not in header.by_id["rv-samples-link"]
    assert header.by_id["rv-trends-link"]["aria-current"] == "page"


def test_every_page_of_a_bucket_shows_the_same_view_links(client, write_step):
    for step in (1, 2):
        write_step("train", step, [sample(0), sample(1)])
    views = ["rv-samples-link", "rv-stats-link", "rv-table-link", "rv-compare-link"]
    views += ["rv-trends-link", "rv-search-link"]
    for path in ("/train/2/", "/train/2/stats/", "/train/2/table/", "/train/trends/",
                 "/train/search/", "/train/compare/?a=1&b=2", "/train/2/group/0/"):  # fmt: skip
        shown = page(client, path).by_id
        assert [v for v in views if v in shown] == views, path


def test_sample_carries_its_group_page_and_the_skip_link_targets_it(client, write_step):
    write_step("train", 1, [sample(i) for i in range(4)])
    p = page(client, "/train/1/sample/3/")
    assert p.by_id["rv-sample"]["data-group-url"] == f"{PREFIX}/train/1/group/1/?from=3"
    assert p.by_id["rv-skip"]["href"] == "#rv-sample"
    assert p.text_of["rv-skip"] == "Skip to the sample"
    stats = page(client, "/train/1/stats/")
    assert stats.by_id["rv-skip"]["href"] == "#rv-main"
    assert stats.text_of["rv-skip"] == "Skip to the main content"
