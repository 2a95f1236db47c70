"""The flags (store/flags.py) on labelled steps (tests/support/flag_fixtures.py): each failure
and its near-misses get exactly the flags they should, with reasons that state their numbers."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from rollouts.checks import check_settings
from rollouts.conf import conf
from rollouts.store import (
    DEFAULT_RULES,
    FLAG_BIT,
    FLAGS,
    Catalog,
    FileIdentity,
    FlagRules,
    flag_rates,
    format_number,
    row_flags,
)
from rollouts.store.columns import Columns
from rollouts.store.disk.cache import DiskCache
from rollouts.store.disk.format import FORMAT_VERSION
from rollouts.store.flags import LENGTH_MIN_IQR, flag_context, flag_marks
from rollouts.store.jsonio import decode_line
from rollouts.store.stats import step_stats
from tests.support import flag_fixtures as fx
from tests.support.data import relax_line

STEPS = {step.name: step for step in fx.all_steps()}


def columns_of(step: fx.Step, lines: list[str] | None = None) -> Columns:
    columns = Columns()
    for line in lines if lines is not None else [relax_line(s.record) for s in step.samples]:
        columns.append(decode_line(line.encode()))
    columns.pad()
    return columns


def judged(step: fx.Step, rules: FlagRules = DEFAULT_RULES) -> list[list[dict[str, str]]]:
    columns = columns_of(step)
    context = flag_context(columns, set(), rules)
    return [row_flags(columns, r, context, rules) for r in range(columns.rows)]


def flags_by_sample(step_name: str) -> dict[str, dict[str, str]]:
    step = STEPS[step_name]
    return {
        s.name: {f["name"]: f["reason"] for f in flags}
        for s, flags in zip(step.samples, judged(step), strict=True)
    }


CASES = [(step.name, s.name) for step in STEPS.values() for s in step.samples]


@pytest.mark.parametrize(("step_name", "sample_name"), CASES, ids=[f"{a}: {b}" for a, b in CASES])
def test_each_sample_gets_exactly_its_flags(step_name, sample_name):
    sample = next(s for s in STEPS[step_name].samples if s.name == sample_name)
    got = flags_by_sample(step_name)[sample_name]
    # A known miss gets what the rules can tell (docs/performance.md says why), not its label.
    wanted = sample.expected if sample.known is None else sample.known
    assert list(got) == [name for name in FLAGS if name in wanted]
    assert all(got.values()), "every flag states a reason"


# -- reasons, with the numbers the fixtures were built with ------------------------------------
def test_a_loop_s_reason_is_its_cycle_and_repeats_as_built():
    step = STEPS["repeats"]
    reasons = flags_by_sample("repeats")
    loops = [s for s in step.samples if s.loop is not None]
    assert len(loops) == 3
    for s in loops:
        assert s.loop is not None
        cycle, repeats = s.loop
        assert (
            f"ends in a {cycle}-character cycle repeated {repeats} times"
            in (reasons[s.name]["repeats"])
        )


def test_repeated_sentences_state_how_many_distinct_and_the_most():
    name = "mostly sentences repeated in the middle, then an answer"
    reason = flags_by_sample("repeats")[name]["repeats"]
    distinct, times = len(fx.REPEATED_MIDDLE), 10  # as built: each of the three, ten times
    assert f"is {distinct} sentence(s) that occur 3 times or more (one {times} times)" in reason
    response = next(s for s in STEPS["repeats"].samples if s.name == name).record["response"]
    # Each sentence counts without the ". " that ends it.
    share = times * sum(len(m) - 2 for m in fx.REPEATED_MIDDLE) / len(response)
    stated_match = re.match(r"([\d.]+)% of the text", reason)
    assert stated_match is not None
    stated = float(stated_match.group(1)) / 100
    assert stated == pytest.approx(share, abs=0.005)


def test_mixed_script_reasons_count_the_second_script():
    reasons = flags_by_sample("mixed_script")
    to_chinese = reasons["English reasoning that switches to Chinese prose"]["mixed_script"]
    characters = sum("\u4e00" <= c <= "\u9fff" for c in fx.CHINESE_TAIL)
    assert f"of the prose is not Latin ({characters} CJK characters; the limit is 5%)" in (
        to_chinese
    )
    to_english = reasons["Chinese reasoning that switches to English prose"]["mixed_script"]
    words = len(re.findall(r"[A-Za-z]{2,}", fx.ENGLISH_TAIL))
    assert f"of the prose is not CJK ({words} Latin words; the limit is 5%)" in to_english
    to_korean = reasons["Chinese reasoning that switches to Korean"]["mixed_script"]
    korean_words = len(fx.KOREAN_TAIL.split())  # spaced words of Hangul syllables
    assert f"of the prose is not CJK ({korean_words} Hangul words; the limit is 5%)" in to_korean


def test_no_answer_states_how_many_of_the_step_answered():
    step = STEPS["no_answer"]
    responses = [s.record["response"] for s in step.samples]
    answered = sum("\\boxed{" in r or "<answer>" in r for r in responses)
    reason = flags_by_sample("no_answer")["no \\boxed{} among samples that have one"]["no_answer"]
    share = round(100 * answered / len(responses), 1)
    assert reason == (
        f"no \\boxed{{}} or <answer> found; {answered} of the step's {len(responses)} judged "
        f"samples have one ({share:g}%)"
    )


def test_reward_disagrees_states_the_reward():
    reasons = flags_by_sample("reward_disagrees")
    assert reasons["reward 1, wrong answer"]["reward_disagrees"] == (
        "reward 1 says right (≥ 0.5) but the answer does not match the label"
    )
    assert reasons["reward 0, right answer"]["reward_disagrees"] == (
        "reward 0 says wrong (< 0.5) but the answer matches the label"
    )


def test_empty_and_cut_reasons():
    reasons = flags_by_sample("empty_cut")
    for name in ("empty string", "only whitespace", "null"):
        assert reasons[name] == {"empty": "the response is missing, null or only whitespace"}
    cut = next(s for s in STEPS["empty_cut"].samples if s.name == "cut at the length limit")
    assert reasons[cut.name]["cut"] == (
        f"cut at the length limit (status truncated, {cut.record['response_length']} tokens)"
    )


def test_an_outlier_s_reason_states_the_step_s_fence():
    step = STEPS["outlier_length"]
    lengths = sorted(s.record["response_length"] for s in step.samples)
    q1 = lengths[math.ceil(len(lengths) / 4) - 1]
    q3 = lengths[math.ceil(len(lengths) * 3 / 4) - 1]
    high = q3 + 3 * max(q3 - q1, q3 * LENGTH_MIN_IQR)
    outlier = next(s for s in step.samples if s.expected)
    reason = flags_by_sample("outlier_length")[outlier.name]["outlier_length"]
    assert reason == (
        f"response_length {outlier.record['response_length']} is above the step's fence "
        f"{format_number(high)} (quartiles {q1} and {q3}, 3 x IQR, the IQR at least 50% of "
        "the third quartile)"
    )


def test_the_fence_of_near_equal_lengths_needs_a_real_outlier():
    """Lengths 198-202: a 230-token response is not an outlier, a 1,000-token one is."""
    step = fx.Step("near-equal")
    for j, length in enumerate([198, 199, 200, 200, 201, 202, 230, 1000]):
        step.add(f"{length}", fx.healthy(j), response_length=length)
    flagged = [s.name for s, flags in zip(step.samples, judged(step), strict=True) if flags]
    assert flagged == ["1000"]


def test_cut_and_empty_responses_do_not_move_the_length_fence():
    step = fx.Step("fence")
    step.filler(8)
    base = flag_context(columns_of(step), set(), DEFAULT_RULES)["length_fence"]
    for j in range(6):
        step.add(f"cut {j}", fx.derivation(j, 30), status="truncated", response_length=8192)
        step.add(f"empty {j}", "", response_length=0)
    assert flag_context(columns_of(step), set(), DEFAULT_RULES)["length_fence"] == base


# -- a step's counts and rates, and the marks the filter uses -----------------------------------
@pytest.mark.parametrize("step_name", list(STEPS))
def test_the_step_s_counts_and_rates_are_its_samples_flags(step_name):
    step = STEPS[step_name]
    columns = columns_of(step)
    stats = step_stats(columns, set())
    expected = Counter(
        name for s in step.samples for name in (s.expected if s.known is None else s.known)
    )
    assert stats["flags"]["counts"] == {name: expected[name] for name in FLAGS}
    rates = flag_rates(stats)
    assert rates == {name: expected[name] / len(step.samples) for name in FLAGS}


RULE_SETS = [
    DEFAULT_RULES,
    FlagRules(loop_repeats=100, repeated_share=0.9, script_share=0.3, length_fence=1.0),
    FlagRules(loop_repeats=3, loop_chars=40, repeated_share=0.2, answer_share=1.0),
    FlagRules(reward_right_at=0.9, script_units=3, script_share=0.01, length_fence=0.5),
]


@pytest.mark.parametrize("rules", RULE_SETS)
@pytest.mark.parametrize("step_name", list(STEPS))
def test_flag_marks_and_row_flags_judge_alike(step_name, rules):
    step = STEPS[step_name]
    lines = [relax_line(s.record) for s in step.samples]
    lines.insert(2, "{not json\n")  # an unreadable line among them
    columns = Columns()
    for line in lines:
        try:
            decoded = decode_line(line.encode())
        except ValueError:
            decoded = None
        columns.append(decoded)
    columns.pad()
    invalid = {2}
    context = flag_context(columns, invalid, rules)
    marks = flag_marks(columns, invalid, context, rules)
    for r in range(columns.rows):
        names = [f["name"] for f in row_flags(columns, r, context, rules)]
        assert [name for name in FLAGS if marks[r] & FLAG_BIT[name]] == names, r


# -- the thresholds -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"loop_repeat": 5}, "unknown threshold(s) 'loop_repeat'"),
        ({"loop_repeats": True}, "loop_repeats must be a number, got True"),
        ({"script_share": "0.1"}, "script_share must be a number"),
        ({"repeated_share": math.nan}, "repeated_share must be finite"),
        ({"length_fence": math.inf}, "length_fence must be finite"),
        ({"loop_repeats": 2}, "loop_repeats must be at least 3"),
        ({"loop_chars": 10}, "loop_chars must be at least 40"),
        ({"script_units": 1}, "script_units must be at least 3"),
        ({"length_fence": 0.1}, "length_fence must be at least 0.5"),
        ({"answer_share": -0.5}, "answer_share must be at least 0"),
        ({"repeated_share": 1.5}, "repeated_share is a share: at most 1"),
        ({"answer_share": 2}, "answer_share is a share: at most 1"),
        ([("loop_repeats", 5)], "must be a dict of thresholds"),
    ],
)
def test_unusable_thresholds_say_what_is_wrong(values, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        FlagRules.from_mapping(values)


def test_usable_thresholds_override_the_defaults():
    rules = FlagRules.from_mapping({"loop_repeats": 8, "script_share": 0.2})
    assert (rules.loop_repeats, rules.script_share) == (8, 0.2)
    assert rules.loop_chars == DEFAULT_RULES.loop_chars
    assert FlagRules.from_mapping(None) == DEFAULT_RULES


@pytest.mark.parametrize("raw", [{"loop_repeats": True}, {"nope": 1}, {"script_share": 2}, "x"])
def test_an_unusable_setting_warns_w017_and_the_flags_keep_their_defaults(settings, data_dir, raw):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.ROLLOUTS_FLAGS = raw
    warnings = [w for w in check_settings() if w.id == "rollouts.W017"]
    assert len(warnings) == 1 and "ROLLOUTS_FLAGS is not used" in warnings[0].msg
    assert conf.FLAGS == DEFAULT_RULES
    settings.ROLLOUTS_FLAGS = {"loop_repeats": 8}
    assert not [w for w in check_settings() if w.id == "rollouts.W017"]
    assert conf.FLAGS.loop_repeats == 8


# -- the column pass: lenient lines, the disk cache, re-judging ----------------------------------
def test_a_lenient_line_is_measured_as_a_strict_one():
    samples = [s for step in STEPS.values() for s in step.samples]
    strict = [relax_line(s.record) for s in samples]
    lenient = [relax_line({**s.record, "reward": math.nan}) for s in samples]  # bare NaN
    assert not decode_line(lenient[0].encode()).strict and decode_line(strict[0].encode()).strict
    a, b = columns_of(fx.Step("strict"), strict), columns_of(fx.Step("lenient"), lenient)
    assert a.text_bits == b.text_bits
    assert a.measures == b.measures
    assert len(a.measures) >= 6  # the loops, the repeats and the scripts were measured


@pytest.fixture
def cached(write_step, tmp_path: Path) -> tuple[Path, DiskCache, Catalog]:
    lines = [relax_line(s.record) for s in STEPS["repeats"].samples]
    lines += [relax_line(s.record) for s in STEPS["mixed_script"].samples]
    path = write_step("train", 0, lines)
    disk = DiskCache(tmp_path / "cache")
    catalog = Catalog(tmp_path / "data", disk=disk)
    catalog.stats(catalog.open_step("train", "0.jsonl"))
    return path, disk, catalog


def test_the_disk_cache_keeps_the_measures(cached, tmp_path):
    path, disk, first = cached
    columns = first.open_step("train", "0.jsonl").columns
    loaded = disk.load(path.resolve(), FileIdentity.of(path.stat()))
    assert loaded is not None
    assert loaded.columns.text_bits == columns.text_bits
    assert loaded.columns.measures == columns.measures
    assert {"loop", "repeat", "script"} <= {k for m in columns.measures.values() for k in m}
    restarted = Catalog(tmp_path / "data", disk=disk)
    index = restarted.open_step("train", "0.jsonl")
    assert [restarted.flags_of(index, r) for r in range(len(index))] == [
        first.flags_of(first.open_step("train", "0.jsonl"), r) for r in range(len(index))
    ]


def damage_measures(entry: dict[str, Any], how: str) -> None:
    row = next(iter(entry["measures"]))
    if how == "a share above 1":
        entry["measures"][row]["repeat"] = [1.5, 1, 3]
    elif how == "a cycle of 0 characters":
        entry["measures"][row]["loop"] = [0, 5]
    elif how == "an unknown measure":
        entry["measures"][row]["mood"] = [1]
    elif how == "a measure past the last row":
        entry["measures"][entry["rows"] + 3] = {"loop": [6, 10]}
    elif how == "text bits one short":
        entry["text_bits"] = entry["text_bits"][:-1]
    elif how == "a script of the wrong shape":
        entry["measures"][row]["script"] = [0.5, "Latin"]
    elif how == "the measures left out":
        del entry["text_bits"], entry["measures"]


@pytest.mark.parametrize(
    "how",
    [
        "a share above 1",
        "a cycle of 0 characters",
        "an unknown measure",
        "a measure past the last row",
        "text bits one short",
        "a script of the wrong shape",
        "the measures left out",
    ],
)
def test_a_damaged_measures_entry_is_a_miss(cached, how):
    path, disk, _ = cached
    assert disk.load(path.resolve(), FileIdentity.of(path.stat())) is not None  # sound before
    (entry_path,) = (disk_path for disk_path in Path(disk.directory).glob("*.msgpack"))
    raw = msgspec.msgpack.decode(entry_path.read_bytes())
    assert raw["version"] == FORMAT_VERSION
    damage_measures(raw, how)
    entry_path.write_bytes(msgspec.msgpack.encode(raw))
    assert disk.load(path.resolve(), FileIdentity.of(path.stat())) is None


def test_an_entry_of_the_format_before_is_a_quiet_miss(cached, caplog):
    """A viewer upgraded over a disk cache of format 3 (no measures) reads each entry as another
    version's (a miss, then rewritten), not as a damaged one (a warning per step)."""
    path, disk, _ = cached
    (entry_path,) = (disk_path for disk_path in Path(disk.directory).glob("*.msgpack"))
    raw = msgspec.msgpack.decode(entry_path.read_bytes())
    del raw["text_bits"], raw["measures"]
    raw["version"] = FORMAT_VERSION - 1
    entry_path.write_bytes(msgspec.msgpack.encode(raw))
    with caplog.at_level("INFO", logger="rollouts"):
        assert disk.load(path.resolve(), FileIdentity.of(path.stat())) is None
    assert caplog.records == []


def test_new_thresholds_re_judge_without_re_reading(cached, monkeypatch):
    _, _, catalog = cached
    index = catalog.open_step("train", "0.jsonl")
    before = [catalog.flags_of(index, r) for r in range(len(index))]
    looped = [r for r, flags in enumerate(before) if any(f["name"] == "repeats" for f in flags)]
    assert looped

    def no_reading(*args: Any) -> None:
        raise AssertionError("a response was measured again")

    monkeypatch.setattr("rollouts.store.columns.measure_response", no_reading)
    catalog.flag_rules = FlagRules(loop_repeats=1000, repeated_share=1.0, script_share=1.0)
    after = [catalog.flags_of(index, r) for r in range(len(index))]
    assert not any(f["name"] in ("repeats", "mixed_script") for flags in after for f in flags)
    assert catalog.stats(index)["flags"]["counts"]["repeats"] == 0
    catalog.flag_rules = DEFAULT_RULES
    assert [catalog.flags_of(index, r) for r in range(len(index))] == before
