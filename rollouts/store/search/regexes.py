"""User patterns (a search's `q`), run by RE2 so that no pattern can stall the process.

Python's `re` backtracks: `^(\\w+\\s?)+[.!?]$` over a long response runs for hours with the GIL
held, and every other request of the process waits. RE2 (the `google-re2` binding) never
backtracks: a match costs time linear in the text (20 MB: 2-50 ms, or about 3.5 s for a pattern
whose automaton outgrows its 8 MB and falls back to simulation), and it releases the GIL.

Patterns are written in Python's syntax: Python's own parser reads them (a mistake is reported
as Python reports it) and the tree is written out for RE2 meaning what Python means (`\\w`,
`\\d`, `\\s` Unicode-wide, `\\Z`, `$` before a final newline). What needs backtracking
(backreferences, lookarounds, conditionals, atomic groups, possessive quantifiers) is refused.
Two differences remain, documented: `\\b`/`\\B` know ASCII word characters only, and ignoring
case follows Unicode simple case folding (`i` is not U+0130 or U+0131, as it is for Python).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import re2  # type: ignore[import-untyped]

# The compiled-pattern class of the binding itself: `re2.compile` keeps the last 128 patterns
# in a module cache (8 MB of automaton each, at worst), and wraps every match in an object.
from re2 import _re2

Span = tuple[int, int]  # a match in a text, in characters
_OPTIONS = re2.Options()
_OPTIONS.never_capture = True  # only where the whole match is, and groups cost time
_OPTIONS.log_errors = False  # no "DFA out of memory" lines on stderr
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_SURROGATE = re.compile("[\ud800-\udfff]")
_WORD = r"\p{L}\p{N}_"  # Python's \w: what str.isalnum() says, and _
_LAST = 0x10FFFF


class PatternError(ValueError):
    """A pattern the search cannot run; the message says why and continues "q ..."."""


def _hex(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _class_of(runs: Sequence[Span]) -> str:
    return "".join(_hex(a) if a == b else f"{_hex(a)}-{_hex(b)}" for a, b in runs)


# Python's \s: what str.isspace() says (nothing above U+3000 is a space: a test checks).
_SPACES = [(m.start(), m.end() - 1) for m in re.finditer(r"\s+", "".join(map(chr, range(0x3001))))]
_GAPS = zip([(-1, -1), *_SPACES], [*_SPACES, (_LAST + 1, 0)], strict=True)
# Each category as Python spells it, and as RE2 class items meaning the same (\W: none can).
_CATEGORIES = {
    sre.CATEGORY_DIGIT: (r"\d", r"\p{Nd}"),
    sre.CATEGORY_NOT_DIGIT: (r"\D", r"\P{Nd}"),
    sre.CATEGORY_WORD: (r"\w", _WORD),
    sre.CATEGORY_NOT_WORD: (r"\W", ""),
    sre.CATEGORY_SPACE: (r"\s", _class_of(_SPACES)),
    sre.CATEGORY_NOT_SPACE: (r"\S", _class_of([(a + 1, b - 1) for (_, a), (b, _) in _GAPS])),
}
_NO_BACKTRACKING = (
    "which the search does not accept: it runs patterns on RE2, which never backtracks "
    "(no backreferences, lookarounds, conditionals, atomic groups or possessive quantifiers)"
)
_REFUSED = {
    sre.GROUPREF: r"a backreference (\1 or (?P=name))",
    sre.GROUPREF_EXISTS: "a conditional group ((?(1)...|...))",
    sre.ATOMIC_GROUP: "an atomic group ((?>...))",
    sre.POSSESSIVE_REPEAT: "a possessive quantifier (*+, ++, ?+)",
}


class Pattern:
    """A compiled pattern: where it matches in a text, in characters (as Python counts)."""

    __slots__ = ("_regexp", "source")

    def __init__(self, source: str) -> None:
        self.source = source  # RE2's syntax
        regexp = _re2.RE2(source.encode(), _OPTIONS)
        if not regexp.ok():
            why = regexp.error().decode(errors="replace")
            raise PatternError(f"is not accepted by the search's regex engine (RE2): {why}")
        self._regexp = regexp

    def search(self, text: str) -> Span | None:
        """The first match, or None."""
        return next(self.finditer(text), None)

    def finditer(self, text: str) -> Iterator[Span]:
        """Each match from left to right, without overlaps (after an empty match, the next
        starts a character later). Each step costs time linear in what is left of the text."""
        data = _utf8(text)
        size, same = len(data), len(data) == len(text)  # ASCII: bytes are characters
        position = counted = chars = 0  # counted: bytes whose characters are counted (chars)
        while True:
            start, end = self._regexp.Match(_UNANCHORED, data, position, size)[0]
            if start < 0:
                return
            if same:
                yield start, end
            else:
                first = chars + _re2.BytesToCharLen(data, counted, start)
                counted, chars = end, first + _re2.BytesToCharLen(data, start, end)
                yield first, chars
            if end > start:
                position = end
            elif end >= size:
                return
            else:
                position = end + (1 if same else _re2.CharLenToBytes(data, end, 1))


def _utf8(text: str) -> bytes:
    """The text for RE2; a lone surrogate (from a `\\ud800` escape) as U+FFFD, one character
    for one, so that positions stay those of `text`."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode()


