"""Values that used to break pages (issue 12, section 1): lone surrogate escapes in any string,
numbers Python cannot hold, arrays nested past any parser's limit. Every page and endpoint of
such a step answers; the odd value is shown (replaced, or as text) and the sample says so.

Each case writes its own step: three ordinary samples around one hostile line (line 2), written
as raw text so the file holds exactly the bytes a writer would have produced.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

from rollouts.store import (
    Catalog,
    DictCache,
    decode_line,
    dumps_strict,
    find_runs,
    line_as_json,
)
from rollouts.store.jsonio import MAX_DEPTH, REPLACED_SURROGATES
from tests.support.data import relax_line, sample
from tests.support.pages import PREFIX

HOSTILE_LINE = 2
SURROGATE = '"caf\\udcc3"'  # what json.dumps writes for "caf\xc3" read with surrogateescape
REPLACED = "caf\ufffd"


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def hostile_step(write_step, field: str, raw_value: str, **extra) -> Path:
    """train/3.jsonl: samples 0, 2, 3 ordinary; line 2 has `field` set to the JSON text
    `raw_value` (spliced in as text, so nothing normalises it on the way)."""
    record = sample(1, dataset="math", label="x", **extra)
    record[field] = "__HOSTILE__"
    line = relax_line(record).replace('"__HOSTILE__"', raw_value)
    assert raw_value in line
    lines = [relax_line(sample(0, dataset="math", label="a")), line]
    lines += [relax_line(sample(i, dataset="math", label="b")) for i in (2, 3)]
    return write_step("train", 3, lines)


def every_url_of_the_step() -> list[str]:
    """Every page and endpoint that reads train/3.jsonl (the hostile line is position 1)."""
    api = "/api/jsonl/train/file/3.jsonl"
    return [
        "/", "/train/", "/train/3/", "/train/3/?sort=reward&order=desc",
        "/train/3/?sort=response_length", "/train/3/?status=completed", "/train/3/?i=2",
        "/train/3/sample/0/", "/train/3/sample/1/", "/train/3/sample/1/?sort=reward",
        "/train/3/stats/", "/train/3/group/0/", "/train/3/group/1/", "/train/trends/",
        "/api/view/train/3", "/api/view/train/3?sort=reward&order=desc",
        "/api/view/train/3/sample/0", "/api/view/train/3/sample/1",
        api, f"{api}/samples", f"{api}/samples?sort=reward&order=desc",
        f"{api}/samples?sort=response_length", f"{api}/sample/0", f"{api}/sample/1",
        f"{api}/columns", f"{api}/stats", f"{api}/group/0", f"{api}/group/1",
        "/api/jsonl/train/trends", "/api/jsonl/train/steps", "/api/jsonl/train/poll",
    ]  # fmt: skip


def fetch(client, path: str) -> tuple[int, str, bytes]:
    response = client.get(PREFIX + path)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, response.get("Content-Type", ""), body


def parse(body: bytes):
    """Strict JSON as a client reads it; a number too long for int() is kept as its text
    (the file's bytes are passed on as written, and they are valid JSON)."""

    def reject(token: str):
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(body.decode("utf-8"), parse_constant=reject, parse_int=_int_or_text)


def _int_or_text(text: str) -> int | str:
    return int(text) if len(text) <= 4300 else text


def assert_every_url_answers(client, unreadable: bool = False) -> dict[str, tuple[int, bytes]]:
    """Every URL answers (200/302; 422 for the hostile line itself when it is `unreadable`),
    in valid UTF-8, with strict JSON where it is JSON."""
    answers = {}
    for path in every_url_of_the_step():
        status, content_type, body = fetch(client, path)
        allowed = (200, 302, 422) if unreadable and "sample/1" in path else (200, 302)
        assert status in allowed, (path, status, body[:300])
        assert b"Traceback" not in body and b"\\ud" not in body.lower(), path
        body.decode("utf-8")  # never a lone surrogate or a bad byte on the wire
        if content_type.startswith("application/json"):
            parse(body)
        answers[path] = (status, body)
    return answers


def notes(html: str) -> list[str]:
    return re.findall(r'<p class="rv-note">([^<]*)</p>', html)


# -- lone surrogates ---------------------------------------------------------------------------
STRING_FIELDS = {
    "prompt": SURROGATE,
    "response": SURROGATE,
    "label": SURROGATE,
    "status": SURROGATE,
    "dataset": SURROGATE,
    "metadata": '{"notes": ["ok", ' + SURROGATE + "]}",
    "extra_text": SURROGATE,
    "lone_high": '"x\\ud800y"',
}


@pytest.mark.parametrize("field", list(STRING_FIELDS))
def test_a_lone_surrogate_in_any_string_is_replaced_on_every_page(client, write_step, field):
    raw = STRING_FIELDS[field]
    name = "extra_text" if field == "lone_high" else field
    hostile_step(write_step, name, raw)
    answers = assert_every_url_answers(client)
    html = answers["/train/3/sample/1/"][1].decode()
    assert REPLACED in html or "x\ufffdy" in html
    assert REPLACED_SURROGATES in notes(html)
    twin = parse(answers["/api/view/train/3/sample/1"][1])
    assert REPLACED_SURROGATES in twin["warnings"]
    api = parse(answers["/api/jsonl/train/file/3.jsonl/sample/1"][1])
    assert api["warnings"] == [REPLACED_SURROGATES]
    shown = json.dumps(api["sample"], ensure_ascii=False)
    assert REPLACED in shown or "x\ufffdy" in shown
    # The other samples are untouched and say nothing.
    assert parse(answers["/api/jsonl/train/file/3.jsonl/sample/0"][1])["warnings"] == []


def test_a_surrogate_in_a_key_is_replaced_too(client, write_step):
    path = write_step("train", 3, [relax_line(sample(0)), '{"k\\udcc3": 1, "reward": 1.0}\n'])
    del path
    assert fetch(client, "/train/3/")[0] == 200
    status, _, body = fetch(client, "/api/jsonl/train/file/3.jsonl/sample/1")
    assert status == 200 and parse(body)["sample"] == {"k\ufffd": 1, "reward": 1.0}
    columns = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/columns")[2])
    assert "k\ufffd" in columns["keys"]


def test_surrogate_status_and_dataset_are_categories_with_the_replacement(client, write_step):
    hostile_step(write_step, "status", SURROGATE)
    stats = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/stats")[2])
    assert stats["status"] == {"completed": 3, REPLACED: 1}
    columns = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/columns")[2])
    assert columns["columns"]["status"][1] == REPLACED
    # The filter by that value works from the page's own link.
    status, _, body = fetch(client, "/api/view/train/3?status=" + REPLACED)
    assert status == 200 and parse(body)["total"] == 1


def test_decoding_never_leaves_a_lone_surrogate_and_the_line_stays_valid_json():
    data = b'{"a": "caf\\udcc3", "b": ["\\ud83d\\ude00", "\\\\udcc3"], "c\\ud800": 1}'
    decoded = decode_line(data)
    assert decoded.values() == {"a": REPLACED, "b": ["\U0001f600", "\\udcc3"], "c\ufffd": 1}
    assert decoded.warnings == [REPLACED_SURROGATES]
    out = line_as_json(decoded, data)
    assert json.loads(out.decode("utf-8")) == decoded.values()
    # An escaped backslash before "udcc3" is text, not an escape: the line stays strict.
    clean = b'{"b": ["\\ud83d\\ude00", "\\\\udcc3"]}'
    assert decode_line(clean).strict and line_as_json(decode_line(clean), clean) == clean


def test_the_one_encoder_never_writes_a_lone_surrogate():
    # A file name read with surrogateescape is one way a lone surrogate reaches a response.
    body = dumps_strict({"name": "step\udcc3", "x": float("nan")})
    assert json.loads(body.decode("utf-8")) == {"name": "step\ufffd", "x": None}


# -- numbers Python cannot hold, nesting past the parsers' limit -------------------------------
BIG = "9" * 400
HUGE = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000
NUMBER_CASES = {
    "reward_1e999": ("reward", "1e999"),
    "reward_negative_1e999": ("reward", "-1e999"),
    "reward_400_digits": ("reward", BIG),
    "reward_component_400_digits": ("reward", '{"acc": ' + BIG + ', "fmt": 0.5}'),
    "response_length_400_digits": ("response_length", BIG),  # longer than any scalar read
    "response_length_40_digits": ("response_length", "9" * 40),  # beyond 64 bits: msgspec's
    "response_length_1e999": ("response_length", "1e999"),
    "response_length_310_digits_float": ("response_length", "9" * 310 + ".0"),
    "group_index_400_digits": ("group_index", BIG),
    "sample_index_20_digits": ("sample_index", "1" * 20),
    "label_5000_digits": ("label", HUGE),
    "label_float_5000_digits": ("label", HUGE + ".5"),
    "extra_5000_digits": ("extra_number", HUGE),
    "metadata_5000_digits": ("metadata", '{"n": [' + HUGE + "]}"),
}


@pytest.mark.parametrize("case", list(NUMBER_CASES))
def test_a_number_python_cannot_hold_leaves_the_rest_of_the_step_alone(client, write_step, case):
    field, raw = NUMBER_CASES[case]
    hostile_step(write_step, field, raw)
    answers = assert_every_url_answers(client)
    columns = parse(answers["/api/jsonl/train/file/3.jsonl/columns"][1])
    assert columns["invalid"] == [] and columns["total"] == 4
    # Every other row keeps its values; the hostile value is missing from a float column.
    assert [columns["columns"]["reward"][r] for r in (0, 2, 3)] == [0.0, 0.0, 1.0]
    if field in ("reward", "response_length", "group_index") and not raw.startswith("{"):
        # A float column holds what a float can (1e40), nothing for what it cannot (1e400).
        as_float = float(raw)
        assert columns["columns"][field][1] == (as_float if math.isfinite(as_float) else None)
    if field == "reward" and raw.startswith("{"):  # the other component is still a column
        assert columns["columns"]["reward.acc"][1] is None
        assert columns["columns"]["reward.fmt"][1] == 0.5
    stats = parse(answers["/api/jsonl/train/file/3.jsonl/stats"][1])
    assert stats["samples"] == 4 and stats["invalid"] == 0
    # The sample page shows the value as written.
    html = answers["/train/3/sample/1/"][1].decode()
    shown = raw.strip('{}"').split(",")[0].split(": ")[-1].strip("[]")[:300]
    assert shown in html


def test_huge_label_is_text_in_the_lists(client, write_step):
    hostile_step(write_step, "label", HUGE)
    columns = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/columns")[2])
    assert columns["labels"][1] == HUGE[:200]


def test_1e999_reward_is_shown_as_text_and_said_so(client, write_step):
    hostile_step(write_step, "reward", "1e999")
    html = fetch(client, "/train/3/sample/1/")[2].decode()
    assert "1e999" in re.sub(r'<p class="rv-note">[^<]*</p>', "", html)
    assert any(note.startswith("reward: ") for note in notes(html))
    twin = parse(fetch(client, "/api/view/train/3/sample/1")[2])
    assert any(w.startswith("reward: ") for w in twin["warnings"])
    # Sorted by reward, the sample without a usable reward comes last.
    page = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/samples?sort=reward&order=desc")[2])
    assert page["positions"][-1] == 1 and page["complete"] is True


@pytest.mark.parametrize("field", ["metadata", "label", "reward", "response"])
def test_arrays_nested_100000_deep_make_the_line_unreadable_not_the_step(client, write_step, field):
    hostile_step(write_step, field, DEEP)
    answers = assert_every_url_answers(client, unreadable=True)
    columns = parse(answers["/api/jsonl/train/file/3.jsonl/columns"][1])
    assert [(b["position"], b["line"]) for b in columns["invalid"]] == [(1, HOSTILE_LINE)]
    assert columns["total"] == 3
    stats = parse(answers["/api/jsonl/train/file/3.jsonl/stats"][1])
    assert (stats["samples"], stats["invalid"]) == (3, 1)
    # The line itself is the viewer's "cannot be read" answer, naming its line.
    status, _, body = fetch(client, "/train/3/sample/1/")
    assert status == 422 and f"Line {HOSTILE_LINE} of step 3 could not be read" in body.decode()
    status, _, body = fetch(client, "/api/jsonl/train/file/3.jsonl/sample/1")
    assert status == 422 and parse(body)["line"] == HOSTILE_LINE


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900])
def test_a_strict_line_nested_deep_shows_the_value_as_text(client, write_step, depth):
    hostile_step(write_step, "metadata", "[" * depth + "]" * depth)
    answers = assert_every_url_answers(client)
    html = answers["/train/3/sample/1/"][1].decode()
    assert "[" * 100 in html and any(n.startswith("metadata: ") for n in notes(html))
    columns = parse(answers["/api/jsonl/train/file/3.jsonl/columns"][1])
    assert columns["invalid"] == []


