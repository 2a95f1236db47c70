"""Each page's JSON twin carries exactly the keys its TypedDict (`rollouts/views/twins.py`) names,
and the documentation lists exactly those: the docs, the type and the endpoint cannot drift
apart (issue 28). Keys a twin sends only sometimes are the type's optional keys; each case
below says which answer leaves them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def top_level_keys(text: str, start: int) -> list[str]:
    """The keys of the object that opens at `text[start]`, written as the docs write one:
    `{"a", "b": {"c"}, "d": [{"e"}], "f": "a value"}` has the keys a, b, d and f. A quoted
    string right after `:` is a value; nested objects and lists are skipped."""
    assert text[start] == "{", text[start : start + 40]
    keys: list[str] = []
    depth = 0
    previous = ""
    at = start
    while at < len(text):
        char = text[at]
        if char == '"':
            end = text.index('"', at + 1)
            if depth == 1 and previous != ":":
                keys.append(text[at + 1 : end])
            previous, at = '"', end + 1
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return keys
        if not char.isspace():
            previous = char
        at += 1
    raise AssertionError(f"the object at {start} never closes")


def documented_keys(doc: str, marker: str) -> list[str]:
    text = (DOCS / doc).read_text()
    assert text.count(marker) == 1, f"{doc}: {marker!r} should appear once"
    return top_level_keys(text, text.index("{", text.index(marker) + len(marker)))


def all_keys(twin: Any) -> set[str]:
    return set(twin.__required_keys__) | set(twin.__optional_keys__)


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
    keys = documented_keys(doc, marker)
    assert len(keys) == len(set(keys)), f"{doc} lists a key twice: {keys}"
    assert_same_keys(keys, all_keys(DOCUMENTED[twin][0]), f"{twin} twin, {doc}")


def test_the_doc_parser_reads_top_level_keys_only() -> None:
    text = 'x {"a", "b": {"c", "d"}, "e": [{"f"}], "g": "a value", "h" (with `{i}`), "j": null}'
    assert top_level_keys(text, 2) == ["a", "b", "e", "g", "h", "j"]


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


@pytest.mark.usefixtures("demo")
def test_sample_twin_leaves_out_the_sample_keys_without_a_sample(client: Client) -> None:
    unmatched = answer(client, "api-view-step", "?status=nomatch", bucket="train", step="1")
    unreadable = answer(client, "api-view-sample", bucket="train", step="2", position=16)
    assert (unmatched[0], unreadable[0]) == (200, 422)
    assert unmatched[1]["error"] and unreadable[1]["error_line"] == 17
    for status, data in (unmatched, unreadable):
        assert_same_keys(list(data), set(SampleTwin.__required_keys__), f"{status} answer")
