"""Hostile values against the training spec (issue 26, items 7 and 12): text a field refuses
(C0 and C1 controls, bidirectional overrides and isolates, lone surrogates), a value that would
be an option of the child, numbers no child can hold, a spec with NaN bounds or nested too deep
(one line, in the portal's 503 too), and a phase name cut at its stated length."""

from __future__ import annotations

import json

import pytest

from rollouts.training.manager import forget_managers
from rollouts.training.progress import MAX_PHASE_NAME, Progress
from rollouts.training.spec import SpecError
from rollouts.training.specfile import load_spec

TEXT_SPEC = """
[job]
command = ["{python}", "train.py", "--name", "{name}", "{data}", "--tag={tag}", "{out}.txt"]
[[fields]]
name = "name"
type = "string"
default = "run"
[[fields]]
name = "tag"
type = "string"
default = "x"
[[fields]]
name = "out"
type = "string"
default = "out"
[[fields]]
name = "note"
type = "string"
default = "free text, on no argument of its own"
[[fields]]
name = "data"
type = "path"
default = "data/train.jsonl"
[[fields]]
name = "steps"
type = "int"
default = 10
min = 1
max = 100000
[[fields]]
name = "seed"
type = "int"
default = 0
[[fields]]
name = "lr"
type = "float"
default = 0.001
"""

FIELD_HEAD = "[job]\ncommand = ['x', '{f}']\n[[fields]]\nname = 'f'\n"


@pytest.fixture
def spec(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(TEXT_SPEC)
    return load_spec(path)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("a\x00b", "a control character (U+0000)"),
        ("a\x1bb", "a control character (U+001B)"),
        ("a\x7fb", "a control character (U+007F)"),
        ("a\x85b", "a control character (U+0085)"),  # C1: NEL
        ("a\x9bb", "a control character (U+009B)"),  # C1: CSI, a terminal escape on its own
        ("a\u202eb", "a bidirectional control (U+202E)"),  # RIGHT-TO-LEFT OVERRIDE
        ("a\u202ab", "a bidirectional control (U+202A)"),
        ("a\u2066b", "a bidirectional control (U+2066)"),  # LEFT-TO-RIGHT ISOLATE
        ("a\u2069b", "a bidirectional control (U+2069)"),
        ("a\ud800b", "a lone surrogate (U+D800)"),
        ("a\udfffb", "a lone surrogate (U+DFFF)"),
    ],
)
def test_string_and_path_values_refuse_controls_bidi_and_surrogates(spec, text, kind):
    for name in ("note", "data"):
        assert spec.validate({name: text})[1] == {name: f"may not contain {kind}"}


def test_text_that_only_looks_unusual_is_taken(spec):
    for text in ("café", "日本語", "a\u200fb", "emoji \U0001f600", "tab-free-text"):
        assert spec.validate({"note": text})[1] == {}, text


def test_a_path_value_may_not_begin_with_a_dash(spec):
    for value in ("--help", "-", "-x/data.jsonl"):
        (message,) = spec.validate({"data": value})[1].values()
        assert "may not begin with '-'" in message and "./" in message
    assert spec.validate({"data": "./-x/data.jsonl"})[1] == {}
    assert spec.validate({"data": "data/-x.jsonl"})[1] == {}


def test_a_string_may_not_begin_with_a_dash_only_where_it_begins_an_argument(spec):
    assert spec.leading_fields() == {"name", "data", "out"}
    for name in ("name", "out"):  # "{name}" and "{out}.txt": `--help` would be an option
        (message,) = spec.validate({name: "--help"})[1].values()
        assert "may not begin with '-'" in message
    # after the spec's own text ("--tag={tag}") or on no argument at all, a dash is a value
    assert spec.validate({"tag": "--help", "note": "-1 and more"})[1] == {}
    assert spec.validate({"name": "a-b", "out": "x--y"})[1] == {}


