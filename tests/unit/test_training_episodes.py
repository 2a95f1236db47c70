"""The episode table reads the CSV's header and its tail only, and answers what reading the
whole file would: the last 200 rows, numbers as numbers."""

from __future__ import annotations

import csv
import io
import os
from types import SimpleNamespace

import pytest

from rollouts.training.episodes import EPISODE_ROWS, TAIL_BLOCK, episodes

SPEC = SimpleNamespace(episodes="monitor.csv")


def whole_file(text: str) -> dict:
    """The reference: every line parsed, comments skipped, the last rows kept."""
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if r and not r[0].startswith("#")]
    return {"columns": rows[0], "rows": rows[1:][-EPISODE_ROWS:]}


def as_text(answer: dict) -> dict:
    return {"columns": answer["columns"], "rows": [[str(c) for c in r] for r in answer["rows"]]}


def write(tmp_path, text: str):
    (tmp_path / "monitor.csv").write_text(text)
    return episodes(SPEC, tmp_path)


@pytest.mark.parametrize("rows", [0, 1, EPISODE_ROWS - 1, EPISODE_ROWS + 1, 3_000, 100_000])
def test_the_tail_is_what_the_whole_file_gives(tmp_path, rows):
    lines = ['#{"t_start": 1, "env_id": "demo"}', "r,l,t"]
    lines += [f"{k % 7},{100 + k},{k * 3}" for k in range(rows)]
    text = "\n".join(lines) + "\n"
    answer = write(tmp_path, text)
    assert as_text(answer) == whole_file(text)
    assert len(answer["rows"]) == min(rows, EPISODE_ROWS)
    if rows:
        assert answer["rows"][-1] == [(rows - 1) % 7, 100 + rows - 1, (rows - 1) * 3]


def test_long_rows_across_block_boundaries(tmp_path):
    # rows of varying length so block edges cut rows at every offset
    lines = ["r,l,note"] + [f"{k},{k},{'x' * (k % 997)}" for k in range(2_000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 4 * TAIL_BLOCK
    assert as_text(write(tmp_path, text)) == whole_file(text)


def test_numbers_text_and_non_finite_cells(tmp_path):
    answer = write(tmp_path, "r,l,t,tag\n1.5,2,3.0,x\nnan,inf,-1,7e3\n")
    assert answer == {
        "columns": ["r", "l", "t", "tag"],
        "rows": [[1.5, 2, 3.0, "x"], [None, None, -1, 7000.0]],
    }


def test_a_growing_file_is_read_again_and_an_unchanged_one_is_not(tmp_path):
    path = tmp_path / "monitor.csv"
    first = write(tmp_path, "r,l\n1,2\n")
    assert episodes(SPEC, tmp_path) is first  # kept: same size and mtime
    with path.open("a") as f:
        f.write("3,4\n")
    assert episodes(SPEC, tmp_path)["rows"] == [[1, 2], [3, 4]]


def test_missing_empty_comment_only_and_unreadable(tmp_path):
    assert episodes(SPEC, tmp_path) == {"columns": [], "rows": []}
    assert write(tmp_path, "") == {"columns": [], "rows": []}
    assert write(tmp_path, "#only a comment\n") == {"columns": [], "rows": []}
    assert episodes(SimpleNamespace(episodes=""), tmp_path) == {"columns": [], "rows": []}
    (tmp_path / "monitor.csv").unlink()
    (tmp_path / "monitor.csv").mkdir()  # not a file: no table, no error
    assert episodes(SPEC, tmp_path) == {"columns": [], "rows": []}
    assert os.path.isdir(tmp_path / "monitor.csv")
