"""What a search looks for: the query as a pattern over a field's decoded text, and the bytes a
step file must hold wherever that pattern can match (the prefilter).

A sample's text sits in the file as a JSON string: `json.dumps(ensure_ascii=False)` writes a
newline as `\\n`, a quote as `\\"`, a backslash as `\\\\` and CJK as raw UTF-8; other writers
(`ensure_ascii=True`) write `\\u4e2d`, some with upper-case hex. So the prefilter looks for each
of those encodings of the query, and only the lines that hold one are decoded and matched for
real (`Matcher.match`), in the decoded field. Patterns run on RE2 (`regexes`: no pattern can
stall the process). Case-insensitive searches fold case the way RE2 does (Unicode simple case
folding, one character for one), so a literal and a regex search agree, and a match keeps its
length for highlighting.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from ..errors import BadRequest
from ..flags import parse_flag
from ..jsonio import LineError, decode_line
from .regexes import Pattern, PatternError, Span, case_forms, compile_literal, compile_regex
from .slim import slim_fields

FIELDS = ("prompt", "response", "label")
# What confirming a hit decodes of its line: the searchable fields, and the reward and status a
# hit shows (small values msgspec reads as it passes them anyway).
DECODED = (*FIELDS, "reward", "status")
# `field=any` looks in these, in this order: a hit names the first that matches (responses are
# what people search for; a prompt shared by a whole group matches every sample of it).
ANY_ORDER = ("response", "prompt", "label")
FIELD_CHOICES = ("any", *FIELDS)
MAX_QUERY_CHARS = 1000
SNIPPET_CONTEXT = 80  # characters shown on each side of the match
SNIPPET_MATCH = 200  # a longer match is cut here
MAX_NESTING = 64  # a label nested deeper is not searched below this


class Found(NamedTuple):
    """A confirmed match: the field, its text, where in it the first match is, and the line's
    decoded values (`DECODED`: a hit's reward, status and answer check come from them)."""

    field: str
    text: str
    span: Span
    values: dict[str, Any]


class _Texts(msgspec.Struct):
    """The three searchable fields of a line, and its reward and status; msgspec skips everything
    else without building it (token-id arrays of MBs)."""

    prompt: Any = None
    response: Any = None
    label: Any = None
    reward: Any = None
    status: Any = None


_fields_decoder = msgspec.json.Decoder(_Texts)


@dataclass(frozen=True, slots=True)
class Snippet:
    before: str
    match: str
    after: str

    def as_json(self) -> dict[str, str]:
        return {"before": self.before, "match": self.match, "after": self.after}


@dataclass(frozen=True, slots=True)
class Query:
    """`q` with its options, as a request or the terminal UI gives them."""

    text: str
    field: str = "any"
    regex: bool = False
    case: bool = False  # True: case-sensitive
    flag: str | None = None  # only samples with this flag (`flags.FLAGS`); None: every sample

    def __post_init__(self) -> None:
        if not self.text:
            raise BadRequest("q must not be empty")
        parse_flag(self.flag)  # BadRequest for an unknown flag
        if len(self.text) > MAX_QUERY_CHARS:
            raise BadRequest(f"q must be at most {MAX_QUERY_CHARS} characters")
        if self.field not in FIELD_CHOICES:
            raise BadRequest(f"field must be one of {', '.join(FIELD_CHOICES)}, got {self.field!r}")

    @property
    def fields(self) -> tuple[str, ...]:
        return ANY_ORDER if self.field == "any" else (self.field,)

    def params(self) -> dict[str, str]:
        """The query string that says this query (defaults left out)."""
        params = {"q": self.text}
        if self.field != "any":
            params["field"] = self.field
        if self.regex:
            params["regex"] = "1"
        if self.case:
            params["case"] = "1"
        if self.flag:
            params["flag"] = self.flag
        return params

    def matcher(self) -> Matcher:
        """The compiled query (BadRequest: why it cannot run); the same object for the same
        query, as a request asks for it several times (and RE2 compiles once)."""
        return _matcher(self)


@dataclass(frozen=True, slots=True)
class Matcher:
    """The compiled query. `needles`: byte strings one of which every matching line holds (in
    `lowered` form when `lower`); None when nothing can be required (every line is decoded)."""

    query: Query
    pattern: Pattern
    needles: tuple[bytes, ...] | None
    lower: bool

    def match(self, data: bytes) -> Found | None:
        """(field, its text, first match) in the decoded line, or None (also for an unreadable
        line)."""
        values = decode_fields(data)
        if values is None:
            return None
        for name in self.query.fields:
            for text in field_texts(values.get(name)):
                found = self.pattern.search(text)
                if found is not None:
                    return Found(name, text, found, values)
        return None


def decode_fields(data: bytes) -> dict[str, Any] | None:
    """prompt, response, label, reward and status of a line; None when the line is no JSON
    object at all."""
    slim = slim_fields(data)  # the same values, without reading past the token arrays
    if slim is not None:
        return slim
    try:
        texts = _fields_decoder.decode(data)
        return {
            "prompt": texts.prompt,
            "response": texts.response,
            "label": texts.label,
            "reward": texts.reward,
            "status": texts.status,
        }
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass  # NaN, a lone surrogate, bad UTF-8 in a field, or not an object: the lenient way
    try:
        decoded = decode_line(data)
    except LineError:
        return None
    return {name: decoded.value(name) for name in DECODED}


def field_texts(value: Any, depth: int = 0) -> Iterator[str]:
    """The text of a field: a string; a chat prompt's message contents (not the roles); any
    other value's strings, and its numbers as written (a label of 0 is found by "0")."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield json.dumps(value)
    elif depth < MAX_NESTING and isinstance(value, dict):
        if "content" in value:
            yield from field_texts(value["content"], depth + 1)
        else:
            for item in value.values():
                yield from field_texts(item, depth + 1)
    elif depth < MAX_NESTING and isinstance(value, list):
        for item in value:
            yield from field_texts(item, depth + 1)


def snippet_of(text: str, found: Span) -> Snippet:
    start, end = found
    lo = max(0, start - SNIPPET_CONTEXT)
    before = ("\u2026" if lo else "") + text[lo:start]
    match = text[start:end]
    if len(match) > SNIPPET_MATCH:
        match = match[:SNIPPET_MATCH] + "\u2026"
    hi = end + SNIPPET_CONTEXT
    after = text[end:hi] + ("\u2026" if hi < len(text) else "")
    return Snippet(before, match, after)


# -- compiling ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)  # each holds up to 8 MB of RE2 automaton once used
def _matcher(query: Query) -> Matcher:
    flags = 0 if query.case else re.IGNORECASE
    try:
        if query.regex:
            pattern = compile_regex(query.text, ignore_case=not query.case)
        else:
            pattern = compile_literal(query.text, case=query.case)
    except PatternError as exc:
        raise BadRequest(f"q {exc}") from None
    if query.regex:
        requirements, ignore_case = _required_literals(query.text, flags)
    else:
        requirements, ignore_case = [[query.text]], not query.case
    best: list[str] = []
    for alternatives in requirements:
        # Each alternative by its longest piece that a (lower-cased) file holds as it is.
        anchors = []
        for text in alternatives:
            pieces = _caseless_pieces(text, not query.regex) if ignore_case else [text]
            anchors.append(max(pieces, key=lambda piece: len(encodings(piece)[0])))
        if all(anchors) and (not best or _weakest(anchors) > _weakest(best)):
            best = anchors
    if not best:
        return Matcher(query, pattern, None, False)
    needles = tuple(form for anchor in best for form in encodings(anchor))
    if ignore_case:
        needles = tuple(n.lower() for n in needles)
    return Matcher(query, pattern, tuple(dict.fromkeys(needles)), ignore_case)


def _weakest(anchors: list[str]) -> int:
    """How selective a set of alternatives is: its shortest one, in bytes."""
    return min(len(encodings(anchor)[0]) for anchor in anchors)


def encodings(text: str) -> tuple[bytes, ...]:
    """`text` as it appears inside a JSON string, as the writers we know write it."""
    raw = json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    ascii_form = json.dumps(text)[1:-1].encode("ascii")
    upper = re.sub(rb"\\u([0-9a-f]{4})", lambda m: b"\\u" + m.group(1).upper(), ascii_form)
    return tuple(dict.fromkeys((raw, ascii_form, upper)))


def _caseless_pieces(text: str, ascii_pairs: bool) -> list[str]:
    """The runs of `text` whose characters have every case form in an ASCII-lowered file: ASCII
    (but k and s in a regex: RE2's case folding matches them to U+212A KELVIN SIGN and U+017F
    LONG S too, unless `ascii_pairs`) and characters without case (CJK, digits, punctuation)."""
    pieces, current = [], []
    for char in text:
        if _case_safe(char, ascii_pairs):
            current.append(char)
        else:
            pieces.append("".join(current))
            current = []
    pieces.append("".join(current))
    return pieces


@functools.lru_cache(maxsize=4096)
def _case_safe(char: str, ascii_pairs: bool) -> bool:
    """Whether the case forms of `char` are itself, or its two ASCII forms (asked of RE2 in
    about 10 us: a 1,000-letter query of distinct letters costs 10 ms, not seconds)."""
    if ascii_pairs and char.isascii():
        return True
    least, greatest = case_forms(char)
    if char.isascii():  # an ASCII letter's other forms are all greater than both ASCII ones
        return {least, greatest} <= {char.lower().encode(), char.upper().encode()}
    return least == greatest


def _required_literals(source: str, flags: int) -> tuple[list[list[str]], bool]:
    """What every match of the regex holds: a list of requirements, each a list of literal
    texts one of which is in every match (a run of literal characters of its top-level
    sequence; an alternation's runs, one per branch), and whether it ignores case (a `(?i)`
    inside counts). Nothing, when in doubt."""
    from re import _parser as parser  # type: ignore[attr-defined]

    try:
        parsed = parser.parse(source, flags)
    except Exception:  # already compiled above; a parser quirk only costs the prefilter
        return [], bool(flags & re.IGNORECASE)
    return _requirements(parsed.data), bool(parsed.state.flags & re.IGNORECASE)


def _requirements(items: Any) -> list[list[str]]:
    from re import _constants as constants  # type: ignore[attr-defined]

    found: list[list[str]] = []
    current: list[str] = []
    for op, value in items:
        if op is constants.LITERAL:
            current.append(chr(value))
            continue
        if current:
            found.append(["".join(current)])
            current = []
        if op is constants.BRANCH:
            branches = [_longest_run(branch) for branch in value[1]]
            if all(branches):
                found.append(branches)
        elif op is constants.SUBPATTERN and not value[1] and not value[2]:
            found += _requirements(value[3])  # a group (without flags of its own) is required
    if current:
        found.append(["".join(current)])
    return found


def _longest_run(items: Any) -> str:
    runs = [texts[0] for texts in _requirements(items) if len(texts) == 1]
    return max(runs, key=len, default="")