def test_a_lenient_line_nested_past_the_limit_is_unreadable(client, write_step):
    deep = "[" * (MAX_DEPTH + 1) + "NaN" + "]" * (MAX_DEPTH + 1)  # NaN: the lenient parser
    hostile_step(write_step, "metadata", deep)
    answers = assert_every_url_answers(client, unreadable=True)
    columns = parse(answers["/api/jsonl/train/file/3.jsonl/columns"][1])
    assert columns["invalid"][0]["line"] == HOSTILE_LINE
    assert str(MAX_DEPTH) in columns["invalid"][0]["error"]


def test_the_columns_pass_survives_every_hostile_line_at_once(write_step, data_dir):
    lines = [relax_line(sample(0))]
    for field, raw in [*NUMBER_CASES.values(), ("metadata", DEEP), ("status", SURROGATE)]:
        record = sample(len(lines))
        record[field] = "__HOSTILE__"
        lines.append(relax_line(record).replace('"__HOSTILE__"', raw))
    lines.append(relax_line(sample(len(lines), reward=0.25)))
    write_step("train", 3, lines)
    catalog = Catalog(data_dir, DictCache())
    index = catalog.open_step("train", "3.jsonl")
    columns = catalog.columns(index)
    assert columns.rows == len(lines) and list(index.invalid) == [len(lines) - 3]
    reward = columns.numeric["reward"]
    assert (reward[0], reward[len(lines) - 1]) == (0.0, 0.25)


