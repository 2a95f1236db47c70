"""The store against every edge case of DATA_FORMAT.md, on files each test writes itself."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from rollouts.store import BadRequest, Catalog, NotFound, Selection, UnreadableLine, order_positions
from tests.support.data import sample


def open_step(data_dir: Path, bucket: str, filename: str):
    catalog = Catalog(data_dir)
    return catalog, catalog.open_step(bucket, filename)


# -- catalog -------------------------------------------------------------------------------
def test_buckets_are_train_and_eval_when_present(write_step, data_dir):
    write_step("train", 0, [sample(0)])
    write_step("eval", 0, [sample(0)])
    (data_dir / "other").mkdir()
    assert Catalog(data_dir).buckets() == ["train", "eval"]


def test_flat_directory_is_one_default_bucket(write_step, data_dir):
    write_step("", 5, [sample(0)])
    catalog = Catalog(data_dir)
    assert catalog.buckets() == ["default"]
    assert [s.step for s in catalog.steps("default")] == [5]


def test_save_dir_with_rollout_result_is_found(tmp_path):
    train = tmp_path / "save" / "rollout_result" / "train"
    train.mkdir(parents=True)
    (train / "1.jsonl").write_text(json.dumps(sample(0)) + "\n")
    catalog = Catalog(tmp_path / "save")
    assert catalog.buckets() == ["train"]
    assert [s.filename for s in catalog.steps("train")] == ["1.jsonl"]


def test_steps_sort_numerically_and_ignore_non_step_files(write_step, data_dir):
    for step in (10, 9, 0, 100):
        write_step("train", step, [sample(0)])
    for name in ("notes.jsonl", "20.pending.json", "20.complete.json", "7.jsonl.tmp", "x1.jsonl"):
        (data_dir / "train" / name).write_text("{}\n")
    steps = Catalog(data_dir).steps("train")
    assert [s.step for s in steps] == [0, 9, 10, 100]
    assert [s.size_bytes for s in steps] == [
        (data_dir / "train" / s.filename).stat().st_size for s in steps
    ]


@pytest.mark.parametrize(
    "name", ["notes.jsonl", "20.pending.json", "..", "../0.jsonl", "%2F0.jsonl"]
)
def test_non_step_names_are_never_opened(write_step, data_dir, name):
    write_step("train", 0, [sample(0)])
    (data_dir / "train" / "notes.jsonl").write_text("{}\n")
    with pytest.raises(NotFound):
        Catalog(data_dir).open_step("train", name)


def test_unknown_bucket_is_not_found(write_step, data_dir):
    write_step("train", 0, [sample(0)])
    with pytest.raises(NotFound, match="no bucket 'eval'"):
        Catalog(data_dir).steps("eval")


def test_symlink_escaping_the_data_dir_does_not_exist(write_step, data_dir, tmp_path):
    write_step("train", 0, [sample(0)])
    outside = tmp_path / "secret.jsonl"
    outside.write_text(json.dumps({"secret": 1}) + "\n")
    os.symlink(outside, data_dir / "train" / "1.jsonl")
    catalog = Catalog(data_dir)
    assert [s.step for s in catalog.steps("train")] == [0]
    with pytest.raises(NotFound):
        catalog.open_step("train", "1.jsonl")


def test_symlink_inside_the_data_dir_is_followed(write_step, data_dir):
    write_step("train", 0, [sample(0), sample(1)])
    os.symlink(data_dir / "train" / "0.jsonl", data_dir / "train" / "1.jsonl")
    catalog = Catalog(data_dir)
    assert len(catalog.open_step("train", "1.jsonl")) == 2


def test_bucket_symlinked_outside_is_ignored(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "0.jsonl").write_text(json.dumps(sample(0)) + "\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "eval").mkdir()
    os.symlink(outside, data / "train")
    assert Catalog(data).buckets() == ["eval"]


# -- index and reads -------------------------------------------------------------------------
def test_index_finds_every_record_and_skips_blank_lines(write_step, data_dir):
    write_step("train", 0, [sample(0), "\n", "   \n", sample(1), "\r\n", sample(2)])
    _, index = open_step(data_dir, "train", "0.jsonl")
    assert len(index) == 3
    assert list(index.lines) == [1, 4, 6]
    assert [index.read(p).decoded.value("sample_index") for p in range(3)] == [0, 1, 2]


def test_strict_line_bytes_are_sent_as_they_are(write_step, data_dir):
    record = sample(0, prompt="数学 🙂 \\boxed{204}")
    path = write_step("train", 0, [record])
    _, index = open_step(data_dir, "train", "0.jsonl")
    got = index.read(0)
    assert got.decoded.strict
    assert got.data + b"\n" == path.read_bytes()


def test_nan_and_infinity_are_read_and_reported(write_step, data_dir):
    write_step("train", 0, [sample(0, reward=math.nan, extra=[math.inf, -math.inf])])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    got = index.read(0)
    assert not got.decoded.strict
    assert math.isnan(got.decoded.value("reward"))
    assert any("NaN" in w for w in got.decoded.warnings)
    columns = catalog.columns(index)
    assert columns.value("reward", 0) is None


def test_malformed_and_non_object_lines_are_invalid_with_line_numbers(write_step, data_dir):
    write_step("train", 0, [sample(0), "{not json\n", "3\n", "null\n", "[1, 2]\n", sample(5)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    catalog.columns(index)
    assert sorted(index.invalid) == [1, 2, 3, 4]
    assert "malformed JSON" in index.invalid[1]
    assert "not an object" in index.invalid[2]
    with pytest.raises(UnreadableLine) as err:
        index.read(1)
    assert err.value.line == 2
    assert list(order_positions(index)) == [0, 5]


def test_non_utf8_bytes_are_replaced_not_fatal(write_step, data_dir):
    line = json.dumps(sample(0)).encode().replace(b"answer 0", b"answer \xff\xfe 0") + b"\n"
    write_step("train", 0, [line, sample(1)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    got = index.read(0)
    assert got.decoded.value("response") == "answer \ufffd\ufffd 0"
    assert any("UTF-8" in w for w in got.decoded.warnings)
    assert list(catalog.ordering(index)) == [0, 1]


def test_empty_file_has_no_samples(write_step, data_dir):
    write_step("train", 0, [])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    assert len(index) == 0
    assert list(catalog.ordering(index)) == []
    with pytest.raises(NotFound):
        index.read(0)


def test_half_written_last_line_is_pending_not_an_error(write_step, data_dir):
    full = json.dumps(sample(1))
    write_step("train", 0, [sample(0), full[: len(full) // 2]])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    assert len(index) == 1
    assert index.partial_tail_bytes == len(full) // 2
    catalog.columns(index)
    assert index.invalid == {}


def test_complete_last_line_without_newline_is_a_sample(write_step, data_dir):
    write_step("train", 0, [sample(0), json.dumps(sample(1))])
    _, index = open_step(data_dir, "train", "0.jsonl")
    assert len(index) == 2
    assert index.read(1).decoded.value("sample_index") == 1


def test_growing_file_is_indexed_incrementally(write_step, data_dir):
    path = write_step("train", 0, [sample(0)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    catalog.columns(index)
    half = json.dumps(sample(1))
    with path.open("a") as f:
        f.write(half[:10])
    grown = catalog.open_step("train", "0.jsonl")
    assert grown is index and len(grown) == 1 and grown.partial_tail_bytes == 10
    with path.open("a") as f:
        f.write(half[10:] + "\n" + json.dumps(sample(2)) + "\n")
    grown = catalog.open_step("train", "0.jsonl")
    assert grown is index, "growth must extend the index, not rebuild it"
    assert len(grown) == 3 and grown.partial_tail_bytes == 0
    assert grown.columns_ready
    assert [grown.columns.value("sample_index", r) for r in range(3)] == [0.0, 1.0, 2.0]


def test_tentative_last_line_is_reread_when_the_file_grows(write_step, data_dir):
    path = write_step("train", 0, [sample(0), '{"sample_index": 1}'])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    catalog.columns(index)
    assert len(index) == 2
    # The writer was not done: the "complete" last line was the start of a longer one.
    with path.open("a") as f:
        f.write('{"sample_index": 9}\n')
    grown = catalog.open_step("train", "0.jsonl")
    assert len(grown) == 2
    assert 1 in grown.invalid  # '{"sample_index": 1}{"sample_index": 9}' is not JSON
    assert grown.columns.rows == 2


def test_rewritten_file_is_reindexed(write_step, data_dir):
    write_step("train", 0, [sample(0), sample(1), sample(2)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    assert len(index) == 3
    write_step("train", 0, [sample(7, reward=0.25)])
    fresh = catalog.open_step("train", "0.jsonl")
    assert fresh is not index
    assert len(fresh) == 1
    assert fresh.read(0).decoded.value("sample_index") == 7


def test_rewrite_that_grows_with_other_bytes_is_not_taken_for_growth(write_step, data_dir):
    write_step("train", 0, [sample(0)])
    catalog, _index = open_step(data_dir, "train", "0.jsonl")
    path = data_dir / "train" / "0.jsonl"
    # Same inode, larger, different first line: a resumed run rewrote the step.
    with path.open("r+b") as f:
        f.write((json.dumps(sample(5)) + "\n" + json.dumps(sample(6)) + "\n").encode())
    fresh = catalog.open_step("train", "0.jsonl")
    assert [fresh.read(p).decoded.value("sample_index") for p in range(len(fresh))] == [5, 6]


def test_deleted_step_is_not_found(write_step, data_dir):
    path = write_step("train", 0, [sample(0)])
    catalog, _index = open_step(data_dir, "train", "0.jsonl")
    path.unlink()
    with pytest.raises(NotFound):
        catalog.open_step("train", "0.jsonl")


def test_lines_of_several_megabytes_are_read(write_step, data_dir):
    big = sample(0, response_token_ids=list(range(600_000)))
    write_step("train", 0, [big, sample(1)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    assert index.ends[0] - index.starts[0] > 3_000_000
    assert index.read(0).decoded.value("response_token_ids")[-1] == 599_999
    assert "response_token_ids" not in catalog.columns(index).names()


# -- columns and ordering ---------------------------------------------------------------------
def test_columns_hold_scalars_and_reward_components(write_step, data_dir):
    write_step(
        "train",
        0,
        [
            sample(0, reward={"acc": 1, "format": 0.5}, label=0),
            sample(1, reward=None, label=""),
            sample(2, agent_turns=3, label="42"),
        ],
    )
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    columns = catalog.columns(index)
    assert [columns.value("reward", r) for r in range(3)] == [None, None, 0.0]
    assert [columns.value("reward.acc", r) for r in range(3)] == [1.0, None, None]
    assert [columns.value("agent_turns", r) for r in range(3)] == [None, None, 3.0]
    assert [columns.value("status", r) for r in range(3)] == ["completed"] * 3
    assert columns.labels == ["0", "", "42"]
    assert "prompt" not in columns.names() and "prompt" in columns.keys


def test_missing_reward_key_is_missing_not_zero(write_step, data_dir):
    record = sample(0)
    del record["reward"]
    write_step("train", 0, [record, sample(1)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    assert catalog.columns(index).value("reward", 0) is None


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sort_is_stable_with_missing_values_last(write_step, data_dir, order):
    rewards = [0.5, None, 1.0, math.nan, 0.5, "high", 0.0, {"acc": 1}]
    write_step("train", 0, [sample(i, reward=r) for i, r in enumerate(rewards)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    got = list(catalog.ordering(index, Selection.from_params({"sort": "reward", "order": order})))
    numeric = [(i, r) for i, r in enumerate(rewards) if isinstance(r, float) and not math.isnan(r)]
    expected = [i for i, _ in sorted(numeric, key=lambda t: t[1], reverse=order == "desc")]
    expected += [i for i in range(len(rewards)) if i not in expected]
    assert got == expected


def test_filters_select_by_status_and_dataset(write_step, data_dir):
    records = [
        sample(0, dataset="gsm8k"),
        sample(1, dataset="中文数学", status="truncated"),
        sample(0, dataset="中文数学"),
        sample(1, dataset="gsm8k", status="aborted"),
    ]
    write_step("eval", 0, records)
    catalog, index = open_step(data_dir, "eval", "0.jsonl")
    assert list(catalog.ordering(index, Selection(filters=(("dataset", "中文数学"),)))) == [1, 2]
    assert list(
        catalog.ordering(index, Selection("sample_index", True, (("status", "completed"),)))
    ) == [0, 2]
    with pytest.raises(BadRequest):
        catalog.ordering(index, Selection(filters=(("reward", "1"),)))


def test_unknown_sort_column_and_order_are_bad_requests(write_step, data_dir):
    write_step("train", 0, [sample(0)])
    catalog, index = open_step(data_dir, "train", "0.jsonl")
    with pytest.raises(BadRequest, match="unknown column 'nope'"):
        catalog.ordering(index, Selection("nope"))
    with pytest.raises(BadRequest):
        Selection.from_params({"sort": "reward", "order": "sideways"})


def test_index_lives_in_the_cache_and_is_reused(write_step, data_dir):
    from rollouts.store import DictCache

    write_step("train", 0, [sample(0)])
    cache = DictCache()
    catalog = Catalog(data_dir, cache)
    first = catalog.open_step("train", "0.jsonl")
    assert catalog.open_step("train", "0.jsonl") is first
    assert [v for v in cache._data.values()] == [first]


@pytest.mark.parametrize("chunk", [1, 2, 7, 64])
def test_scan_is_exact_whatever_the_read_size(write_step, data_dir, monkeypatch, chunk):
    import rollouts.store.lines as lines_module

    lines = [sample(0), "\n", "  \t \n", sample(1, response="x" * 300), "\r\n", sample(2), "   "]
    path = write_step("train", 0, lines)
    monkeypatch.setattr(lines_module, "SCAN_CHUNK_BYTES", chunk)
    _, index = open_step(data_dir, "train", "0.jsonl")
    content = path.read_bytes()
    expected, offset = [], 0
    for number, line in enumerate(content.split(b"\n")[:-1], start=1):
        if line.strip():
            expected.append((offset, offset + len(line), number))
        offset += len(line) + 1
    assert list(zip(index.starts, index.ends, index.lines, strict=True)) == expected
    assert index.partial_tail_bytes == 0 and len(index) == 3


def test_thousands_of_steps_list_in_numeric_order(data_dir):
    train = data_dir / "train"
    train.mkdir()
    steps = list(range(0, 6000, 2))
    for step in reversed(steps):
        (train / f"{step}.jsonl").write_bytes(b"")
    listed = Catalog(data_dir).steps("train")
    assert [s.step for s in listed] == steps
    assert [s.filename for s in listed[:3]] == ["0.jsonl", "2.jsonl", "4.jsonl"]


def test_data_dir_removed_after_opening_is_unavailable(write_step, data_dir):
    """Not an unknown bucket (404): the whole directory is gone, which the web answers with 503."""
    import shutil

    from rollouts.store import Unavailable

    write_step("", 0, [sample(0)])
    catalog = Catalog(data_dir)
    shutil.rmtree(data_dir)
    with pytest.raises(Unavailable, match="'data' is missing or cannot be read"):
        catalog.steps("default")


def test_concurrent_first_opens_build_the_index_once(write_step, data_dir, monkeypatch):
    import threading

    from rollouts.store.index import StepIndex

    write_step("train", 0, [sample(i) for i in range(50)])
    catalog = Catalog(data_dir)
    builds = []
    real_build = StepIndex.build.__func__  # type: ignore[attr-defined]

    def counting_build(cls, path, name, records=None):
        builds.append(name)
        return real_build(cls, path, name, records)

    monkeypatch.setattr(StepIndex, "build", classmethod(counting_build))
    barrier = threading.Barrier(8)
    opened = []

    def open_it():
        barrier.wait()
        opened.append(catalog.open_step("train", "0.jsonl"))

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert builds == ["train/0.jsonl"]
    assert len({id(index) for index in opened}) == 1


def test_indexes_live_in_a_byte_limited_cache_and_are_evicted(write_step, data_dir):
    from rollouts.cache import ByteLimitedCache

    for step in (0, 1):
        write_step("train", step, [sample(i) for i in range(3)])
    cache = ByteLimitedCache("test-evict", {"OPTIONS": {"MAX_ENTRIES": 1}})
    cache.clear()
    cache.reset_stats()
    catalog = Catalog(data_dir, cache)
    first = catalog.open_step("train", "0.jsonl")
    assert cache.stats()["entries"] == 1
    assert cache.stats()["bytes"] >= first.cache_nbytes()
    catalog.open_step("train", "1.jsonl")
    assert cache.stats()["evictions"] == 1
    assert catalog.open_step("train", "0.jsonl") is not first  # rebuilt after eviction


def test_cache_accounting_follows_the_columns(write_step, data_dir):
    from rollouts.cache import ByteLimitedCache

    write_step("train", 0, [sample(i) for i in range(200)])
    cache = ByteLimitedCache("test-account", {})
    cache.clear()
    catalog = Catalog(data_dir, cache)
    index = catalog.open_step("train", "0.jsonl")
    key_overhead = cache.stats()["bytes"] - index.cache_nbytes()
    assert 0 < key_overhead < 100
    catalog.columns(index)
    assert index.columns is not None
    assert index.columns.nbytes() >= 200 * 8
    assert cache.stats()["bytes"] == index.cache_nbytes() + key_overhead
    assert cache.stats()["entries"] == 1


def test_a_selection_reads_back_from_its_own_query_parameters():
    from rollouts.store import Selection, ValueRange

    chosen = Selection(
        "reward", True, (("status", "truncated"), ("dataset", "gsm8k")), ValueRange("x", 0.0, 1.0)
    )
    params = chosen.params()
    assert params == {
        "sort": "reward",
        "order": "desc",
        "status": "truncated",
        "dataset": "gsm8k",
        "range": "x:[0,1)",
    }
    again = Selection.from_params(params)
    assert (again.sort, again.descending, again.range) == ("reward", True, chosen.range)
    assert again.filter_values == chosen.filter_values
    assert Selection.from_params({"sort": "position"}).is_file_order
    assert chosen.params(page=2) == {**params, "page": "2"}
    assert "range" not in chosen.params(range="")  # an empty extra drops the parameter


def test_a_selection_names_its_sort_as_the_terminal_ui_shows_it():
    from rollouts.store import Selection

    assert (Selection().sort_label, Selection().sort_key) == ("file order", "")
    by_reward = Selection().sorted_by("reward:desc")
    assert (by_reward.sort_label, by_reward.sort_key) == ("reward desc", "reward:desc")
    assert by_reward.sorted_by("").is_file_order
    filtered = by_reward.filtered("dataset", "math").filtered("dataset", "code")
    assert filtered.filters == (("dataset", "code"),)
    assert filtered.filtered("dataset", None).filters == ()


def test_rank_of_finds_a_position_in_any_ordering():
    from array import array

    from rollouts.store import rank_of

    assert rank_of(range(5), 3) == 3
    assert rank_of(range(5), 5) is None
    assert rank_of(array("q", [4, 2, 9]), 9) == 2
    assert rank_of(array("q", [4, 2, 9]), 3) is None