def _char(code: int) -> str:
    """One character as RE2 syntax, escaped unless it is an ASCII letter or digit."""
    if 0xD800 <= code < 0xE000:
        code = 0xFFFD  # as `_utf8` gives it
    return chr(code) if code < 0x80 and chr(code).isalnum() else _hex(code)


def compile_literal(text: str, case: bool) -> Pattern:
    """`text` itself. Ignoring case, an ASCII letter matches its two ASCII forms only (not
    U+0130, U+0131, U+212A KELVIN SIGN or U+017F LONG S: they are other letters, and a
    lower-cased file finds the ASCII ones fast), any other letter every form Unicode's simple
    case folding gives it (É for é)."""
    parts = []
    for char in text:
        code = ord(char)
        if case or (char.isascii() and not char.isalpha()):
            parts.append(_char(code))
        elif char.isascii():
            parts.append(f"[{char.lower()}{char.upper()}]")
        else:
            parts.append(f"(?i:{_char(code)})")
    return Pattern("".join(parts))


def compile_regex(source: str, ignore_case: bool) -> Pattern:
    """A Python regular expression, as RE2 runs it (PatternError: why it cannot be)."""
    try:
        parsed = sre_parse.parse(source, re.IGNORECASE if ignore_case else 0)
        flags = parsed.state.flags
        _check_flags(flags)
        switch = _letters(flags)
        body = _sequence(parsed, flags)
    except re.error as exc:
        raise PatternError(f"is not a valid regular expression: {exc}") from None
    except OverflowError as exc:
        raise PatternError(f"is not a valid regular expression: {exc}") from None
    except RecursionError:
        raise PatternError("is not a valid regular expression: it nests too deeply") from None
    return Pattern(f"(?{switch}){body}" if switch else body)


def case_forms(char: str) -> tuple[bytes, bytes]:
    """The least and the greatest (as UTF-8) of the characters `char` matches ignoring case:
    both `char` itself when it has no other case."""
    regexp = _re2.RE2(f"(?i){_char(ord(char))}".encode(), _OPTIONS)
    known, least, greatest = regexp.PossibleMatchRange(8)
    return (least, greatest) if known else (b"", b"\xff")  # unknown: as if it had every form


# -- Python's tree as RE2 syntax ------------------------------------------------------------------
def _letters(flags: int) -> str:
    return "".join(c for flag, c in ((re.I, "i"), (re.M, "m"), (re.S, "s")) if flags & flag)


def _check_flags(flags: int) -> None:
    if flags & (re.ASCII | re.LOCALE):
        raise PatternError(
            "uses the ASCII flag ((?a)), which the search does not accept: \\w, \\d and \\s "
            "are always Unicode-wide"
        )


def _sequence(items: Any, flags: int) -> str:
    return "".join(_item(op, av, flags) for op, av in items)