def test_a_surrogate_escape_inside_a_tool_calls_json_is_replaced_when_pretty_printed(
    client, write_step
):
    # The response text itself holds `"caf\udcc3"` as JSON text: decoding the sample leaves it
    # alone (it is a backslash and letters), but pretty-printing the tool call decodes it.
    call = '<tool_call>\n{"name": "caf\\udcc3"}\n</tool_call>'
    call += '<tool_call>\n{"n": ' + "9" * 5000 + "}\n</tool_call>"  # and one int() refuses
    write_step("train", 3, [relax_line(sample(0, response=call))])
    status, _, body = fetch(client, "/train/3/sample/0/")
    assert status == 200 and REPLACED in body.decode()
    twin = parse(fetch(client, "/api/view/train/3/sample/0")[2])
    assert twin["warnings"] == []  # the sample's own text is as written


@pytest.mark.parametrize("raw", ["1e999", "Infinity", "-1e999"])
def test_an_infinite_reward_in_a_lenient_line_is_missing_too(client, write_step, raw):
    # NaN elsewhere on the line sends it through the standard library (the lenient path).
    hostile_step(write_step, "reward", raw, extra=[float("nan")])
    columns = parse(fetch(client, "/api/jsonl/train/file/3.jsonl/columns")[2])
    assert columns["columns"]["reward"] == [0.0, None, 0.0, 1.0]
    for order in ("desc", "asc"):  # missing sorts last both ways
        url = f"/api/jsonl/train/file/3.jsonl/samples?sort=reward&order={order}"
        assert parse(fetch(client, url)[2])["positions"][-1] == 1