def test_a_default_that_would_be_an_option_is_refused_at_load(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text(FIELD_HEAD + "type = 'string'\ndefault = '--verbose'\n")
    with pytest.raises(SpecError, match=r"the defaults are invalid.*may not begin with '-'"):
        load_spec(path)


def test_numbers_no_child_can_hold_are_refused_not_raised(spec):
    huge = int("9" * 400)
    assert spec.validate({"steps": huge})[1] == {"steps": "must be at most 100000"}
    assert spec.validate({"steps": -huge})[1] == {"steps": "must be at least 1"}
    (message,) = spec.validate({"seed": huge})[1].values()
    assert "64 bits" in message
    assert spec.validate({"seed": 2**63 - 1})[1] == {}
    assert "seed" in spec.validate({"seed": 2**63})[1]
    assert spec.validate({"lr": huge})[1] == {"lr": "must be a finite number"}
    assert spec.validate({"lr": "1e400"})[1] == {"lr": "must be a finite number"}
    assert spec.validate({"lr": "x"})[1] == {"lr": "must be a number"}
    assert spec.validate({"seed": "9" * 5000})[1] == {"seed": "must be a whole number"}
    # a number as text is read exactly (a float would round it to ...888)
    clean, errors = spec.validate({"seed": "1234567890123456789"})
    assert errors == {} and clean["seed"] == 1234567890123456789


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("type = 'float'\ndefault = 1.0\nmin = nan\n", "min must be a finite number"),
        ("type = 'float'\ndefault = 1.0\nmax = inf\n", "max must be a finite number"),
        ("type = 'int'\ndefault = 1\nmin = -inf\n", "min must be a finite number"),
        ("type = 'float'\ndefault = nan\n", "the default must be a finite number"),
        ("type = 'float'\ndefault = inf\n", "the default must be a finite number"),
        ("type = 'int'\ndefault = 1\nmax = " + "9" * 400 + "\n", "max must be a finite number"),
        ("type = 'int'\ndefault = 5\nmin = 10\nmax = 1\n", "min is above max"),
        ("type = 'choice'\ndefault = 'a'\nchoices = 5\n", "choices must be a list"),
        ("type = 'string'\ndefault = \"a\\u202eb\"\n", "bidirectional control"),
    ],
)
def test_a_spec_with_a_bound_or_default_no_form_can_use_is_refused_in_one_line(
    tmp_path, fields, message
):
    path = tmp_path / "spec.toml"
    path.write_text(FIELD_HEAD + fields)
    with pytest.raises(SpecError) as error:
        load_spec(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def deep_toml(tmp_path, depth=50_000):
    path = tmp_path / "deep.toml"
    path.write_text("[job]\ncommand = ['x']\nextra = " + "[" * depth + "]" * depth + "\n")
    return path


def test_a_toml_nested_50000_deep_is_one_line(tmp_path):
    with pytest.raises(SpecError) as error:
        load_spec(deep_toml(tmp_path))
    assert str(error.value) == "deep.toml is nested too deeply to be a job spec"


def test_a_spec_error_quoting_a_newline_or_an_escape_stays_one_line(tmp_path):
    path = tmp_path / "spec.toml"
    path.write_text('[job]\ncommand = ["x"]\n[[metrics]]\nkey = "a\\nb\\u001b[2J"\ndirection = 5\n')
    with pytest.raises(SpecError) as error:
        load_spec(path)
    text = str(error.value)
    assert "direction" in text and "\n" not in text and "\x1b" not in text
    assert "a\\u000ab\\u001b[2J" in text


def test_the_portal_answers_503_with_the_deep_spec_s_one_line(client, settings, tmp_path):
    settings.ROLLOUTS_TRAIN_SPEC = str(deep_toml(tmp_path))
    settings.ROLLOUTS_TRAIN_ACCESS = "rollouts.access.allow_all"
    forget_managers()
    try:
        response = client.get("/portal/rollouts/api/train/schema")
    finally:
        forget_managers()
    assert response.status_code == 503
    assert json.loads(response.content)["message"] == (
        "deep.toml is nested too deeply to be a job spec"
    )


def test_a_phase_name_is_cut_at_its_stated_length():
    progress = Progress()
    line = json.dumps({"event": "progress", "timesteps": 1, "phase": "p" * 100_000})
    assert progress.feed(line, at=1.0) == "progress"
    assert progress.phase == "p" * MAX_PHASE_NAME
    assert [p["name"] for p in progress.phases] == ["p" * MAX_PHASE_NAME]
    # an SB3 table's iteration names a phase too: 1e300 iterations is 311 characters
    table = Progress()
    rows = ["-" * 30, "| time/ | |", "|    iterations | 1e300 |", "|    total_timesteps | 5 |"]
    for row in [*rows, "-" * 30]:
        table.feed(row, at=1.0)
    assert table.phase is not None and len(table.phase) == MAX_PHASE_NAME
    assert table.phase.startswith("iteration 1000000000")
