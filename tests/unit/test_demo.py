"""The demo generator: deterministic, laid out like a Relax run, and realistic enough to exercise
every formatting feature of the viewer. Expectations come from the arguments and from
DATA_FORMAT.md, never from a snapshot of the output."""

from __future__ import annotations

import json
import math
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from rollouts import demo
from rollouts.store import Catalog, find_runs, reading
from rollouts.store.stats import step_stats

STEPS, EVAL_EVERY, SAMPLES, GROUP = 12, 4, 64, 8  # the write_demo defaults

# Writer order from DATA_FORMAT.md; a record's keys must be a subsequence of it.
KEY_ORDER = [
    "rollout_id", "sample_index", "prompt", "response", "reward",
    "prompt_length", "response_length", "total_length",
    "prompt_token_count", "response_token_count", "total_token_count",
    "image_count", "image_token_count", "multimodal_token_count",
    "agent_turns", "status", "group_index",
    "response_token_ids", "response_rollout_log_probs", "label",
    "multimodal_inputs", "multimodal_train_inputs", "dataset",
]  # fmt: skip
REQUIRED = [
    "rollout_id", "sample_index", "prompt", "response", "reward",
    "prompt_length", "response_length", "total_length",
    "prompt_token_count", "response_token_count", "total_token_count",
    "agent_turns", "status", "group_index", "label",
]  # fmt: skip
END_TOKENS = ("<|im_end|>", "<|endoftext|>")
LOOP_TIMES = (40, 60)  # how many times a looping demo response says its last sentence
STEP_NAME = re.compile(r"^\d+\.jsonl$")


def loop_times(text: str) -> int:
    """How many times the text's last sentence (". "-ended) is said in a row at its end."""
    last = text[text.rstrip().rfind(". ", 0, len(text.rstrip()) - 1) + 2 :]
    times = 0
    while last and text.endswith(last * (times + 1)):
        times += 1
    return times


def repeated_sentences(text: str) -> dict[str, int]:
    """The sentences and lines of 16 characters or more said three times or more (the
    `repeats` flag's pieces: cut after ". ", "? ", "! ", a line end, and the fullwidth full
    stop, exclamation and question marks)."""
    pieces = re.split(r"(?<=[.?!])\s+|\n|(?<=[\u3002\uff01\uff1f])", text)
    counts: dict[str, int] = defaultdict(int)
    for piece in pieces:
        if len(piece.strip()) >= 16:
            counts[piece.strip()] += 1
    return {piece: n for piece, n in counts.items() if n >= 3}