def not_utf8(parent: Path, name: bytes) -> Path:
    """A directory whose name is not UTF-8 (Python reads it with surrogateescape)."""
    path = Path(os.fsdecode(os.fsencode(parent) + b"/" + name))
    (path / "train").mkdir(parents=True)
    (path / "train" / "3.jsonl").write_text(relax_line(sample(0)) + relax_line(sample(1)))
    return path


def test_a_data_dir_whose_name_is_not_utf8_breaks_no_page(client, settings, tmp_path):
    settings.ROLLOUTS_DATA_DIR = str(not_utf8(tmp_path, b"d\xffata"))
    for path in ("/train/3/", "/train/3/sample/1/", "/train/3/stats/", "/train/3/group/0/",
                 "/train/trends/", "/api/view/train/3", "/api/jsonl/subdirs",
                 "/api/jsonl/train/trends", "/api/jsonl/train/file/3.jsonl/stats"):  # fmt: skip
        status, _, body = fetch(client, path)
        assert status == 200, (path, body[:300])
        body.decode("utf-8")
    # The name as shown: its bad byte replaced.
    assert "d\ufffdata" in fetch(client, "/train/3/")[2].decode()
    assert parse(fetch(client, "/api/jsonl/subdirs")[2])["data_dir"] == "d\ufffdata"


def test_a_run_whose_name_is_not_utf8_is_listed_and_served(client, settings, tmp_path):
    not_utf8(tmp_path, b"r\xffun")
    runs = find_runs(tmp_path)
    assert list(runs) == ["r\ufffdun"]
    settings.ROLLOUTS_DATA_DIR = None
    settings.ROLLOUTS_DATA_DIRS = {name: str(path) for name, path in runs.items()}
    status, _, body = fetch(client, "/runs/")
    assert status == 200 and "r\ufffdun" in body.decode()
    assert fetch(client, "/runs/r%EF%BF%BDun/train/3/sample/1/")[0] == 200
