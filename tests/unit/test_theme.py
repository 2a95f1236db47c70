"""The reader's theme is rendered by the server from the `rv-theme` cookie (theme-select.js writes
it): `<html>` carries the choice and the selector shows it before any script runs; anything but
a known choice is "system"."""

from __future__ import annotations

import pytest

from tests.support.data import sample
from tests.support.pages import PREFIX

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture
def step_page(client, write_step):
    write_step("train", 0, [sample(0)])

    def get(cookie: str | None) -> str:
        if cookie is not None:
            client.cookies["rv-theme"] = cookie
        response = client.get(f"{PREFIX}/train/0/")
        assert response.status_code == 200
        return response.content.decode()

    return get


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_a_stored_choice_is_on_the_html_element_and_selected(step_page, choice):
    html = step_page(choice)
    assert f'<html lang="en" data-theme-choice="{choice}" data-theme="{choice}">' in html
    assert f'<option value="{choice}" selected>' in html
    assert html.count(" selected>Theme:") == 1


@pytest.mark.parametrize("cookie", [None, "system", "DARK", '"><script>alert(1)</script>', ""])
def test_no_or_an_unknown_choice_is_system_and_never_echoed(step_page, cookie):
    html = step_page(cookie)
    assert '<html lang="en" data-theme-choice="system">' in html
    assert '<option value="system" selected>' in html
    assert "<script>alert" not in html


def test_the_selector_knows_where_to_store_the_cookie(step_page):
    """Under the app's mount point, not the host's whole site (a portal's other apps)."""
    assert f'data-cookie-path="{PREFIX}/"' in step_page(None)
