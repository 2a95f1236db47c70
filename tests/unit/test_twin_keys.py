"""Each page's JSON twin carries exactly the keys its TypedDict names (`rollouts/views/twins.py`
for a step's pages, `bucket_twins.py` for a bucket's), and the documentation lists exactly
those: the docs, the type and the endpoint cannot drift apart (issue 28). Keys a twin sends only
sometimes are the type's optional keys; the sample twin's are the only ones, sent with a sample
shown and left out without one (below).
"""

from __future__ import annotations

from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from rollouts.demo import write_demo
from rollouts.views.bucket_twins import CompareTwin, LineageTwin, SearchTwin, TrendsTwin
from rollouts.views.twins import GroupTwin, SampleTwin, StatsTwin, TableTwin
from tests.support.servers import REPO_ROOT

DOCS = REPO_ROOT / "docs"

# Where each twin's keys are documented: the file, and text just before the `{` that opens the
# documented object (a row of docs/api.md's table, or the sentence before a guide's example).
DOCUMENTED: dict[str, tuple[Any, list[tuple[str, str]]]] = {
    "sample": (SampleTwin, [("api.md", "| `GET api/view/<bucket>/<step>[/sample/<position>]` |")]),
    "table": (
        TableTwin,
        [("viewer.md", "Its JSON twin is `api/jsonl/<bucket>/file/<step>.jsonl/table`")],
    ),
    "group": (
        GroupTwin,
        [("api.md", "| `GET api/jsonl/<bucket>/file/<filename>/group/<group>` |")],
    ),
    "stats": (StatsTwin, [("api.md", "| `GET api/jsonl/<bucket>/file/<filename>/stats` |")]),
    "search": (
        SearchTwin,
        [
            ("api.md", "| `GET api/jsonl/<bucket>/search?q=...` |"),
            ("search-compare.md", "| `lines` | at most this many lines per answer"),
        ],
    ),
    "trends": (TrendsTwin, [("api.md", "| `GET api/jsonl/<bucket>/trends[?after=N]` |")]),
    "compare": (CompareTwin, [("search-compare.md", "without `prompt=`).")]),
    "lineage": (
        LineageTwin,
        [
            ("api.md", "| `GET api/jsonl/<bucket>/prompt/<prompt_id>[?page=N&page_size=S]` |"),
            ("search-compare.md", "Its JSON twin is `api/jsonl/<bucket>/prompt/<prompt_id>`"),
        ],
    ),
}


def documented_object(text: str, start: int) -> tuple[dict[str, Any], int]:
    """The object that opens at `text[start]`, written as the docs write one, as its keys, each
    with the keys of its value when that is an object or a list of objects (else None), and the
    index after it. `{"a", "b": {"c"}, "d": [{"e"}], "f": "a value", "g": null | {"h"}}` is
    `{"a": None, "b": {"c": None}, "d": {"e": None}, "f": None, "g": {"h": None}}`. A quoted
    string is a key right after `{` or `,`; anything else (a value, `"a" | "b"`) is not."""
    assert text[start] == "{", text[start : start + 40]
    keys: dict[str, Any] = {}
    previous, pending, value_of = "{", None, None
    at = start + 1
    while at < len(text):
        char = text[at]
        if char == '"':
            end = text.index('"', at + 1)
            pending = text[at + 1 : end] if previous in "{," else None
            if pending is not None:
                assert pending not in keys, f"{pending!r} is listed twice"
                keys[pending] = None
            previous, at = '"', end + 1
            continue
        if char in "{[":
            nested, at = _value_object(text, at)
            if value_of is not None and keys[value_of] is None:
                keys[value_of] = nested
            previous = "}"
            continue
        if char == "}":
            return keys, at + 1
        if char == ":":
            value_of = pending
        elif char == ",":
            value_of = None
        if not char.isspace():
            previous, pending = char, pending if char == ":" else None
        at += 1
    raise AssertionError(f"the object at {start} never closes")


