"""Prompt ids (a hash of the decoded prompt, one per row) and what is built on them in the store:
a prompt's appearances across steps (`lineage.find_prompt`) and two steps compared
(`compare.compare_steps`). Store only, no Django: the pages are tested in tests/e2e."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest

from rollouts.store import Catalog, Columns, decode_line
from rollouts.store import lineage as lineage_module
from rollouts.store.compare import compare_steps
from rollouts.store.disk.cache import DiskCache
from rollouts.store.disk.entry import decode_entry
from rollouts.store.disk.prompts import decode_prompt_columns
from rollouts.store.files import FileIdentity
from rollouts.store.lineage import find_prompt
from rollouts.store.promptid import format_prompt_id, parse_prompt_id, prompt_id_of_value

CJK = '问题: what is 2+2?\n"quoted" \\ back'


def blake(tag: bytes, text: str) -> int:
    """The id as the module docstring defines it, computed here independently."""
    return int.from_bytes(hashlib.blake2b(tag + text.encode(), digest_size=8).digest(), "big")


def column_ids(lines: list[str]) -> list[int]:
    columns = Columns()
    for line in lines:
        columns.append(decode_line(line.encode()))
    return list(columns.prompt_ids)


def test_a_prompt_id_is_the_blake2b_of_its_decoded_text():
    assert prompt_id_of_value(CJK) == blake(b"s\0", CJK)
    messages = [{"role": "user", "content": CJK}]
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert prompt_id_of_value(messages) == blake(b"j\0", canonical)
    assert format_prompt_id(prompt_id_of_value(CJK)) == format(blake(b"s\0", CJK), "016x")
    assert parse_prompt_id(format_prompt_id(12345)) == 12345
    for bad in ("", "abc", "0123456789ABCDEF", "0123456789abcdef0", "0123456789abcde\n", "g" * 16):
        assert parse_prompt_id(bad) is None


def test_one_prompt_written_every_way_has_one_id():
    record = {"prompt": CJK, "reward": 1.0}
    lines = [
        json.dumps(record, ensure_ascii=False),  # raw UTF-8, escapes only for \n " \
        json.dumps(record, ensure_ascii=True),  # every non-ASCII character escaped
        json.dumps({**record, "reward": math.nan}),  # not strict JSON: the lenient path
        json.dumps({"prompt": "plain ascii", "reward": 0}),
    ]
    ids = column_ids(lines)
    assert ids[:3] == [blake(b"s\0", CJK)] * 3
    assert ids[3] == blake(b"s\0", "plain ascii")


def test_list_prompts_are_hashed_as_canonical_json():
    messages = [{"role": "user", "content": CJK}]
    reordered = '[{"content": ' + json.dumps(CJK) + ', "role": "user"}]'
    lines = [
        json.dumps({"prompt": messages}, ensure_ascii=False),
        '{"prompt": ' + reordered + "}",
        json.dumps({"prompt": messages, "reward": math.nan}),
        json.dumps({"prompt": json.dumps(messages)}),  # the same text, as a string
        json.dumps({"reward": 1}),  # no prompt
        json.dumps({"prompt": None}),
    ]
    ids = column_ids(lines)
    assert ids[0] == ids[1] == ids[2] == prompt_id_of_value(messages)
    assert ids[3] != ids[0]
    assert ids[4] == ids[5] == 0


def write(path: Path, records: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) + "\n"
                   for r in records)  # fmt: skip
    path.write_text(text, encoding="utf-8")


def rec(prompt: Any, reward: float, **extra: Any) -> dict[str, Any]:
    return {"prompt": prompt, "response": "r", "reward": reward, "response_length": 10, **extra}


@pytest.fixture
def bucket(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write(root / "train" / "1.jsonl", [rec("A", 1.0), rec("B", 0.0), rec("A", 0.0)])
    # Step 2 as an ensure_ascii writer writes it, with an unreadable line and a NaN reward.
    step2 = [
        json.dumps(rec("B", 1.0), ensure_ascii=True) + "\n",
        '{"prompt": "A", "reward": \n',
        json.dumps(rec("A", math.nan, status="truncated", response_length=7)) + "\n",
    ]
    write(root / "train" / "2.jsonl", step2)
    write(root / "train" / "3.jsonl", [rec("B", 0.5)])
    return root


def lineage(catalog: Catalog, prompt: str) -> tuple[list[tuple], list[dict[str, Any]]]:
    found = find_prompt(catalog, "train", prompt_id_of_value(prompt))
    appearances, steps = found.appearances, found.steps
    return [(a.step, a.position, a.line, a.reward, a.status, a.response_length)
            for a in appearances], steps  # fmt: skip


def test_a_prompt_is_found_in_every_step_and_again_after_a_restart(bucket, tmp_path, monkeypatch):
    disk = DiskCache(tmp_path / "cache")
    expected_a = (
        [(1, 0, 1, 1.0, None, 10.0), (1, 2, 3, 0.0, None, 10.0), (2, 2, 3, None, "truncated", 7.0)],
        [
            {"step": 1, "name": "1", "samples": 2, "mean_reward": 0.5},
            {"step": 2, "name": "2", "samples": 1, "mean_reward": None},
        ],
    )
    expected_b_steps = [(1, 0.0), (2, 1.0), (3, 0.5)]
    assert lineage(Catalog(bucket, disk=disk), "A") == expected_a

    # A restarted viewer: a new catalog, the same disk cache, and no file may be decoded.
    def no_decoding(*args: Any) -> None:
        raise AssertionError("a step was decoded although the disk cache had it")

    monkeypatch.setattr(lineage_module, "_from_file", no_decoding)
    restarted = Catalog(bucket, disk=disk)
    assert lineage(restarted, "A") == expected_a
    _, steps = lineage(restarted, "B")
    assert [(s["step"], s["mean_reward"]) for s in steps] == expected_b_steps
    assert lineage(restarted, "never written") == ([], [])


def test_a_damaged_prompt_column_on_disk_is_a_miss(bucket, tmp_path):
    disk = DiskCache(tmp_path / "cache")
    catalog = Catalog(bucket, disk=disk)
    path = bucket / "train" / "1.jsonl"
    index = catalog.open_step("train", "1.jsonl")
    catalog.stats(index)  # decodes and saves the entry
    identity = FileIdentity.of(path.stat())
    blob = disk._read(path)
    assert blob is not None
    assert list(decode_entry(blob, identity).columns.prompt_ids) == column_ids(  # type: ignore[union-attr]
        path.read_text().splitlines()
    )
    entry = msgspec.msgpack.decode(blob)
    entry["prompt_ids"] = entry["prompt_ids"][:-8]
    damaged = msgspec.msgpack.encode(entry)
    assert "prompt ids" in str(decode_entry(damaged, identity))
    assert "prompt ids" in str(decode_prompt_columns(damaged, identity))


def columns_of(records: list[dict[str, Any]], bad: tuple[int, ...] = ()) -> tuple[Columns, set]:
    columns = Columns()
    for i, record in enumerate(records):
        columns.append(None if i in bad else decode_line(json.dumps(record).encode()))
    columns.pad()
    return columns, set(bad)


def test_two_steps_compared_per_dataset_and_by_flipped_prompt():
    def r(p: str, reward: float, ds: str, n: int, status: str = "completed") -> dict[str, Any]:
        return {"prompt": p, "reward": reward, "dataset": ds, "response_length": n,
                "status": status}  # fmt: skip

    a = columns_of(
        [r("P", 1, "math", 100), r("P", 1, "math", 200), r("Q", 0, "code", 50, "truncated"),
         r("R", 0.4, "code", 10), r("S", 1, "math", 1), r("X", 1, "math", 999)],
        bad=(5,),
    )  # fmt: skip
    b = columns_of(
        [r("P", 0, "math", 300), r("P", 1, "math", 100), r("Q", 1, "code", 70),
         r("R", 0.8, "code", 30, "truncated"), r("T", 1, "math", 5)]
    )  # fmt: skip
    result = compare_steps(a, b)
    rows = {row["dataset"]: row for row in result["rows"]}
    assert list(rows) == [None, "code", "math"]
    # By hand: a's readable rows are the first five, b has five.
    assert rows[None]["a"] == {"samples": 5, "mean_reward": 3.4 / 5, "truncation_rate": 0.2,
                               "mean_response_length": 361 / 5}  # fmt: skip
    assert rows[None]["b"] == {"samples": 5, "mean_reward": pytest.approx(3.8 / 5),
                               "truncation_rate": 0.2, "mean_response_length": 505 / 5}  # fmt: skip
    assert rows["code"]["a"]["mean_reward"] == pytest.approx(0.2)
    assert rows["code"]["b"]["mean_reward"] == pytest.approx(0.9)
    assert rows["code"]["difference"]["mean_reward"] == pytest.approx(0.7)
    assert rows["math"]["difference"] == {
        "mean_reward": pytest.approx(2 / 3 - 1),
        "truncation_rate": 0.0,
        "mean_response_length": pytest.approx(135 - 301 / 3),
    }
    # Group means: P 1 -> 0.5 (0.5 is not above 0.5: failed), Q 0 -> 1, R 0.4 -> 0.8; S and T
    # are in one step only. Largest change first, whichever way.
    assert result["prompts_in_both"] == 3
    flipped = [(f["prompt_id"], f["change"], f["solved_in"]) for f in result["flipped"]]
    ids = {p: format_prompt_id(prompt_id_of_value(p)) for p in "PQR"}
    assert flipped == [
        (ids["Q"], 1.0, "b"),
        (ids["P"], -0.5, "a"),
        (ids["R"], pytest.approx(0.4), "b"),
    ]
    assert result["flipped"][0]["a"] == {"samples": 1, "mean_reward": 0.0, "position": 2}
    assert result["flipped"][1]["b"] == {"samples": 2, "mean_reward": 0.5, "position": 0}
    loose = compare_steps(a, b, threshold=0.45)  # P is solved in both now
    assert [f["prompt_id"] for f in loose["flipped"]] == [ids["Q"], ids["R"]]


def test_a_step_that_grows_or_is_rewritten_is_read_again(bucket):
    catalog = Catalog(bucket)  # no disk cache: the files themselves
    assert [s["step"] for s in lineage(catalog, "A")[1]] == [1, 2]
    with (bucket / "train" / "3.jsonl").open("a") as f:  # a live run appends
        f.write(json.dumps(rec("A", 1.0)) + "\n")
    appearances, steps = lineage(catalog, "A")
    assert [s["step"] for s in steps] == [1, 2, 3]
    assert appearances[-1][:3] == (3, 1, 2)
    write(bucket / "train" / "1.jsonl", [rec("B", 1.0)])  # a resumed run rewrites a step
    assert [s["step"] for s in lineage(catalog, "A")[1]] == [2, 3]


def test_a_step_that_cannot_be_read_is_skipped_and_named(bucket, monkeypatch):
    def unreadable_step_2(catalog: Catalog, path: Path, name: str) -> Any:
        if name == "train/2.jsonl":
            raise PermissionError(13, "Permission denied", str(path))
        return real(catalog, path, name)

    real = lineage_module._from_file
    monkeypatch.setattr(lineage_module, "_from_file", unreadable_step_2)
    found = find_prompt(Catalog(bucket), "train", prompt_id_of_value("A"))
    assert [s["step"] for s in found.steps] == [1]
    message = "train/2.jsonl cannot be read: permission denied"  # the step's name, not its path
    assert found.skipped == [{"step": 2, "error": message}]
