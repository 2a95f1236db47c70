"""The browser fixtures, for the tests in this directory only: no other tier starts a browser."""

from tests.support.browser import (
    any_tab_fixture,
    browser_fixture,
    playwright_driver_fixture,
    tab_fixture,
)

__all__ = ["any_tab_fixture", "browser_fixture", "playwright_driver_fixture", "tab_fixture"]
