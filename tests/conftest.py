from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.data import relax_line


def pytest_collection_finish(session: pytest.Session) -> None:
    """What is alive once the tests are collected (Django, the app, ~2,000 test items) lives
    for the whole session: frozen out of the collector's sight, so each full collection during
    the tests no longer walks it (in the fast tier, about half the time spent collecting)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _served_roots_of_this_test_only() -> Iterator[None]:
    """Every Catalog adds its root to the disk cache's process-wide set of served data
    directories, which every cache read and write checks a path against, one by one. A server
    process serves a few; a test worker makes a catalog of a fresh tmp_path in hundreds of tests,
    and each test's checks then walk every earlier test's roots (a fifth of the fast tier's time
    went there). Each test starts from the roots served before it and leaves them as it found
    them."""
    from rollouts.store.disk import cache as diskcache

    before = set(diskcache._served)
    yield
    diskcache._served.intersection_update(before)
    diskcache._served.update(before)


@pytest.fixture
def write_step(tmp_path: Path) -> Callable[..., Path]:
    """write_step("train", 3, [records or raw str/bytes lines]) -> path of train/3.jsonl."""

    def write(bucket: str, step: int | str, lines: Iterable[Any]) -> Path:
        directory = tmp_path / "data" / bucket if bucket else tmp_path / "data"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / (f"{step}.jsonl" if isinstance(step, int) else step)
        chunks = []
        for line in lines:
            if isinstance(line, bytes):
                chunks.append(line)
            elif isinstance(line, str):
                chunks.append(line.encode())
            else:
                chunks.append(relax_line(line).encode())
        path.write_bytes(b"".join(chunks))
        return path

    return write


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def app_data_dir(settings: Any, data_dir: Path) -> Path:
    """The app reading `data_dir` (ROLLOUTS_DATA_DIR), its index cache empty: what a test of
    pages and JSON starts from (`pytestmark = pytest.mark.usefixtures("app_data_dir")`)."""
    from django.core.cache import caches

    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    return data_dir


@pytest.fixture
def hosted(settings, tmp_path: Path) -> Iterator[Path]:
    """A copy of examples/demo-train.toml, hosted by the site (ROLLOUTS_TRAIN_SPEC) for anyone;
    what it started is stopped afterwards."""
    from rollouts.training.manager import forget_managers
    from tests.support.servers import REPO_ROOT

    spec = tmp_path / "spec.toml"
    spec.write_text((REPO_ROOT / "examples" / "demo-train.toml").read_text())
    settings.ROLLOUTS_TRAIN_SPEC = str(spec)
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    yield spec
    forget_managers()