def _value_object(text: str, at: int) -> tuple[dict[str, Any], int]:
    """An object value, or the first object of a list value; and the index after the value."""
    if text[at] == "{":
        return documented_object(text, at)
    first: dict[str, Any] = {}
    at += 1
    while text[at] != "]":
        if text[at] == "{":
            nested, at = documented_object(text, at)
            first = first or nested
        elif text[at] == "[":
            _, at = _value_object(text, at)
        elif text[at] == '"':
            at = text.index('"', at + 1) + 1
        else:
            at += 1
    return first, at + 1


def documented(doc: str, marker: str) -> dict[str, Any]:
    text = (DOCS / doc).read_text()
    assert text.count(marker) == 1, f"{doc}: {marker!r} should appear once"
    return documented_object(text, text.index("{", text.index(marker) + len(marker)))[0]


def nested_types(twin: Any) -> dict[str, Any]:
    """The keys of `twin` whose value is a TypedDict, a list of one, or one or None: that type."""
    nested = {}
    for key, hint in get_type_hints(twin).items():
        if get_origin(hint) in (Union, UnionType):
            hint = next((arg for arg in get_args(hint) if arg is not type(None)), hint)
        if get_origin(hint) is list:
            hint = get_args(hint)[0]
        if is_typeddict(hint):
            nested[key] = hint
    return nested


def all_keys(twin: Any) -> set[str]:
    return set(twin.__required_keys__) | set(twin.__optional_keys__)


def assert_typed_keys(value: dict[str, Any], type_: Any, where: str) -> None:
    """`value`'s keys are `type_`'s (its optional ones may be missing), and so on down every
    value that is typed as an object, or a list of them."""
    required, optional = set(type_.__required_keys__), set(type_.__optional_keys__)
    assert_same_keys(set(value) | optional, required | optional, where)
    for key, nested in nested_types(type_).items():
        items = value.get(key)
        for item in items if isinstance(items, list) else [items]:
            if item is not None:
                assert_typed_keys(item, nested, f"{where}: {key}")


def assert_same_keys(found: list[str] | set[str], expected: set[str], where: str) -> None:
    found_set = set(found)
    assert found_set == expected, (
        f"{where}: extra {sorted(found_set - expected)}, missing {sorted(expected - found_set)}"
    )


# -- the docs against the types ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("twin", "doc", "marker"),
    [(name, doc, marker) for name, (_, places) in DOCUMENTED.items() for doc, marker in places],
)
def test_documented_keys_are_the_twins_keys(twin: str, doc: str, marker: str) -> None:
    """Every key, and the keys of every value typed as an object (a TypedDict)."""
    keys, type_ = documented(doc, marker), DOCUMENTED[twin][0]
    assert_same_keys(list(keys), all_keys(type_), f"{twin} twin, {doc}")
    for key, nested in nested_types(type_).items():
        assert keys[key], f"{twin} twin, {doc}: {key}'s keys are not spelled out"
        assert_same_keys(list(keys[key]), all_keys(nested), f"{twin} twin, {doc}: {key}")


def test_the_doc_parser_reads_keys_and_the_keys_of_objects() -> None:
    text = (
        'x {"a", "b": {"c", "d": "v"}, "e": [{"f"}, ...], "g": "a value", "h" (`{i}`), '
        '"j": null | {"k": "x" | "y"}, "l": {name: {"m"}}}'
    )
    assert documented_object(text, 2)[0] == {
        "a": None, "b": {"c": None, "d": None}, "e": {"f": None}, "g": None, "h": None,
        "j": {"k": None}, "l": {},
    }  # fmt: skip
    with pytest.raises(AssertionError, match="listed twice"):
        documented_object('{"a", "b": 1, "a"}', 0)


def test_a_key_the_docs_add_or_leave_out_is_caught() -> None:
    expected = all_keys(SampleTwin)
    with pytest.raises(AssertionError, match=r"extra \['stray'\]"):
        assert_same_keys([*expected, "stray"], expected, "doctored")
    with pytest.raises(AssertionError, match=r"missing \['range'\]"):
        assert_same_keys(expected - {"range"}, expected, "doctored")


# -- the endpoints against the types -------------------------------------------------------------
@pytest.fixture
def demo(settings: Any, tmp_path: Path) -> Path:
    """A small demo run, its step 2 ending in an unreadable line (position 16)."""
    data = write_demo(tmp_path, train_steps=3, samples_per_step=16)
    with (data / "train" / "2.jsonl").open("ab") as file:
        file.write(b"{not json\n")
    settings.ROLLOUTS_DATA_DIR = str(data)
    caches["rollouts"].clear()
    return data


