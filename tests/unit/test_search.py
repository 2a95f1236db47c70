"""Search across a bucket's steps (`rollouts.store.search`): exact hit sets on tiny files written
here, with the escapes JSON writers use, CJK, `\\uXXXX` writers, regexes, field scoping, case,
damaged lines, step ranges, cursors and budgets (a line budget: slices are deterministic)."""

from __future__ import annotations

import json
import random

import pytest

from rollouts.store import BadRequest, Catalog
from rollouts.store.search import (
    Budget,
    Cursor,
    SearchResult,
    StepRange,
    adjacent_match,
    match_spans,
    search,
)
from rollouts.store.search import scan as searchscan
from rollouts.store.search.query import Query

NO_LIMIT = Budget(seconds=None)
TRICKY = 'He said "stop"\nthen C:\\temp\\new 中文 end'
RECORDS = [
    {"prompt": "p0", "response": TRICKY, "label": "a"},
    {"prompt": [{"role": "user", "content": "I APOLOGIZE 中"}], "response": "ok", "reward": None},
    {"prompt": "p2", "response": "I apologize for that", "label": "stop"},
    {"prompt": "p3", "response": "nothing here", "label": 0},
]


def write(data_dir, step: int, records, ensure_ascii: bool = False, extra: str = "") -> None:
    path = data_dir / "train" / f"{step}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in records]
    path.write_text("".join(lines) + extra, encoding="utf-8")


def hits(result: SearchResult) -> list[tuple[int, int, str]]:
    return [(h.step, h.position, h.field) for h in result.hits]


def find(data_dir, text: str, steps: StepRange = StepRange(), **options) -> SearchResult:
    return search(Catalog(data_dir), "train", Query(text, **options), steps, budget=NO_LIMIT)


@pytest.fixture
def two_writers(data_dir):
    """Step 1 as Relax writes it (raw UTF-8), step 2 with ensure_ascii (\\uXXXX), plus a
    damaged line and a NaN line in step 1."""
    nan_line = '{"prompt": "p", "response": "stop NaN", "reward": NaN}\n'
    write(data_dir, 1, RECORDS, extra='{"response": "stop, broken\n' + nan_line)
    write(data_dir, 2, RECORDS, ensure_ascii=True)
    return data_dir


@pytest.mark.parametrize(
    "query", ['"stop"\nthen', "C:\\temp\\new", "中文", "\\temp", "\nthen C:\\t"]
)
def test_escapes_and_cjk_find_the_decoded_text_in_both_writers(two_writers, query):
    assert hits(find(two_writers, query, case=True)) == [(1, 0, "response"), (2, 0, "response")]


def test_the_escaped_form_itself_is_no_match(two_writers):
    # The file holds `\"stop\"`, `\\temp` and `\n`: none of them is in the decoded text.
    for query in ('\\"stop\\"', "\\\\temp", "stop\\nthen"):
        assert hits(find(two_writers, query)) == []


def test_case_insensitive_by_default_and_case_sensitive_on_request(two_writers):
    loose = find(two_writers, "i apologize")
    assert hits(loose) == [
        (1, 1, "prompt"),
        (1, 2, "response"),
        (2, 1, "prompt"),
        (2, 2, "response"),
    ]
    assert [h.snippet.match for h in loose.hits] == ["I APOLOGIZE", "I apologize"] * 2
    assert hits(find(two_writers, "I apologize", case=True)) == [
        (1, 2, "response"),
        (2, 2, "response"),
    ]


def test_case_folding_reaches_non_ascii_forms(data_dir):
    write(
        data_dir,
        1,
        [{"response": "KELVIN \u212a"}, {"response": "\u00c9T\u00c9"}, {"response": "x"}],
    )
    write(
        data_dir, 2, [{"response": "\u0131 apolog\u017fe"}], ensure_ascii=True
    )  # dotless i, long s
    # A literal's ASCII letter matches its two ASCII forms only; a regex folds as RE2 does
    # (Unicode simple case folding: S is also the long s, K the KELVIN SIGN, but I is not the
    # dotless i, as it is for Python's re.IGNORECASE).
    assert hits(find(data_dir, "k")) == [(1, 0, "response")]  # KELVIN, not the KELVIN SIGN
    assert hits(find(data_dir, "I APOLOGSE")) == []
    assert hits(find(data_dir, "APOLOGSE")) == []
    assert hits(find(data_dir, "APOLOGSE", regex=True)) == [(2, 0, "response")]
    assert hits(find(data_dir, "I APOLOGSE", regex=True)) == []
    assert hits(find(data_dir, "\u0131 APOLOGSE", regex=True)) == [(2, 0, "response")]
    assert hits(find(data_dir, "\u212a", regex=True)) == [(1, 0, "response")]
    assert [h.snippet.match for h in find(data_dir, "\u00e9t\u00e9").hits] == ["\u00c9T\u00c9"]


