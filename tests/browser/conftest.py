"""The browser fixtures, for the tests in this directory only: no other tier starts a browser.

`viewer` is the server most modules here drive: the module's `SERVED` steps written to a fresh
rollout_result/ and served, plain, for the whole module. A module whose server differs (a base
path, a tokenizer, scalars beside the steps) defines its own `viewer`, which pytest prefers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.browser import (
    any_tab_fixture,
    browser_fixture,
    playwright_driver_fixture,
    tab_fixture,
    write_step_file,
)
from tests.support.servers import ServerProcess, run_visualize

__all__ = ["any_tab_fixture", "browser_fixture", "playwright_driver_fixture", "tab_fixture"]


@pytest.fixture(scope="module")
def viewer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """A viewer of the module's `SERVED`: {(bucket, step): records or raw lines}, written in
    that order under a directory named after the module."""
    served = request.module.SERVED
    name = request.module.__name__.rpartition(".")[2]
    root = tmp_path_factory.mktemp(name) / "rollout_result"
    for (bucket, step), lines in served.items():
        write_step_file(root, bucket, step, lines)
    with run_visualize(root) as server:
        yield server
