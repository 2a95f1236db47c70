"""Integers beyond 64 bits go out as strings of their digits (issue 26, item 12: a 5,000-digit
integer went out as a bare JSON number, which Python's json.loads and `requests` refuse): in
every object the viewer writes, and in an answer about one sample (its JSON twin, `sample/N`).
Within [-2**63, 2**64) a number stays a number. The streams of many samples (`samples` pages,
the whole file) send a strict line as the file's own bytes, numbers as written (checking every
line would halve their speed); a line they re-serialise anyway (NaN) has the strings too.
"""

from __future__ import annotations

import json

import pytest

from rollouts.store import decode_line, dumps_strict, line_as_json
from rollouts.store.jsonio import without_wide_ints
from rollouts.store.wire import WIDE_INT_HIGH, WIDE_INT_LOW, wire_value
from tests.support.data import relax_line, sample
from tests.support.pages import PREFIX

HUGE = "9" * 5000  # past Python's 4,300-digit limit for int()
EDGES = {  # the text as written -> what a client reads back
    str(2**64 - 1): 2**64 - 1,
    str(2**64): str(2**64),
    str(-(2**63)): -(2**63),
    str(-(2**63) - 1): str(-(2**63) - 1),
    "1" * 30: "1" * 30,
    HUGE: HUGE,
    "-" + HUGE: "-" + HUGE,
}


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


def hostile_line(i: int, raw: str, lenient: bool = False) -> str:
    """A record whose `count`, `ids` and `meta.n` are `raw` as written (NaN makes it lenient)."""
    record = sample(i, count="@", ids=[1, "@", 3], meta={"n": "@"}, score=1.0)
    if lenient:
        record["score"] = float("nan")
    return relax_line(record).replace('"@"', raw)


def body(client, path: str) -> bytes:
    response = client.get(PREFIX + path)
    assert response.status_code == 200, response.content[:300]
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("lenient", [False, True], ids=["strict_line", "lenient_line"])
def test_every_json_answer_reads_with_plain_json_loads(client, write_step, lenient):
    write_step("train", 1, [hostile_line(i, raw, lenient) for i, raw in enumerate(EDGES)])
    expected = list(EDGES.values())
    for position, want in enumerate(expected):
        for path in (
            f"/api/view/train/1/sample/{position}",  # the JSON twin
            f"/api/jsonl/train/file/1.jsonl/sample/{position}",
        ):
            record = json.loads(body(client, path))["sample"]  # Python's own limits, untouched
            assert (record["count"], record["ids"], record["meta"]) == (
                want,
                [1, want, 3],
                {"n": want},
            ), path
    json.loads(body(client, "/api/view/train/1"))
    json.loads(body(client, "/api/jsonl/train/file/1.jsonl/columns"))
    for path in ("/api/jsonl/train/file/1.jsonl", "/api/jsonl/train/file/1.jsonl/samples"):
        if lenient:  # re-serialised by the viewer: strings, read by json.loads as it is
            records = json.loads(body(client, path))["samples"]
            assert [r["count"] for r in records] == expected
        else:  # the file's own bytes: the numbers as written
            records = json.loads(body(client, path), parse_int=str)["samples"]
            assert [r["count"] for r in records] == list(EDGES)


def test_the_page_shows_the_digits_the_json_sends(client, write_step):
    write_step("train", 1, [hostile_line(0, "1" * 30)])
    html = client.get(PREFIX + "/train/1/sample/0/").content.decode()
    assert "1" * 30 in html


def test_one_sample_without_a_wide_integer_is_sent_as_the_files_bytes():
    lines = [
        b'{"a": 18446744073709551615, "b": -9223372036854775808, "c": [1, 2]}',
        b'{"lp": [-0.00012345678901234567, 1.2345678901234567e-05], "x": 0.5}',
        b'{"text": "call 123456789012345678901234567 now", "n": 1}',  # digits in a string
        b'{"f": 12345678901234567890.5, "g": 1234567890123456789e3}',  # floats, not integers
    ]
    for data in lines:
        assert without_wide_ints(data) is data


def test_one_sample_with_one_is_written_again_with_the_digits_as_text():
    data = b'{"a": 18446744073709551616, "text": "\xc3\xa9 \\u00e9", "f": 0.1, "z": null}'
    assert line_as_json(decode_line(data), data) is data  # a stream sends the file's bytes
    out = without_wide_ints(data)
    assert json.loads(out) == {"a": "18446744073709551616", "text": "é é", "f": 0.1, "z": None}


def test_the_one_encoder_sends_wide_integers_as_text():
    value = {"in": [WIDE_INT_LOW, WIDE_INT_HIGH - 1], "out": (WIDE_INT_LOW - 1, WIDE_INT_HIGH)}
    assert json.loads(dumps_strict(value)) == {
        "in": [WIDE_INT_LOW, WIDE_INT_HIGH - 1],
        "out": [str(WIDE_INT_LOW - 1), str(WIDE_INT_HIGH)],
    }
    assert json.loads(dumps_strict({"t": True, "n": None, "x": float("inf")})) == {
        "t": True,
        "n": None,
        "x": None,
    }


def test_the_fast_encoder_and_the_careful_one_write_the_same_values():
    """msgspec writes the usual value; anything it cannot (or might write as a wide number)
    goes the careful way. Either way the JSON holds the same values."""

    class Name(str):
        pass

    values = [
        {"f": [0.1, -0.0, 1e16, 1e-7, 2.5e300], "i": [0, -1, 2**63 - 1, -(2**63)], "s": 'é\n"'},
        {"tuple": (1, 2), "nested": {"a": [{"b": None, "c": True}]}, 3: "int key"},
        {"nan": float("nan"), "inf": [float("-inf")], "wide": 2**64, "name": Name("x")},
        {"digits": "1234567890123456789012345", "long": 10**18, "longer": 10**19},
    ]
    for value in values:
        careful = json.dumps(wire_value(value), ensure_ascii=False, allow_nan=False)
        assert json.loads(dumps_strict(value)) == json.loads(careful)
    assert dumps_strict({"a": [1, 2.5]}) == b'{"a":[1,2.5]}'  # the fast one, compact