def test_field_scoping(two_writers):
    assert hits(find(two_writers, "stop", field="label")) == [(1, 2, "label"), (2, 2, "label")]
    assert hits(find(two_writers, "stop", field="response")) == [
        (1, 0, "response"), (1, 5, "response"), (2, 0, "response"),
    ]  # fmt: skip
    # `any`: a sample counts once, named by its first matching field (response first).
    assert hits(find(two_writers, "stop")) == [
        (1, 0, "response"), (1, 2, "label"), (1, 5, "response"),
        (2, 0, "response"), (2, 2, "label"),
    ]  # fmt: skip
    assert hits(find(two_writers, "0", field="label")) == [(1, 3, "label"), (2, 3, "label")]


def test_chat_prompts_are_searched_in_their_contents_not_their_roles(two_writers):
    assert hits(find(two_writers, "中", field="prompt")) == [(1, 1, "prompt"), (2, 1, "prompt")]
    assert hits(find(two_writers, "user", field="prompt")) == []


def test_damaged_lines_are_skipped_and_nan_lines_still_searched(two_writers):
    result = find(two_writers, "stop", field="response", steps=StepRange(1, 1))
    assert hits(result) == [(1, 0, "response"), (1, 5, "response")]  # line 5 holds NaN
    assert [(c.step, c.samples, c.matches) for c in result.per_step] == [(1, 6, 2)]


def test_regex_matches_decoded_text_with_and_without_a_literal(two_writers):
    assert hits(find(two_writers, r"apolog\w+ for", regex=True)) == [
        (1, 2, "response"),
        (2, 2, "response"),
    ]
    assert hits(find(two_writers, r"^\w+ here$", regex=True)) == [
        (1, 3, "response"),
        (2, 3, "response"),
    ]
    assert hits(find(two_writers, r"(?-i:I APO)", regex=True)) == [
        (1, 1, "prompt"),
        (2, 1, "prompt"),
    ]
    assert Query(r"apolog\w+ for", regex=True).matcher().needles == (b"apolog",)
    # An alternation is a prefilter too: one needle per branch (s may fold to U+017F: cut;
    # i folds to I only).
    either = Query(r"\b(?:sorry|apologi[sz]e)\b", regex=True)
    assert either.matcher().needles == (b"orry", b"apologi")
    assert hits(find(two_writers, r"\b(?:nothing|apologi[sz]e)\b", regex=True)) == [
        (1, 1, "prompt"), (1, 2, "response"), (1, 3, "response"),
        (2, 1, "prompt"), (2, 2, "response"), (2, 3, "response"),
    ]  # fmt: skip
    with pytest.raises(BadRequest, match="regular expression"):
        Query("(unclosed", regex=True).matcher()


def test_snippet_is_a_window_around_the_match(data_dir):
    write(data_dir, 1, [{"response": "a" * 300 + "NEEDLE" + "b" * 300}])
    snippet = find(data_dir, "needle").hits[0].snippet
    assert snippet.match == "NEEDLE"
    assert snippet.before == "\u2026" + "a" * 80 and snippet.after == "b" * 80 + "\u2026"


def test_step_ranges(two_writers):
    assert hits(find(two_writers, "中文", steps=StepRange.parse("2-"))) == [(2, 0, "response")]
    assert hits(find(two_writers, "中文", steps=StepRange.parse("-1"))) == [(1, 0, "response")]
    assert find(two_writers, "中文", steps=StepRange.parse("3-9")).total_steps == 0
    for bad in ("2-1", "a-b", "1-2-3", "--"):
        with pytest.raises(BadRequest):
            StepRange.parse(bad)


def test_slices_with_a_line_budget_add_up_to_the_whole_search(two_writers):
    catalog, query = Catalog(two_writers), Query("stop")
    whole = search(catalog, "train", query, budget=NO_LIMIT)
    seen: list[tuple[int, int, str]] = []
    counts: dict[int, int] = {}
    cursor: Cursor | None = None
    slices = 0
    while True:
        part = search(catalog, "train", query, after=cursor, budget=Budget(None, lines=2))
        slices += 1
        seen += hits(part)
        for c in part.per_step:
            counts[c.step] = counts.get(c.step, 0) + c.matches
        if part.done:
            break
        assert part.cursor is not None and part.scanned_steps < part.total_steps
        cursor = Cursor.parse(str(part.cursor))
    assert slices == 5  # 6 + 4 lines, 2 a slice
    assert seen == hits(whole)
    assert counts == {c.step: c.matches for c in whole.per_step} == {1: 3, 2: 2}


