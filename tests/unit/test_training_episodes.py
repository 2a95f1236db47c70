"""The episode table pages through every episode of the CSV and says how many there are: each
page is what reading the whole file would give, the count follows a growing file by reading
only its new bytes, and a file replaced by a shorter one is counted again."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from pathlib import Path

import pytest

from rollouts.training import episodes as module
from rollouts.training.episodes import EPISODE_ROWS, ROW_MARK, episodes
from rollouts.training.spec import Spec

SPEC = Spec(path=Path("spec.toml"), name="episodes", command=("true",), episodes="monitor.csv")


def whole_file(text: str) -> list[list[str]]:
    """The reference: every line parsed, comments and the header skipped."""
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if r and not r[0].startswith("#")]
    return rows[1:]


def as_text(rows: list[list]) -> list[list[str]]:
    return [[str(c) for c in r] for r in rows]


def monitor(rows: int, start: int = 0) -> str:
    lines = ['#{"t_start": 1, "env_id": "demo"}', "r,l,t"]
    lines += [f"{k % 7},{100 + k},{k * 3}" for k in range(start, start + rows)]
    return "\n".join(lines) + "\n"


def write(tmp_path, text: str, **page):
    (tmp_path / "monitor.csv").write_text(text)
    return episodes(SPEC, tmp_path, **page)


@pytest.mark.parametrize("rows", [0, 1, EPISODE_ROWS - 1, EPISODE_ROWS + 1, 3_000, 100_000])
def test_the_newest_page_is_what_the_whole_file_gives(tmp_path, rows):
    text = monitor(rows)
    answer = write(tmp_path, text)
    assert as_text(answer["rows"]) == whole_file(text)[-EPISODE_ROWS:]
    assert answer["total"] == rows and answer["columns"] == ["r", "l", "t"]
    if rows:
        assert answer["rows"][-1] == [(rows - 1) % 7, 100 + rows - 1, (rows - 1) * 3]


@pytest.mark.parametrize("offset", [0, 1, 199, 200, ROW_MARK - 3, ROW_MARK, 5_000, 9_950, 10_000])
def test_every_page_is_its_slice_of_the_whole_file(tmp_path, offset):
    text = monitor(10_000)
    reference = whole_file(text)
    answer = write(tmp_path, text, offset=offset, limit=100)
    expected = reference[max(0, len(reference) - offset - 100) : len(reference) - offset]
    assert as_text(answer["rows"]) == expected
    assert (answer["total"], answer["offset"], answer["limit"]) == (10_000, offset, 100)


def test_long_rows_across_block_boundaries(tmp_path):
    # rows of varying length so block edges cut rows at every offset
    lines = ["r,l,note"] + [f"{k},{k},{'x' * (k % 997)}" for k in range(5_000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 2 * module.BLOCK
    reference = whole_file(text)
    for offset in (0, 1_234, 4_900):
        answer = write(tmp_path, text, offset=offset)
        first = max(0, len(reference) - offset - 200)
        assert as_text(answer["rows"]) == reference[first : len(reference) - offset]
        assert answer["total"] == 5_000


def test_numbers_text_and_non_finite_cells(tmp_path):
    answer = write(tmp_path, "r,l,t,tag\n1.5,2,3.0,x\nnan,inf,-1,7e3\n")
    assert answer["rows"] == [[1.5, 2, 3.0, "x"], [None, None, -1, 7000.0]]


def test_a_growing_file_is_counted_from_where_the_count_ended(tmp_path):
    path = tmp_path / "monitor.csv"
    assert write(tmp_path, monitor(3))["total"] == 3
    counted = module._indexes[str(path)].counted_to
    with path.open("a") as f:
        f.write("3,4,5\n9,9")  # a row still being written is not an episode yet
    answer = episodes(SPEC, tmp_path)
    assert answer["total"] == 4 and answer["rows"][-1] == [3, 4, 5]
    assert module._indexes[str(path)].counted_to == counted + len("3,4,5\n")
    with path.open("a") as f:
        f.write(",9\n")
    assert episodes(SPEC, tmp_path)["rows"][-1] == [9, 9, 9]


def test_a_file_replaced_by_a_shorter_one_is_counted_again(tmp_path):
    assert write(tmp_path, monitor(500))["total"] == 500
    replacement = tmp_path / "new.csv"
    replacement.write_text(monitor(2, start=40))
    os.replace(replacement, tmp_path / "monitor.csv")
    answer = episodes(SPEC, tmp_path)
    assert answer["total"] == 2 and answer["rows"][0] == [40 % 7, 140, 120]


def test_missing_empty_comment_only_and_unreadable(tmp_path):
    nothing = {"columns": [], "rows": [], "total": 0, "offset": 0, "limit": EPISODE_ROWS}
    assert episodes(SPEC, tmp_path) == nothing
    assert write(tmp_path, "") == nothing
    assert write(tmp_path, "#only a comment\n") == nothing
    assert episodes(dataclasses.replace(SPEC, episodes=""), tmp_path) == nothing
    (tmp_path / "monitor.csv").unlink()
    (tmp_path / "monitor.csv").mkdir()  # not a file: no table, no error
    assert episodes(SPEC, tmp_path) == nothing
    assert os.path.isdir(tmp_path / "monitor.csv")


def test_an_unchanged_page_is_not_read_again(tmp_path, monkeypatch):
    reads: list[tuple[int, int]] = []
    real = module._rows_between

    def counted(f, index, first, last):
        reads.append((first, last))
        return real(f, index, first, last)

    monkeypatch.setattr(module, "_rows_between", counted)
    first = write(tmp_path, monitor(300))
    assert episodes(SPEC, tmp_path) == first  # the poll of an idle page
    assert reads == [(100, 300)]
    with (tmp_path / "monitor.csv").open("a") as f:
        f.write("1,2,3\n")
    assert episodes(SPEC, tmp_path)["total"] == 301 and reads[-1] == (101, 301)