def read_lines(path: Path) -> list[tuple[str, dict[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as f:
        return [(line, json.loads(line)) for line in f]


def step_files(bucket: Path) -> dict[int, Path]:
    return {int(p.stem): p for p in bucket.iterdir() if STEP_NAME.match(p.name)}


def acc(reward: Any) -> float | None:
    value = reward["acc"] if isinstance(reward, dict) else reward
    return None if value is None or math.isnan(value) else float(value)


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.write_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def train(run: Path) -> dict[int, list[dict[str, Any]]]:
    return {s: [r for _, r in read_lines(p)] for s, p in step_files(run / "train").items()}


@pytest.fixture(scope="module")
def evals(run: Path) -> dict[int, list[dict[str, Any]]]:
    return {s: [r for _, r in read_lines(p)] for s, p in step_files(run / "eval").items()}


@pytest.fixture(scope="module")
def records(train: dict, evals: dict) -> list[dict[str, Any]]:
    return [r for step in (*train.values(), *evals.values()) for r in step]


def test_same_arguments_write_identical_bytes_and_rewriting_is_idempotent(tmp_path: Path) -> None:
    a = demo.write_demo(tmp_path / "a", train_steps=3, samples_per_step=16, seed=7)
    b = demo.write_demo(tmp_path / "b", train_steps=3, samples_per_step=16, seed=7)
    first = tree_bytes(a)
    assert first == tree_bytes(b)
    demo.write_demo(tmp_path / "a", train_steps=3, samples_per_step=16, seed=7)
    assert tree_bytes(a) == first


def test_different_seed_writes_different_step_files(tmp_path: Path) -> None:
    a = demo.write_demo(tmp_path / "a", train_steps=2, samples_per_step=16, seed=0)
    b = demo.write_demo(tmp_path / "b", train_steps=2, samples_per_step=16, seed=1)
    for rel in ("train/0.jsonl", "train/1.jsonl", "eval/0.jsonl"):
        assert (a / rel).read_bytes() != (b / rel).read_bytes()


def test_layout_has_every_train_step_sparse_eval_ids_and_non_step_files(tmp_path: Path) -> None:
    out = demo.write_demo(tmp_path, train_steps=7, eval_every=3, samples_per_step=8)
    assert out == tmp_path / "rollout_result"
    assert sorted(step_files(out / "train")) == list(range(7))
    assert sorted(step_files(out / "eval")) == [0, 3, 6]
    extra = {p.name for p in (out / "train").iterdir() if not STEP_NAME.match(p.name)}
    assert {"notes.jsonl", "20.pending.json"} <= extra
    assert {p.name for p in out.iterdir()} == {"train", "eval"}


def test_default_demo_stays_small(run: Path) -> None:
    assert sum(len(b) for b in tree_bytes(run).values()) < 15_000_000


def test_every_line_is_exactly_what_json_dumps_writes_with_keys_in_writer_order(run: Path) -> None:
    for bucket in ("train", "eval"):
        for step, path in step_files(run / bucket).items():
            lines = read_lines(path)
            assert lines, path
            for line, rec in lines:
                assert isinstance(rec, dict)
                assert line == json.dumps(rec, ensure_ascii=False) + "\n"
                assert rec["rollout_id"] == step
                assert set(REQUIRED) <= rec.keys() <= set(KEY_ORDER)
                assert list(rec) == [k for k in KEY_ORDER if k in rec]
                assert ("dataset" in rec) == (bucket == "eval")


def test_lengths_are_consistent_and_token_arrays_match_response_length(records: list) -> None:
    with_log_probs = 0
    for r in records:
        n = r["response_length"]
        assert r["total_length"] == r["prompt_length"] + n == r["total_token_count"]
        assert (r["prompt_token_count"], r["response_token_count"]) == (r["prompt_length"], n)
        assert len(r["response_token_ids"]) == n
        assert all(isinstance(t, int) for t in r["response_token_ids"])
        if "response_rollout_log_probs" in r:
            with_log_probs += 1
            assert len(r["response_rollout_log_probs"]) == n
            assert all(isinstance(x, float) and x <= 0 for x in r["response_rollout_log_probs"])
    assert 0 < with_log_probs < len(records)


def test_exactly_one_nan_reward_at_the_documented_place(run: Path, records: list) -> None:
    nans = [r for r in records if isinstance(r["reward"], float) and math.isnan(r["reward"])]
    assert len(nans) == 1
    assert "dataset" not in nans[0]
    assert (nans[0]["rollout_id"], nans[0]["sample_index"]) == (min(1, STEPS - 1), 3)
    raw = b"".join(p.read_bytes() for p in (run / "train").glob("*.jsonl"))
    assert raw.count(b'"reward": NaN') == 1


def test_object_rewards_fill_the_multi_reward_step_only(train: dict) -> None:
    for step, recs in train.items():
        objects = [r["reward"] for r in recs if isinstance(r["reward"], dict)]
        if step == STEPS // 2:
            scored = [r for r in recs if r["reward"] is not None]
            assert scored and len(objects) == len(scored)
            assert all(set(o) == {"acc", "format"} for o in objects)
            assert {o["format"] for o in objects} > {1.0}
        else:
            assert objects == []


def test_edge_cases_empty_response_and_zero_and_empty_labels_are_present(
    train: dict, records: list
) -> None:
    first = train[0][0]  # the documented place of the empty response
    assert (first["response"], first["response_length"], first["status"]) == ("", 0, "aborted")
    assert first["response_token_ids"] == []
    labels = [r["label"] for r in records]
    assert any(type(label) is int and label == 0 for label in labels)
    assert "" in labels
    assert all(isinstance(label, str) or label == 0 for label in labels)


def test_statuses_mix_and_truncated_responses_are_cut_at_max_length(records: list) -> None:
    by_status: dict[str, list] = defaultdict(list)
    for r in records:
        by_status[r["status"]].append(r)
    assert set(by_status) == {"completed", "truncated", "aborted", "failed"}
    assert len(by_status["completed"]) > len(records) / 2
    assert len(by_status["failed"]) < len(by_status["aborted"]) + len(by_status["truncated"])
    for r in by_status["truncated"]:
        assert r["response_length"] == demo.MAX_RESPONSE_LENGTH
        assert not r["response"].endswith(END_TOKENS)
    assert max(r["response_length"] for r in records) == demo.MAX_RESPONSE_LENGTH
    assert all(acc(r["reward"]) == 0.0 for r in by_status["aborted"])
    assert all(r["reward"] is None for r in by_status["failed"])
    # Completed responses end with an end token, but for the ones made to end in a loop.
    unended = [r for r in by_status["completed"] if not r["response"].endswith(END_TOKENS)]
    assert all(loop_times(r["response"]) >= LOOP_TIMES[0] for r in unended)


def test_reasoning_math_and_answer_markup_appear_in_responses(records: list) -> None:
    text = [r["response"] for r in records]
    for needle in ("<think>", "</think>", "\\boxed{", "\\frac{", "<answer>", *END_TOKENS):
        assert any(needle in t for t in text), needle
    opened = [r for r in records if isinstance(r["prompt"], str)]
    opened = [r for r in opened if r["prompt"].endswith("<think>\n")]
    done = [r for r in opened if r["status"] == "completed"]
    done = [r for r in done if loop_times(r["response"]) < LOOP_TIMES[0]]  # loops never close
    assert done
    assert all("</think>" in r["response"] and "<think>" not in r["response"] for r in done)


def test_cjk_and_emoji_appear_in_prompts_and_responses(train: dict, records: list) -> None:
    cjk = re.compile(r"[\u4e00-\u9fff]")
    # In train too, not only in the eval dataset whose name is Chinese.
    questions = [str(r["prompt"]).split("<|im_start|>user\n")[-1] for r in train[0]]
    assert any(cjk.search(q) for q in questions)
    assert any(cjk.search(r["response"]) for r in records)
    assert any(any(ord(c) >= 0x1F300 for c in r["response"]) for r in records)


def test_agent_prompts_carry_tool_schemas_calls_and_responses(records: list) -> None:
    agents = [r for r in records if isinstance(r["prompt"], str) and "<tool_call>" in r["prompt"]]
    assert agents
    for r in agents:
        prompt = r["prompt"]
        tools = prompt.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
        assert all(json.loads(line)["type"] == "function" for line in tools.splitlines())
        calls = re.findall(r"<tool_call>\n(.*?)\n</tool_call>", prompt)
        assert r["agent_turns"] == 1 + len(calls)
        assert all({"name", "arguments"} <= json.loads(c).keys() for c in calls)
        assert prompt.count("<tool_response>") == len(calls)
    assert any(r["agent_turns"] > 2 for r in agents)
    agent_ids = {id(r) for r in agents}
    assert all(r["agent_turns"] == 1 for r in records if id(r) not in agent_ids)


def test_vision_prompts_match_their_multimodal_summaries(records: list) -> None:
    pads = "<|vision_start|>" + "<|image_pad|>" * demo.IMAGE_TOKENS + "<|vision_end|>"
    vision = [r for r in records if "image_count" in r]
    assert vision
    for r in vision:
        assert r["prompt"].count(pads) == r["image_count"]
        tokens = r["prompt"].count("<|image_pad|>")
        assert r["image_token_count"] == r["multimodal_token_count"] == tokens
        assert len(r["multimodal_inputs"]["images"]) == r["image_count"]
        assert r["multimodal_inputs"]["images"][0].startswith("<PIL.Image.Image image mode=RGB")
        assert "pixel_values" in r["multimodal_train_inputs"]
    rest = [r for r in records if "image_count" not in r]
    assert not any("<|image_pad|>" in str(r["prompt"]) or "multimodal_inputs" in r for r in rest)


def test_some_prompts_are_message_lists(records: list) -> None:
    lists = [r["prompt"] for r in records if isinstance(r["prompt"], list)]
    assert lists
    assert all(m.keys() == {"role", "content"} for p in lists for m in p)
    assert all(isinstance(r["prompt"], (str, list)) for r in records)


def test_train_groups_share_prompt_and_label_and_each_step_has_some_without_signal(
    train: dict,
) -> None:
    for recs in train.values():
        equal = varied = 0
        assert [r["sample_index"] for r in recs] == list(range(SAMPLES))
        groups: dict[int, list] = defaultdict(list)
        for r in recs:
            assert r["group_index"] == r["sample_index"] // GROUP
            groups[r["group_index"]].append(r)
        assert len(groups) == SAMPLES // GROUP
        for members in groups.values():
            assert len({json.dumps(m["prompt"]) for m in members}) == 1
            assert len({json.dumps(m["label"]) for m in members}) == 1
            rewards = {acc(m["reward"]) for m in members} - {None}
            equal += len(rewards) == 1
            varied += len(rewards) > 1
        assert equal and varied


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mean_reward_rises_from_first_to_last_step(tmp_path: Path, seed: int) -> None:
    out = demo.write_demo(tmp_path, train_steps=6, eval_every=6, seed=seed)

    def mean(step: int) -> float:
        values = [acc(r["reward"]) for _, r in read_lines(out / "train" / f"{step}.jsonl")]
        scored = [v for v in values if v is not None]
        return sum(scored) / len(scored)

    first, last = mean(0), mean(5)
    assert first < 0.4 < 0.5 < last
    assert last - first > 0.25


def test_eval_files_mix_datasets_and_restart_sample_index(evals: dict) -> None:
    assert sorted(evals) == list(range(0, STEPS, EVAL_EVERY))
    for recs in evals.values():
        by_dataset: dict[str, list] = defaultdict(list)
        for r in recs:
            by_dataset[r["dataset"]].append(r)
        assert len(by_dataset) >= 3
        assert any(not name.isascii() for name in by_dataset)
        grouped = ungrouped = 0
        for members in by_dataset.values():
            assert [r["sample_index"] for r in members] == list(range(len(members)))
            indexes = {r["group_index"] for r in members}
            ungrouped += indexes == {None}
            grouped += None not in indexes
            for g in indexes - {None}:
                same = [r for r in members if r["group_index"] == g]
                assert len({r["prompt"] for r in same}) == 1
        assert grouped and ungrouped


def test_make_sample_alone_builds_an_eval_record_without_token_ids() -> None:
    rec = demo.make_sample(
        random.Random(5), step=3, sample_index=2, group_index=None, kind="eval",
        dataset="中文数学", token_ids=False,
    )  # fmt: skip
    assert (rec["rollout_id"], rec["sample_index"], rec["group_index"]) == (3, 2, None)
    assert list(rec)[-1] == "dataset" and rec["dataset"] == "中文数学"
    assert "response_token_ids" not in rec and "response_rollout_log_probs" not in rec
    again = demo.make_sample(
        random.Random(5), step=3, sample_index=2, group_index=None, kind="eval",
        dataset="中文数学", token_ids=False,
    )  # fmt: skip
    assert again == rec


def test_write_step_writes_json_dumps_lines_and_returns_their_byte_count(tmp_path: Path) -> None:
    recs: list[dict[str, Any]] = [
        {"rollout_id": 1, "reward": math.nan, "response": "答案 🎉"},
        {"label": 0},
    ]
    path = tmp_path / "sub" / "1.jsonl"
    written = demo.write_step(path, recs)
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).encode()
    assert path.read_bytes() == expected
    assert written == len(expected)
    demo.write_step(path, recs[1:])
    assert path.read_bytes() == expected.split(b"\n", 1)[1]


def test_write_big_step_streams_past_the_target_with_full_token_arrays(tmp_path: Path) -> None:
    target = 2_000_000
    path = tmp_path / "0.jsonl"
    count = demo.write_big_step(path, target, seed=3, step=9)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    assert len(lines) == count
    assert len(data) >= target > len(data) - len(lines[-1])
    for raw in lines:
        assert raw.endswith(b"\n") and len(raw) > 50_000
        line = raw.decode("utf-8")
        rec = json.loads(line)
        assert line == json.dumps(rec, ensure_ascii=False) + "\n"
        assert rec["rollout_id"] == 9
        assert list(rec) == [k for k in KEY_ORDER if k in rec]
        n = rec["response_length"]
        assert n > 1000
        assert len(rec["response_token_ids"]) == len(rec["response_rollout_log_probs"]) == n
    assert [json.loads(r)["sample_index"] for r in lines] == list(range(count))


def test_write_big_step_is_deterministic_per_seed(tmp_path: Path) -> None:
    demo.write_big_step(tmp_path / "a.jsonl", 300_000, seed=1)
    demo.write_big_step(tmp_path / "b.jsonl", 300_000, seed=1)
    demo.write_big_step(tmp_path / "c.jsonl", 300_000, seed=2)
    a = (tmp_path / "a.jsonl").read_bytes()
    assert a == (tmp_path / "b.jsonl").read_bytes()
    assert a != (tmp_path / "c.jsonl").read_bytes()


def test_write_demo_rejects_non_positive_sizes(tmp_path: Path) -> None:
    for name in ("train_steps", "eval_every", "samples_per_step", "group_size"):
        kwargs: dict[str, Any] = {name: 0}
        with pytest.raises(ValueError):
            demo.write_demo(tmp_path, **kwargs)
    assert not (tmp_path / "rollout_result").exists()


def test_main_writes_the_demo_and_prints_where(tmp_path: Path, capsys: Any) -> None:
    args = ["--steps", "3", "--samples", "16", "--seed", "4", "--no-scalars"]
    assert demo.main([str(tmp_path), *args]) == 0
    out = tmp_path / "rollout_result"
    assert str(out) in capsys.readouterr().out
    assert sorted(step_files(out / "train")) == [0, 1, 2]
    assert sum(1 for _ in (out / "train" / "2.jsonl").open()) == 16
    again = tmp_path / "again"
    demo.write_demo(again, train_steps=3, samples_per_step=16, seed=4)
    assert tree_bytes(out) == tree_bytes(again / "rollout_result")


# -- curves and the three demo runs ------------------------------------------------------------
# Smaller than write_demo_runs' defaults to stay fast; still more steps than reading.WINDOW past
# the plateau's early rise, and 48 samples keep the plateau within its 15 % range.
RUN_STEPS, RUN_EVERY, RUN_SAMPLES = 24, 8, 48


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="module")
def runs(runs_root: Path) -> dict[str, Path]:
    return demo.write_demo_runs(
        runs_root, train_steps=RUN_STEPS, eval_every=RUN_EVERY, samples_per_step=RUN_SAMPLES
    )


def finite(value: float | None) -> float:
    return math.nan if value is None else value


def train_stats(save: Path) -> list[dict[str, Any]]:
    catalog = Catalog(save / "rollout_result")
    stats = []
    for f in catalog.steps("train"):
        index = catalog.open_step("train", f.filename)
        stats.append(step_stats(catalog.columns(index), index.invalid))
    return stats


@pytest.fixture(scope="module")
def run_stats(runs: dict[str, Path]) -> dict[str, list[dict[str, Any]]]:
    return {name: train_stats(save) for name, save in runs.items()}


def read(stats: list[dict[str, Any]]) -> dict[str, Any]:
    # A step without a numeric reward (the object-reward step) has a mean of None: left out.
    return reading.trend_reading(
        [finite(st["reward"]["mean"]) for st in stats],
        truncation=[finite(st["truncation_rate"]) for st in stats],
        zero_signal=[finite(st["groups"]["zero_signal_share"]) for st in stats],
    )


def truncation_warned(reading: dict[str, Any]) -> bool:
    return any(w.startswith("truncation rate is rising") for w in reading["warnings"])


def test_write_demo_runs_writes_one_save_dir_per_run(runs_root: Path, runs: dict) -> None:
    assert runs == {name: runs_root / name for name in ("steady-rise", "plateau", "collapse")}
    assert find_runs(runs_root) == {name: save.resolve() for name, save in runs.items()}
    for save in runs.values():
        out = save / "rollout_result"
        assert {p.name for p in save.iterdir()} == {"rollout_result"}
        assert sorted(step_files(out / "train")) == list(range(RUN_STEPS))
        assert sorted(step_files(out / "eval")) == list(range(0, RUN_STEPS, RUN_EVERY))
        assert {"notes.jsonl", "20.pending.json"} <= {p.name for p in (out / "train").iterdir()}


def test_steady_rise_reads_rising(run_stats: dict) -> None:
    stats = run_stats["steady-rise"]
    reading = read(stats)
    assert reading["reading"] == "rising", reading
    assert not truncation_warned(reading)
    # The curve goes from 0.25 to 0.8 of the completed answers, and ~90 % complete.
    first, last = stats[0]["reward"]["mean"], stats[-1]["reward"]["mean"]
    assert first < 0.35 and last > 0.6


def test_plateau_reads_plateau_after_an_early_rise(run_stats: dict) -> None:
    stats = run_stats["plateau"]
    reading = read(stats)
    assert reading["reading"] == "plateau", reading
    assert not truncation_warned(reading)
    # 0.6 of the completed answers, and ~90 % complete; reached a quarter of the way in.
    assert 0.5 < reading["numbers"]["level"] < 0.6
    assert reading["numbers"]["noise"] > 0.5 / RUN_SAMPLES  # flat, but not a ruled line
    means = [finite(st["reward"]["mean"]) for st in stats]
    assert means[RUN_STEPS // 4] - means[0] > 0.2
    assert abs(means[RUN_STEPS // 4] - reading["numbers"]["level"]) < 0.06


def test_collapse_reads_not_rising_while_truncation_and_lengths_grow(run_stats: dict) -> None:
    stats = run_stats["collapse"]
    reading = read(stats)
    assert reading["reading"] == "not rising", reading
    assert reading["numbers"]["slope"] < 0
    assert truncation_warned(reading), reading["warnings"]
    means = [finite(st["reward"]["mean"]) for st in stats]
    peak = max(range(RUN_STEPS), key=lambda i: -math.inf if math.isnan(means[i]) else means[i])
    assert RUN_STEPS // 4 < peak < 3 * RUN_STEPS // 4  # up, then down
    # Truncated share: 6 % of the free samples until half-way, then up to 70 % of them.
    rates = [st["truncation_rate"] for st in stats]
    assert rates[0] < 0.1 and rates[-1] > 0.45
    assert max(rates[: RUN_STEPS // 2]) < 0.15
    lengths = [st["response_length"]["mean"] for st in stats]
    assert lengths[-1] > 3 * lengths[0]


def test_collapse_truncated_samples_hit_the_length_limit(runs: dict) -> None:
    truncated = 0
    for line, rec in read_lines(runs["collapse"] / "rollout_result" / "train" / "23.jsonl"):
        assert line == json.dumps(rec, ensure_ascii=False) + "\n"
        assert list(rec) == [k for k in KEY_ORDER if k in rec]
        assert len(rec["response_token_ids"]) == rec["response_length"]
        if rec["status"] == "truncated":
            truncated += 1
            assert rec["response_length"] == demo.MAX_RESPONSE_LENGTH
            assert not rec["response"].endswith(END_TOKENS)
    assert truncated > RUN_SAMPLES / 2


def test_eval_steps_follow_the_run_curve(runs: dict) -> None:
    def truncated(name: str, step: int) -> int:
        path = runs[name] / "rollout_result" / "eval" / f"{step}.jsonl"
        return sum(rec["status"] == "truncated" for _, rec in read_lines(path))

    last = max(range(0, RUN_STEPS, RUN_EVERY))
    assert truncated("collapse", last) > truncated("collapse", 0) + 5
    assert truncated("collapse", last) > truncated("plateau", last) + 5


@pytest.mark.parametrize("name", ["steady-rise", "plateau", "collapse"])
def test_every_run_keeps_the_documented_placements(runs: dict, name: str) -> None:
    train_dir = runs[name] / "rollout_result" / "train"
    steps = {s: [r for _, r in read_lines(p)] for s, p in step_files(train_dir).items()}
    nans = [
        (r["rollout_id"], r["sample_index"])
        for recs in steps.values()
        for r in recs
        if isinstance(r["reward"], float) and math.isnan(r["reward"])
    ]
    assert nans == [(1, 3)]
    for step, recs in steps.items():
        scored = [r["reward"] for r in recs if r["reward"] is not None]
        objects = [x for x in scored if isinstance(x, dict)]
        assert len(objects) == (len(scored) if step == RUN_STEPS // 2 else 0)
    first = steps[0][0]
    assert (first["response"], first["status"], first["response_token_ids"]) == ("", "aborted", [])
    labels = [r["label"] for r in steps[0]]
    assert any(type(label) is int and label == 0 for label in labels) and "" in labels
    assert steps[RUN_STEPS - 1][-1]["status"] == "failed"
    assert steps[RUN_STEPS - 1][-1]["reward"] is None


def test_curves_and_runs_are_deterministic(tmp_path: Path) -> None:
    kwargs: dict[str, Any] = {"train_steps": 3, "eval_every": 2, "samples_per_step": 16, "seed": 5}
    a = demo.write_demo_runs(tmp_path / "a", **kwargs)
    demo.write_demo_runs(tmp_path / "b", **kwargs)
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(a["collapse"]) != tree_bytes(a["plateau"])
    demo.write_demo_runs(tmp_path / "a", **kwargs)
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    # The default curve is the rise, and without steady draws it is the original demo.
    rise = demo.write_demo(tmp_path / "rise", train_steps=3, samples_per_step=16, curve="rise")
    plain = demo.write_demo(tmp_path / "plain", train_steps=3, samples_per_step=16)
    assert tree_bytes(rise) == tree_bytes(plain)


def test_write_demo_rejects_an_unknown_curve(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="curve"):
        demo.write_demo(tmp_path, curve="sideways")
    assert not (tmp_path / "rollout_result").exists()


def test_main_runs_writes_the_three_runs_and_prints_one_line_each(
    tmp_path: Path, capsys: Any
) -> None:
    # Without scalars: importing tensorboard costs the fast tier ~0.5 s (tests/e2e reads them).
    args = ["--runs", "--steps", "3", "--samples", "8", "--seed", "2", "--no-scalars"]
    assert demo.main([str(tmp_path / "cli"), *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line, name in zip(lines, ("steady-rise", "plateau", "collapse"), strict=True):
        assert name in line and str(tmp_path / "cli" / name) in line and line.endswith(" MB)")
    demo.write_demo_runs(tmp_path / "api", train_steps=3, samples_per_step=8, seed=2)
    assert tree_bytes(tmp_path / "cli") == tree_bytes(tmp_path / "api")


def test_main_curve_writes_a_single_run_of_that_curve(tmp_path: Path) -> None:
    args = ["--curve", "collapse", "--steady", "--steps", "4", "--samples", "16", "--no-scalars"]
    assert demo.main([str(tmp_path / "cli"), *args]) == 0
    api = demo.write_demo(
        tmp_path / "api", train_steps=4, samples_per_step=16, curve="collapse", steady=True
    )
    assert tree_bytes(tmp_path / "cli" / "rollout_result") == tree_bytes(api)


def test_main_refuses_runs_with_a_curve(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        demo.main([str(tmp_path), "--runs", "--curve", "plateau"])
    assert not any(tmp_path.iterdir())


# -- flags: degenerate samples placed, healthy ones not flagged ----------------------------------


def flag_counts(save: Path) -> list[dict[str, int]]:
    catalog = Catalog(save)
    counts = []
    for f in catalog.steps("train"):
        counts.append(catalog.stats(catalog.open_step("train", f.filename))["flags"]["counts"])
    return counts


def test_healthy_reasoning_says_no_sentence_three_times() -> None:
    from rollouts.demo.samples import make_reasoning

    for seed in range(20):
        rng = random.Random(seed)
        for zh in (False, True):
            text = make_reasoning(rng, zh, 400)  # as long as a truncated response
            assert repeated_sentences(text) == {}, (seed, zh)


def test_every_train_step_shows_each_flag_on_the_samples_made_to_have_it(
    run: Path, train: dict
) -> None:
    counts = flag_counts(run)
    assert len(counts) == STEPS
    flags = ("repeats", "mixed_script", "no_answer", "empty", "cut", "outlier_length")
    latest = counts[-1]
    assert all(latest[name] >= 1 for name in flags), latest
    assert latest["reward_disagrees"] == 2  # one each way
    for step, records in train.items():
        # The looping responses are the only ones with a sentence said three times, and they
        # are what the repeats flag counts: no healthy sample is flagged.
        repeating = [r for r in records if repeated_sentences(r["response"] or "")]
        looping = [r for r in records if loop_times(r["response"] or "") >= LOOP_TIMES[0]]
        assert repeating == looping
        assert len(looping) == demo.CURVES["rise"].loops(step, STEPS) == 1
        assert counts[step]["repeats"] == len(looping)
        # One English response goes on in Chinese.
        mixed = [
            r for r in records if "\\boxed{" in r["response"] and "我换一种方法" in r["response"]
        ]
        assert len(mixed) == counts[step]["mixed_script"] == 1


def test_reward_disagrees_comes_in_a_pair_one_each_way(train: dict) -> None:
    latest = train[STEPS - 1]
    disagree = [
        r
        for r in latest
        if isinstance(r["reward"], float)
        and r["status"] == "completed"
        and str(r["label"]).isdigit()
        and (found := re.findall(r"\\boxed\{(\d+)\}", r["response"]))
        and (found[-1] == r["label"]) != (r["reward"] == 1.0)
    ]
    assert sorted(r["reward"] for r in disagree) == [0.0, 1.0]


def test_the_collapse_run_s_loops_rise_until_the_reading_warns(runs: dict) -> None:
    counts = flag_counts(runs["collapse"] / "rollout_result")
    loops = [demo.CURVES["collapse"].loops(step, RUN_STEPS) for step in range(RUN_STEPS)]
    assert [c["repeats"] for c in counts] == loops
    assert loops[0] == 1 and loops[-1] == 7
    rates = [c["repeats"] / RUN_SAMPLES for c in counts]
    result = reading.trend_reading([0.5] * RUN_STEPS, flag_rates={"repeats": rates})
    assert any(w.startswith("flag repeats is rising") for w in result["warnings"]), result
    for name in ("steady-rise", "plateau"):
        assert {c["repeats"] for c in flag_counts(runs[name] / "rollout_result")} == {1}