def test_a_spent_time_budget_still_scans_a_chunk_and_answers_with_a_cursor(two_writers):
    # No time at all: each answer scans its first chunk (here a whole step), then stops.
    catalog, query = Catalog(two_writers), Query("stop")
    first = search(catalog, "train", query, budget=Budget(seconds=0.0))
    assert (first.done, str(first.cursor), first.scanned_steps) == (False, "2.0.3.3", 1)
    assert hits(first) == [(1, 0, "response"), (1, 2, "label"), (1, 5, "response")]
    last = search(catalog, "train", query, after=first.cursor, budget=Budget(seconds=0.0))
    assert (last.done, last.cursor, last.scanned_steps) == (True, None, 2)
    assert hits(last) == [(2, 0, "response"), (2, 2, "label")]


def test_the_hit_limit_counts_across_slices_and_counting_goes_on(two_writers):
    catalog, query = Catalog(two_writers), Query("stop")
    first = search(catalog, "train", query, limit=2, budget=Budget(None, lines=6))
    assert hits(first) == [(1, 0, "response"), (1, 2, "label")]
    rest = search(catalog, "train", query, limit=2, after=first.cursor, budget=NO_LIMIT)
    assert rest.hits == [] and rest.done
    assert [(c.step, c.matches) for c in rest.per_step] == [(2, 2)]


def test_bad_cursors_are_refused():
    for bad in ("", "x", "1.2", "1.2.3.4.5", "1.2.3.", "-1.0.0", "1.2.3 "):
        with pytest.raises(BadRequest):
            Cursor.parse(bad)


def test_bad_queries_are_refused():
    with pytest.raises(BadRequest):
        Query("")
    with pytest.raises(BadRequest):
        Query("x", field="reward")
    with pytest.raises(BadRequest):
        Query("x" * 1001)


def test_adjacent_matches_cross_steps_both_ways(two_writers):
    catalog, query = Catalog(two_writers), Query("stop")

    def near(step: str, position: int, forward: bool):
        hit, sure = adjacent_match(
            catalog, "train", query, StepRange(), step, position, forward, NO_LIMIT
        )
        assert sure
        return None if hit is None else (hit.name, hit.position)

    assert near("1", 0, True) == ("1", 2)
    assert near("1", 5, True) == ("2", 0)
    assert near("2", 2, True) is None
    assert near("2", 0, False) == ("1", 5)
    assert near("1", 2, False) == ("1", 0)
    assert near("1", 0, False) is None
    # Out of time (a line budget of 1): no neighbour, and not sure there is none.
    spent = Budget(None, lines=1)
    assert adjacent_match(catalog, "train", query, StepRange(), "1", 2, True, spent) == (
        None,
        False,
    )


def test_match_spans_name_each_matched_text_once(two_writers):
    values = {"prompt": "Stop stop", "response": "STOP", "label": None}
    assert match_spans(Query("stop"), values) == {"prompt": ["Stop", "stop"], "response": ["STOP"]}


@pytest.mark.parametrize("chunk", [5, 13, 64])
def test_tiny_chunks_find_exactly_what_decoding_every_line_finds(data_dir, monkeypatch, chunk):
    # Every chunk boundary case (a needle cut in two, a line spanning chunks, several hits in a
    # line) against the plain truth: each line decoded and matched.
    rng = random.Random(chunk)
    words = ["ab", "ab\n", 'a"b', "\u4e2d", "AB", "x", "ab\\", " "]
    records = [
        {"prompt": "".join(rng.choices(words, k=rng.randrange(0, 6))),
         "response": "".join(rng.choices(words, k=rng.randrange(0, 12)))}
        for _ in range(40)
    ]  # fmt: skip
    write(data_dir, 1, records[:20])
    write(data_dir, 2, records[20:], ensure_ascii=True)
    monkeypatch.setattr(searchscan, "CHUNK_BYTES", chunk)
    catalog = Catalog(data_dir)
    for text in ("ab", "ab\n", '"b\u4e2d', "b\\", "\u4e2dab"):
        for case in (False, True):
            query = Query(text, case=case)
            truth = [
                (
                    step,
                    position,
                    query.matcher().match(json.dumps(r, ensure_ascii=step == 2).encode()),
                )
                for step, chunk_records in ((1, records[:20]), (2, records[20:]))
                for position, r in enumerate(chunk_records)
            ]
            expected = [(s, p, found[0]) for s, p, found in truth if found is not None]
            assert hits(find(data_dir, text, case=case)) == expected, (text, case)
            lines = search(catalog, "train", query, budget=Budget(None, lines=3))
            assert hits(lines) == [h for h in expected if h[0] == 1][: len(lines.hits)]