def answer(client: Client, name: str, query: str = "", **kwargs: Any) -> tuple[int, dict]:
    response = client.get(reverse(f"rollouts:{name}", kwargs=kwargs) + query)
    return response.status_code, response.json()


# (twin, URL name, its arguments, query string): answers (200s) that carry every key the type
# names, its optional ones included. `{prompt_id}` is the prompt of step 1's first sample.
FULL_ANSWERS = [
    ("sample", "api-view-sample", {"step": "1", "position": 3}, "?sort=reward&order=desc"),
    ("sample", "api-view-step", {"step": "1"}, ""),
    ("table", "api-table", {"filename": "1.jsonl"}, ""),
    ("table", "api-table", {"filename": "2.jsonl"}, "?at=5&page_size=4&status=completed"),
    ("group", "api-group", {"filename": "1.jsonl", "group": 0}, ""),
    ("group", "api-group", {"filename": "1.jsonl", "group": 1}, "?a=8&b=9&from=8&sort=reward"),
    ("stats", "api-stats", {"filename": "1.jsonl"}, ""),
    ("stats", "api-stats", {"filename": "2.jsonl"}, ""),
    ("search", "api-search", {}, "?q=the"),
    ("search", "api-search", {}, "?q=zzzzqqq&field=response&lines=5"),
    ("trends", "api-trends", {}, ""),
    ("trends", "api-trends", {}, "?after=1"),
    ("compare", "api-compare", {}, "?a=1&b=2"),
    ("compare", "api-compare", {}, "?a=1&b=1&prompt={prompt_id}"),
    ("lineage", "api-prompt", {"prompt_id": "{prompt_id}"}, ""),
    ("lineage", "api-prompt", {"prompt_id": "{prompt_id}"}, "?page_size=1&page=2"),
]


@pytest.mark.usefixtures("demo")
@pytest.mark.parametrize(("twin", "name", "kwargs", "query"), FULL_ANSWERS)
def test_twin_sends_the_keys_of_its_type(
    client: Client, twin: str, name: str, kwargs: dict, query: str
) -> None:
    _, first = answer(client, "api-view-sample", bucket="train", step="1", position=0)
    prompt_id = first["prompt_id"]
    kwargs = {
        k: v.format(prompt_id=prompt_id) if isinstance(v, str) else v for k, v in kwargs.items()
    }
    got, data = answer(client, name, query.format(prompt_id=prompt_id), bucket="train", **kwargs)
    assert got == 200, data
    assert_same_keys(list(data), all_keys(DOCUMENTED[twin][0]), f"{name}{query}")
    assert_typed_keys(data, DOCUMENTED[twin][0], f"{name}{query}")


@pytest.mark.usefixtures("demo")
def test_sample_twin_reads_the_sample_from_the_pages_context(client: Client) -> None:
    """The keys that are null without a sample are filled with one: the twin reads the context
    by name, so a key renamed on one side only would show here as a null."""
    status, data = answer(client, "api-view-sample", "?sort=reward", bucket="train", step="1",
                          position=3)  # fmt: skip
    assert status == 200
    assert (data["position"], data["line"], data["error"], data["sort"]) == (3, 4, None, "reward")
    assert data["rank"] and data["neighbours"] and data["identity"]["position"] == 3
    assert data["prompt_id"] and isinstance(data["warnings"], list)
    assert all(data["urls"][name] for name in ("page", "json", "first", "last"))


@pytest.mark.usefixtures("demo")
def test_sample_twin_leaves_out_the_sample_keys_without_a_sample(client: Client) -> None:
    unmatched = answer(client, "api-view-step", "?status=nomatch", bucket="train", step="1")
    unreadable = answer(client, "api-view-sample", bucket="train", step="2", position=16)
    assert (unmatched[0], unreadable[0]) == (200, 422)
    assert unmatched[1]["error"] and unreadable[1]["error_line"] == 17
    for status, data in (unmatched, unreadable):
        assert_same_keys(list(data), set(SampleTwin.__required_keys__), f"{status} answer")
