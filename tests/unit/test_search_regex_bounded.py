"""User regexes cannot stall the process (issue 26, item 1; and from item 12 a 600-letter
non-ASCII query and `steps=-0`): patterns run on RE2 (`rollouts.store.search.regexes`), written in
Python's syntax and meaning what Python means, refused with a clear 400 where RE2 would need to
backtrack, and the marks of a sample page found within a time bound.

The server-level proof (a sample page answers while a catastrophic search runs) is in
tests/e2e/test_search_stall.py.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time

import pytest
from django.core.cache import caches

from rollouts.store import BadRequest, Catalog
from rollouts.store.search import StepRange, match_spans, search
from rollouts.store.search import query as searchquery
from rollouts.store.search.bucket import MARK_TERMS
from rollouts.store.search.query import Query
from rollouts.store.search.regexes import case_forms, compile_literal, compile_regex

CATASTROPHIC = r"^(\w+\s?)+[.!?]$"
WORDS = "the model answers so we get a result and then "
PREFIX = "/portal/rollouts"
AB = bytes(b"ab"[i % 2] for i in range(256))  # a byte as a or b

# Python's syntax, and for each text the span Python's `re` gives (compared below).
SAME_AS_PYTHON = [
    (CATASTROPHIC, ["hello world.", "héllo 中文!", "hello world"]),
    (r"apolog\w+ for", ["I apologise for it", "we apologized for"]),
    (r"(?m)^b$", ["a\nb\nc", "ab"]),
    (r"[^\W\d_]+", ["123abc_é9", "__9"]),  # the letters: a negated class holding \W
    (r"[\W\d]+", ["ab 12 cd", "é"]),
    (r"\s+\S", ["a\u3000b", "a\xa0b", "a\x1cb"]),  # Unicode spaces, as str.isspace() says
    (r"\d+", ["x\u0661\u0662y", "x12y"]),  # Arabic-Indic digits are \d too
    (r"\w+", ["--中文é_9--"]),
    (r"(?x) a b  # a comment", ["xab"]),
    (r"a{2,3}?b", ["aaaab"]),
    (r"\Aab\Z", ["ab", "ab\n"]),
    (r"(?P<n>a)|b", ["cb"]),
    (r"[a-c-]|[\]\\^]", ["-", "^", "]"]),
    (r"(?s)a.b|(?-s:c.d)", ["a\nb", "c\nd"]),
    (r"(?i)STRAẞE", ["straße"]),
    (r"\ud800", ["a\ud800b"]),  # a lone surrogate (a `\ud800` escape) keeps its place
    (r"x*", ["axé中x"]),
]


@pytest.mark.parametrize(("pattern", "texts"), SAME_AS_PYTHON)
def test_a_pattern_means_what_it_means_in_python(pattern, texts):
    compiled = compile_regex(pattern, ignore_case=False)
    for text in texts:
        expected = [m.span() for m in re.finditer(pattern, text)]
        assert list(compiled.finditer(text)) == expected, text


def test_the_documented_differences_from_python():
    # $ before a final newline: the same texts match, the newline is part of the match.
    assert compile_regex("foo$", False).search("foo\n") == (0, 4)
    assert compile_regex("foo$", False).search("foo\n\n") is None
    # \b knows ASCII word characters only.
    assert compile_regex(r"\bna\b", False).search("naïve") == (0, 2)
    # Ignoring case is Unicode's simple case folding: I is not the dotless i (Python: it is).
    assert compile_regex("I", True).search("\u0131") is None
    assert compile_regex("K", True).search("\u212a") == (0, 1)


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        (r"(\w+) \1", r"a backreference (\1 or (?P=name))"),
        (r"(?P<w>\w+) (?P=w)", "a backreference"),
        (r"sorry(?= I)", "a lookahead ((?=...))"),
        (r"sorry(?! I)", "a lookahead ((?!...))"),
        (r"(?<=I )apologize", "a lookbehind ((?<=...))"),
        (r"(?<!I )apologize", "a lookbehind ((?<!...))"),
        (r"(?>a+)b", "an atomic group"),
        (r"a++b", "a possessive quantifier"),
        (r"(a)?(?(1)b|c)", "a conditional group"),
    ],
)
def test_what_needs_backtracking_is_refused_saying_what(pattern, said):
    with pytest.raises(BadRequest) as caught:
        Query(pattern, regex=True).matcher()
    message = str(caught.value)
    assert message.startswith(f"q uses {said}") and "RE2, which never backtracks" in message


def test_other_unrunnable_patterns_are_a_clear_error():
    for pattern, said in [
        (r"(?a)\w", "the ASCII flag"),
        ("a{1001}", "invalid repetition size"),  # RE2's limit
        ("(unclosed", "missing ), unterminated subpattern"),  # Python's own message
        ("a{99999999999}", "the repetition number is too large"),
        ("(" * 1000, "it nests too deeply"),
    ]:
        with pytest.raises(BadRequest, match=re.escape(said)):
            Query(pattern, regex=True).matcher()


def finishes(action, seconds: float) -> bool:
    """Whether `action` ends within `seconds` (a thread: a backtracking match would not)."""
    worker = threading.Thread(target=action, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


def test_a_catastrophic_pattern_takes_linear_time():
    # Python's re needs longer than the universe has on this text; RE2 about 10 ms.
    text = (WORDS * 40_000).strip()
    pattern = Query(CATASTROPHIC, regex=True).matcher().pattern
    found: list[object] = []
    assert finishes(lambda: found.append(pattern.search(text)), 30.0)
    assert found == [None]
    assert pattern.search(text + ".") == (0, len(text) + 1)


def test_a_match_lets_the_other_threads_run():
    """The GIL is released while RE2 matches: another thread goes on meanwhile (a held GIL
    lets it run between Python bytecodes only, never during the C call)."""
    # Random a and b: this pattern's automaton outgrows its memory, and RE2 simulates it
    # instead (~0.5 s).
    text = random.Random(26).randbytes(3_000_000).translate(AB).decode()
    pattern = compile_regex(r"(a|b)*a(a|b){20}x", False)
    started, done = threading.Event(), threading.Event()
    ticks = 0

    def match() -> None:
        started.set()  # what follows is the one C call: a held GIL would not let us wake
        pattern.search(text)
        done.set()

    worker = threading.Thread(target=match)
    worker.start()
    assert started.wait(30), "the matching thread never started"
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks >= 10, ticks


def test_marks_are_found_within_their_bound():
    huge = "y" * 20_000_000 + "x"  # x* matches the empty text at each of 20 M characters
    query = Query("x*", regex=True)
    # Unbounded, the scan would reach the final "x" (minutes of 20 M steps) and mark it: no
    # mark at all shows it stopped at its bound (no wall-clock assertion: the machine may be busy).
    assert match_spans(query, {"response": huge}, seconds=0.2) == {}
    assert match_spans(query, {"response": "axxb" + huge}) == {"response": ["xx"]}
    many = " ".join(f"apolog{i}" for i in range(100))
    spans = match_spans(Query(r"apolog\d+", regex=True), {"response": many})
    assert spans == {"response": [f"apolog{i}" for i in range(MARK_TERMS)]}
    terms = match_spans(Query(CATASTROPHIC, regex=True), {"response": (WORDS * 50_000) + "!"})
    assert len(terms["response"][0]) == len(WORDS) * 50_000 + 1


def test_a_long_query_of_distinct_non_ascii_letters_asks_re2_once_a_letter(monkeypatch):
    """Issue 26, item 12: 600 distinct letters spent 1.3 s before the search budget started
    (each letter's case forms found by scanning 126,000 characters). Now each distinct letter
    is one RE2 question, whatever the query's length (the time is a figure of
    bench/bench_search.py, not a test)."""
    asked: list[str] = []
    real = searchquery.case_forms

    def counted(char: str) -> tuple[bytes, bytes]:
        asked.append(char)
        return real(char)

    monkeypatch.setattr(searchquery, "case_forms", counted)
    for first in (0x400, 0x4E00, 0x100):  # Cyrillic, CJK, Latin Extended
        letters = "".join(chr(first + i) for i in range(500))
        searchquery._case_safe.cache_clear()
        asked.clear()
        for regex in (False, True):
            Query(letters * 2, regex=regex).matcher()  # 1,000 letters, each twice
        # Once a letter for each of the two modes (literal, regex): cached, never a scan.
        assert sorted(asked) == sorted(letters * 2)


def test_case_safety_agrees_with_what_re2_matches():
    """`_case_safe`: a character whose case forms a lower-cased file cannot show (the KELVIN
    SIGN for k in a regex, É for é) splits the prefilter's needles; checked against every
    character RE2's case folding matches it with."""
    every = "".join(chr(c) for c in range(0x20, 0x2200) if not 0xD800 <= c < 0xE000)
    for char in "akisé中ДΣß" + "".join(chr(c) for c in range(0x20, 0x7F)):
        seen = every + char
        forms = {seen[a:b] for a, b in compile_regex(re.escape(char), True).finditer(seen)}
        ascii_pair = {char.lower(), char.upper()} if char.isascii() else {char}
        assert searchquery._case_safe(char, False) == (forms <= ascii_pair), char
        assert case_forms(char)[0] == min(f.encode() for f in forms)
    assert searchquery._case_safe("k", True) and not searchquery._case_safe("k", False)
    assert searchquery._case_safe("i", False)  # RE2 folds i to I only


