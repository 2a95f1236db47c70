"""What the flags (`flags.py`) judge a response by, measured once per sample in the column pass.

The measures, not the verdicts, are kept (in the columns and the disk cache), so a change of the
flags' thresholds needs no re-read: whether the response is empty, the loop it ends in (its cycle
in characters and how many times the cycle repeats), the share of its text in sentences and lines
that occur three times or more, the share of its prose in a second writing system, and its final
answer against the label.

Cheap first: a response is looked at as its raw JSON bytes, and decoded only when a byte check
says there is something to measure (non-ASCII text, an answer marker, a tail or a probe that
occurs three times or more). Most healthy responses cost a handful of `bytes` calls.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import msgspec

from .answers import answers_match, locate_answer

# One byte per sample (`Columns.text_bits`).
EMPTY = 1  # the response is missing, null or only whitespace
ANSWERED = 2  # a final answer was found (`answers.locate_answer`)
AGREES = 4  # ... and it agrees with the label
DISAGREES = 8  # ... and it does not
NOT_TEXT = 16  # the response is not a string (or the line is unreadable): nothing measured

# A measure is kept only from these floors up (most samples keep none); the thresholds in
# `flags.FlagRules` cannot go below them.
LOOP_FLOOR_REPEATS = 3
LOOP_FLOOR_CHARS = 40
REPEAT_FLOOR_SHARE = 0.2
SCRIPT_FLOOR_SHARE = 0.01
SCRIPT_FLOOR_UNITS = 3

REPEAT_MIN_SEGMENT = 16  # sentences and lines shorter than this are not counted as repeats
REPEAT_MIN_COUNT = 3  # a sentence is "repeated" from its third occurrence
_TAIL_BYTES = 32  # the response's last bytes, looked for earlier in it (a loop's cheap sign)
_PROBES = 8  # evenly spaced pieces looked for elsewhere (mostly-repeated text's cheap sign)
_PROBE_BYTES = 24
_PROBE_MIN_BYTES = 400  # shorter responses are not probed (too short to be mostly repeats)
_LOOP_MAX_PERIOD = 4000  # a cycle longer than this (in characters) is not looked for

_decoder = msgspec.json.Decoder(str)
_SEGMENTS = re.compile(r"\n+|(?<=[.!?\u3002\uff01\uff1f])\s+")  # and CJK . ! ?
# What is not prose: code, maths, quoted text (a prompt quoted back), block quotes, tool calls.
_NOT_PROSE = re.compile(
    r"```.*?(?:```|$)|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\\\[.*?\\\]|\\\(.*?\\\)"
    r"|\"[^\"\n]*\"|“[^”]*”|«[^»]*»|「[^」]*」|『[^』]*』|^[ \t]*>.*$"
    r"|<tool_call>.*?</tool_call>|<code>.*?</code>",
    re.S | re.M,
)
# Writing systems, each counted in units: a word for alphabets (two letters or more: one letter
# is a variable), a character for CJK (a character is about a word).
_SCRIPTS = {
    "Latin": re.compile(r"[A-Za-z\u00c0-\u024f]{2,}"),
    "CJK": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]"),
    "Cyrillic": re.compile(r"[\u0400-\u04ff]{2,}"),
    "Greek": re.compile(r"[\u0370-\u03ff]{2,}"),
    "Arabic": re.compile(r"[\u0600-\u06ff]{2,}"),
    "Hebrew": re.compile(r"[\u0590-\u05ff]{2,}"),
    "Devanagari": re.compile(r"[\u0900-\u097f]{2,}"),
    "Thai": re.compile(r"[\u0e00-\u0e7f]{2,}"),
}
_NON_LATIN = re.compile(
    r"[\u0370-\u06ff\u0900-\u097f\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)


def measure_response(response: Any, label: Any) -> tuple[int, dict[str, list] | None]:
    """(bits, measures) of a response: `response` is its raw JSON bytes (a strict line) or its
    decoded value (a lenient one), None when the key is missing. `measures` holds what passed a
    floor: "loop" [cycle chars, repeats], "repeat" [share, distinct repeated, most repeats],
    "script" [share, main script, second script, its units]; None when nothing did."""
    if isinstance(response, msgspec.Raw | bytes):
        return _measure_raw(bytes(response), label)
    if response is None:
        return EMPTY, None
    if not isinstance(response, str):
        return NOT_TEXT, None
    return _measure_text(response, label)


def _measure_raw(raw: bytes, label: Any) -> tuple[int, dict[str, list] | None]:
    if raw[:1] != b'"':
        return (EMPTY, None) if raw == b"null" else (NOT_TEXT, None)
    size = len(raw)
    look = size < 64 or not raw.isascii() or b"\\u" in raw  # short, or not plain ASCII
    if not look:
        look = b"boxed" in raw or b"fbox" in raw or b"nswer>" in raw or b"NSWER>" in raw
    if not look and size > 3 * _TAIL_BYTES:
        look = raw.count(raw[size - 1 - _TAIL_BYTES : size - 1]) >= LOOP_FLOOR_REPEATS
    if not look and size >= _PROBE_MIN_BYTES:
        step = (size - 2 - _PROBE_BYTES) // _PROBES
        count = raw.count
        for start in range(1, size - _PROBE_BYTES, step):
            if count(raw[start : start + _PROBE_BYTES]) >= REPEAT_MIN_COUNT:
                look = True
                break
    if not look:
        return 0, None
    try:
        text = _decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return NOT_TEXT, None
    return _measure_text(text, label)


def _measure_text(text: str, label: Any) -> tuple[int, dict[str, list] | None]:
    stripped = text.strip()
    if not stripped:
        return EMPTY, None
    bits = 0
    measures: dict[str, list] = {}
    found = locate_answer(text)
    if found is not None:
        bits |= ANSWERED
        match = answers_match(found[0], label)
        if match is not None:
            bits |= AGREES if match else DISAGREES
    loop = tail_loop(stripped)
    if loop is not None:
        measures["loop"] = list(loop)
    repeat = repeated_share(stripped)
    if repeat is not None:
        measures["repeat"] = list(repeat)
    if not text.isascii():
        script = second_script(text)
        if script is not None:
            measures["script"] = list(script)
    return bits, measures or None


def tail_loop(text: str) -> tuple[int, int] | None:
    """(cycle length in characters, repeats) of the cycle `text` ends in, when it repeats at
    least LOOP_FLOOR_REPEATS times over LOOP_FLOOR_CHARS characters; the shortest such cycle."""
    size = len(text)
    probe = min(_TAIL_BYTES, size // LOOP_FLOOR_REPEATS)
    if probe < 1:
        return None
    tail = text[size - probe :]
    earlier = text.rfind(tail, max(0, size - probe - _LOOP_MAX_PERIOD), size - 1)
    if earlier < 0:
        return None
    period = size - probe - earlier
    unit = text[size - period :]
    repeats, end = 1, size - period
    while end >= period and text.startswith(unit, end - period):
        repeats += 1
        end -= period
    if repeats < LOOP_FLOOR_REPEATS or repeats * period < LOOP_FLOOR_CHARS:
        return None
    return period, repeats


def repeated_share(text: str) -> tuple[float, int, int] | None:
    """(share of the text's characters in sentences or lines that occur REPEAT_MIN_COUNT times
    or more, how many distinct ones do, the most times one occurs), from REPEAT_FLOOR_SHARE up.
    Only sentences of REPEAT_MIN_SEGMENT characters or more count as repeats, so a table's rows
    (each its own values) and short words ("Yes.") do not."""
    segments = [s.strip() for s in _SEGMENTS.split(text)]
    counts = Counter(s for s in segments if len(s) >= REPEAT_MIN_SEGMENT)
    total = sum(len(s) for s in segments)
    if not total:
        return None
    repeated = [(s, n) for s, n in counts.items() if n >= REPEAT_MIN_COUNT]
    share = sum(len(s) * n for s, n in repeated) / total
    if share < REPEAT_FLOOR_SHARE:
        return None
    return round(share, 4), len(repeated), max(n for _, n in repeated)


def second_script(text: str) -> tuple[float, str, str, int] | None:
    """(share of the prose's units not in its main writing system, the main one, the second
    one, the second one's units), from SCRIPT_FLOOR_SHARE and SCRIPT_FLOOR_UNITS up. Code,
    maths, quoted text and block quotes are not prose and are left out."""
    prose = _NOT_PROSE.sub(" ", text)
    if _NON_LATIN.search(prose) is None:
        return None
    units = {name: len(pattern.findall(prose)) for name, pattern in _SCRIPTS.items()}
    ranked = sorted(units.items(), key=lambda item: -item[1])
    total = sum(units.values())
    (main, _), (second, second_units) = ranked[0], ranked[1]
    other = total - ranked[0][1]
    if not total or other < SCRIPT_FLOOR_UNITS or other / total < SCRIPT_FLOOR_SHARE:
        return None
    return round(other / total, 4), main, second, second_units