def _item(op: Any, av: Any, flags: int) -> str:
    if op is sre.LITERAL:
        return _char(av)
    if op is sre.NOT_LITERAL:
        return f"[^{_char(av)}]"
    if op is sre.ANY:
        return "."  # the s flag decides about a newline, as in Python
    if op is sre.IN:
        return _class(av, flags)
    if op is sre.BRANCH:
        return "(?:" + "|".join(_sequence(branch, flags) for branch in av[1]) + ")"
    if op is sre.SUBPATTERN:
        _, add, remove, body = av
        _check_flags(add | remove)
        inner = (flags | add) & ~remove
        switch = _letters(add) + ("-" + _letters(remove) if _letters(remove) else "")
        return f"(?{switch}:{_sequence(body, inner)})"
    if op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
        low, high, body = av
        lazy = "?" if op is sre.MIN_REPEAT else ""
        return f"(?:{_sequence(body, flags)}){_quantifier(low, high)}{lazy}"
    if op is sre.AT:
        return _anchor(av, flags)
    if op is sre.ASSERT or op is sre.ASSERT_NOT:
        ahead = av[0] > 0  # the direction: 1 ahead, -1 behind
        syntax = ("(?" if ahead else "(?<") + ("=" if op is sre.ASSERT else "!") + "...)"
        raise PatternError(
            f"uses a look{'ahead' if ahead else 'behind'} ({syntax}), {_NO_BACKTRACKING}"
        )
    raise PatternError(f"uses {_REFUSED.get(op, str(op).lower())}, {_NO_BACKTRACKING}")


def _quantifier(low: int, high: int) -> str:
    unbounded = high == sre.MAXREPEAT
    if (low, unbounded) == (0, True):
        return "*"
    if (low, unbounded) == (1, True):
        return "+"
    if unbounded:
        return f"{{{low},}}"
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _anchor(code: Any, flags: int) -> str:
    if code is sre.AT_END and not flags & re.M:
        return r"(?:\n?\z)"  # Python's $: at the end, or before a newline that ends the text
    return {
        sre.AT_BEGINNING: "^",  # at each line's start with the m flag, in both
        sre.AT_BEGINNING_STRING: r"\A",
        sre.AT_END: "$",  # with the m flag: before each newline and at the end, in both
        sre.AT_END_STRING: r"\z",
        sre.AT_BOUNDARY: r"\b",  # ASCII word characters only (documented)
        sre.AT_NON_BOUNDARY: r"\B",
    }[code]


def _class(items: list[tuple[Any, Any]], flags: int) -> str:
    negate = bool(items) and items[0][0] is sre.NEGATE
    parts, not_word = [], False
    for op, av in items[1:] if negate else items:
        if op is sre.LITERAL:
            parts.append(_char(av))
        elif op is sre.RANGE:
            parts.append(f"{_hex(av[0])}-{_hex(av[1])}")
        elif av is sre.CATEGORY_NOT_WORD:
            not_word = True
        else:
            parts.append(_CATEGORIES[av][1])
    inner = "".join(parts)
    if not not_word:
        return f"[{'^' if negate else ''}{inner}]"
    if not negate:  # \W, or more: RE2 has no class for "none of these categories" with others
        return f"(?:[^{_WORD}]|[{inner}])" if inner else f"[^{_WORD}]"
    if not inner:
        return f"[{_WORD}]"
    return _spelled_out(items, flags)


def _spelled_out(items: list[tuple[Any, Any]], flags: int) -> str:
    """A negated class holding \\W (`[^\\W\\d_]`, the letters): the word characters less the
    others, which RE2 cannot say. Python's `re` lists them (a class matches one character: no
    backtracking), with Python's case folding, so RE2 is told not to fold them again."""
    python = "".join(_python_item(op, av) for op, av in items)
    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, _LAST + 1)))
    runs = [
        (_code(found.start()), _code(found.end() - 1))
        for found in re.finditer(f"[{python}]+", every, flags & re.IGNORECASE)
    ]
    return f"(?-i:[{_class_of(runs)}])" if runs else f"[^\\x{{0}}-{_hex(_LAST)}]"


def _python_item(op: Any, av: Any) -> str:
    if op is sre.NEGATE:
        return "^"
    if op is sre.LITERAL:
        return f"\\U{av:08x}"
    if op is sre.RANGE:
        return f"\\U{av[0]:08x}-\\U{av[1]:08x}"
    return _CATEGORIES[av][0]


def _code(index: int) -> int:
    """The code point at `index` of every character but the surrogates, in order."""
    return index if index < 0xD800 else index + 0x800