def test_python_spaces_are_all_below_u3000():
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    assert max(spaces) == 0x3000  # regexes.py lists \s from the first 0x3001 characters
    every = "".join(map(chr, spaces))
    assert list(compile_regex(r"\s", False).finditer(every)) == [
        (i, i + 1) for i in range(len(spaces))
    ]


def test_literals_fold_ascii_letters_to_their_two_forms_only():
    pattern = compile_literal("Straße KELVIN", case=False)
    assert pattern.search("STRASSE kelvin") is None  # ß is not ss (one character for one)
    assert pattern.search("x STRAẞE kelvin") == (2, 15)
    assert pattern.search("straße \u212aELVIN") is None  # the KELVIN SIGN is another letter
    assert compile_literal("a.b", case=True).search("axb a.b") == (4, 7)


def test_steps_minus_zero_stays_minus_zero():
    assert str(StepRange.parse("-0")) == "-0"
    assert str(StepRange.parse("0-")) == "0-"
    assert str(StepRange.parse("0")) == "0"
    assert str(StepRange.parse("-12")) == "-12"
    assert str(StepRange.parse(None)) == ""


@pytest.fixture
def app_data(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step("train", 0, [{"response": "Hi there."}, {"response": "hi again"}])
    write_step("train", 1, [{"response": "hi later."}])
    return data_dir


def test_hit_links_keep_steps_minus_zero(client, app_data):
    response = client.get(PREFIX + "/api/jsonl/train/search", {"q": "hi", "steps": "-0"})
    data = json.loads(response.content)
    assert [(h["step"], h["position"]) for h in data["hits"]] == [(0, 0), (0, 1)]
    assert all(h["url"].endswith("?q=hi&steps=-0") for h in data["hits"])
    page = client.get(PREFIX + "/train/0/sample/0/", {"q": "hi", "steps": "-0"}).content.decode()
    assert f'data-next-url="{PREFIX}/train/0/sample/1/?q=hi&amp;steps=-0"' in page


def test_refused_patterns_are_400_on_the_api_and_the_page_and_said_on_a_sample(client, app_data):
    params = {"q": r"(\w+) \1", "regex": "1"}
    response = client.get(PREFIX + "/api/jsonl/train/search", params)
    assert response.status_code == 400
    assert "backreference" in json.loads(response.content)["message"]
    response = client.get(PREFIX + "/train/search/", params)
    assert response.status_code == 400 and b"backreference" in response.content
    response = client.get(PREFIX + "/train/0/sample/0/", params)
    assert response.status_code == 200 and b"backreference" in response.content


def test_a_catastrophic_search_answers_with_its_hits(client, app_data, write_step):
    write_step("train", 2, [{"response": (WORDS * 40_000).strip()}, {"response": "Done."}])
    response = client.get(
        PREFIX + "/api/jsonl/train/search", {"q": CATASTROPHIC, "regex": "1", "order": "oldest"}
    )
    data = json.loads(response.content)
    assert response.status_code == 200 and data["done"] is True
    assert [(h["step"], h["position"]) for h in data["hits"]] == [(0, 0), (1, 0), (2, 1)]


def test_search_agrees_with_a_python_scan(data_dir):
    """The same hits as Python's `re` over the decoded responses, for patterns both run."""
    lines = ["I apologise.", "sorry", "Sorry, I cannot", "中文 answer 42", "x\ny", ""]
    (data_dir / "train").mkdir()
    (data_dir / "train" / "1.jsonl").write_text(
        "".join(json.dumps({"response": text}) + "\n" for text in lines)
    )
    catalog = Catalog(data_dir)
    for pattern in [r"sorry", r"^\w+$", r"\d{2}", r"(?s)x.y", r"[^\W\d_]{6,}", r"I\s\w+"]:
        found = search(catalog, "train", Query(pattern, regex=True, field="response"))
        expected = [i for i, t in enumerate(lines) if re.search(pattern, t, re.IGNORECASE)]
        assert [h.position for h in found.hits] == expected, pattern
