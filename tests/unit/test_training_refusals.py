"""Refusals that must leave nothing behind and block nothing: a start the operating system
refuses (an argument holding NUL) removes its run directory, and an episode CSV that is a FIFO
reads as no episodes instead of holding the poll."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from rollouts.training.episodes import empty, episodes
from rollouts.training.job import JobError
from rollouts.training.manager import Manager
from rollouts.training.spec import Spec
from rollouts.training.specfile import load_spec
from tests.support.training import write_fake_spec


def test_a_start_the_os_refuses_leaves_no_run_directory(tmp_path: Path) -> None:
    spec_path = write_fake_spec(tmp_path)
    # The spec's own argument, not a form value (those are refused before): no OS takes a NUL.
    spec_path.write_text(spec_path.read_text().replace('"--mode"', '"--mo\\u0000de"'))
    manager = Manager(load_spec(spec_path))
    with pytest.raises(JobError, match="cannot start"):
        manager.start({})
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_an_episode_csv_that_is_a_fifo_reads_as_no_episodes(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "episodes.csv")
    spec = Spec(
        path=tmp_path / "spec.toml", name="refusals", command=("true",), episodes="episodes.csv"
    )
    answer: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: answer.update(episodes(spec, tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader before failing: open the FIFO's other end
        os.close(os.open(tmp_path / "episodes.csv", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading the episode CSV blocked on a FIFO")
    assert answer == empty()
