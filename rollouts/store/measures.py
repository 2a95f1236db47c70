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

import functools
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
_SHORT_BYTES = 128  # a response this short (in JSON bytes) is decoded and measured whole
_ANSWER_TAIL_BYTES = 512  # where the final \\boxed{} is looked for first
_TAIL_BYTES = 32  # the response's last bytes, looked for earlier in it (a loop's cheap sign)
_PROBE_MIN_BYTES = 400  # shorter responses are not looked at for repeated sentences
_PROBE_WINDOW_BYTES = 8192  # repeated sentences are looked for in the last 8 kB first
_LOOP_WINDOW_BYTES = 4096  # a loop's tail is looked for in the response's last bytes
_MARKERS = (b"boxed", b"fbox", b"nswer>", b"NSWER>")  # an answer's markers, as bytes
_PLAIN_BOXED = re.compile(rb"\\\\boxed\{([ -!#-\[\]-z|~]*)\}")  # no braces, escapes, quotes
_LOOP_MAX_PERIOD = 4000  # a cycle longer than this (in characters) is not looked for

# A chat template's end of turn or text, which a response may keep after its content.
END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "</s>", "<end_of_turn>")
_END_TOKENS_RAW = frozenset(token.encode() for token in END_TOKENS)
_END_TOKEN_MAX_BYTES = max(map(len, _END_TOKENS_RAW))
_ESCAPED_SPACES = (b"\\n", b"\\t", b"\\r")  # a newline, a tab, a return as JSON writes them

_decoder = msgspec.json.Decoder(str)
_encoder = msgspec.json.Encoder()
BACKSLASH = b"\\"
NEWLINE = b"\\n"  # a newline as JSON writes it
BOXED_RAW = b"\\\\boxed{"  # `\\boxed{` as JSON writes it
# Sentence and line ends (CJK too), each made ". " before the text is cut into pieces.
_TEXT_ENDS = ("? ", "! ", ".\n", "\n", "\u3002", "\uff01", "\uff1f")
_RAW_ENDS = tuple(end.encode("unicode_escape") for end in _TEXT_ENDS[:4]) + tuple(
    end.encode() for end in _TEXT_ENDS[4:]
)
# What is not prose: code, maths, quoted text (a prompt quoted back), block quotes, tool calls.
_NOT_PROSE = re.compile(  # (the lookahead: one test where nothing can start, most places)
    r"(?=[`$\\\"“«「『<> \t])"
    r"(?:```.*?(?:```|\Z)|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\\\[.*?\\\]|\\\(.*?\\\)"
    r"|\"[^\"\n]*\"|“[^”]*”|«[^»]*»|「[^」]*」|『[^』]*』|^[ \t]*>.*$"
    r"|<tool_call>.*?</tool_call>|<code>.*?</code>"
    r"|</?think>|<\|[^|\n]*\|>|\\[A-Za-z]+)",  # markup: tags, special tokens, LaTeX commands
    re.S | re.M,
)
# Writing systems, each counted in units: a word for alphabets (two letters or more: one letter
# is a variable), a character for CJK (a character is about a word; found as runs).
_SCRIPTS = {
    "Latin": re.compile(r"[A-Za-z\u00c0-\u024f]{2,}"),
    "CJK": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"),
    "Cyrillic": re.compile(r"[\u0400-\u04ff]{2,}"),
    "Greek": re.compile(r"[\u0370-\u03ff]{2,}"),
    "Arabic": re.compile(r"[\u0600-\u06ff]{2,}"),
    "Hebrew": re.compile(r"[\u0590-\u05ff]{2,}"),
    "Devanagari": re.compile(r"[\u0900-\u097f]{2,}"),
    "Thai": re.compile(r"[\u0e00-\u0e7f]{2,}"),
    "Hangul": re.compile(r"[\uac00-\ud7af]+"),  # Korean: a word (spaced) of syllables
}
_OTHER_ALPHABETS = re.compile(r"[\u0370-\u06ff\u0900-\u097f\u0e00-\u0e7f\uac00-\ud7af]")
_NON_LATIN = re.compile(
    r"[\u0370-\u06ff\u0900-\u097f\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)


def measure_response(response: Any, label: Any) -> tuple[int, dict[str, list] | None]:
    """(bits, measures) of a response: `response` is its raw JSON bytes (a strict line) or its
    decoded value (a lenient one), None when the key is missing. `measures` holds what passed a
    floor: "loop" [cycle chars, repeats], "repeat" [share, distinct repeated, most repeats],
    "script" [share, main script, second script, its units]; None when nothing did."""
    kind = type(response)
    if kind is msgspec.Raw or kind is bytes:
        return _measure_raw(bytes(response), label)
    if response is None:
        return EMPTY, None
    if not isinstance(response, str):
        return NOT_TEXT, None
    # A lenient line's response: measured as its JSON bytes, so by the same cheap checks (and
    # windows) as a strict line's, to the same measures.
    try:
        raw = _encoder.encode(response)
    except (msgspec.EncodeError, UnicodeEncodeError):  # a lone surrogate: measured as text
        return _measure_text(response, label)
    return _measure_raw(raw, label)


def _measure_raw(raw: bytes, label: Any) -> tuple[int, dict[str, list] | None]:
    if raw[:1] != b'"':
        return (EMPTY, None) if raw == b"null" else (NOT_TEXT, None)
    size = len(raw)
    if size <= _SHORT_BYTES:  # short (perhaps only whitespace): everything, decoded
        return _measure_text(_decoded(raw), label)
    # Each check reads as little as it can: the answer's markers in the last bytes (the whole
    # only when they are not there), a loop's tail in the last few kB, repeats around 3 probes.
    other_script = not raw.isascii()  # the writer's ensure_ascii=False: CJK is raw UTF-8
    tail = size - _ANSWER_TAIL_BYTES
    boxed_late = raw.find(b"boxed", tail) >= 0
    tagged_late = raw.find(b"nswer>", tail) >= 0
    anywhere = boxed_late or tagged_late or any(marker in raw for marker in _MARKERS)
    stop = size - 1  # the closing quote; a chat template's end token before it is no content
    if raw[stop - 1] == 62:  # ">"
        stop = _before_end_tokens(raw, stop)
    end = raw[max(1, stop - _TAIL_BYTES) : stop]
    loops = raw.count(end, max(0, stop - _LOOP_WINDOW_BYTES)) >= LOOP_FLOOR_REPEATS
    repeats = size >= _PROBE_MIN_BYTES and _probes_repeat(raw)
    if not (other_script or anywhere or loops or repeats):
        return 0, None
    text = None
    found: tuple[str, str, int, int] | None = None
    if boxed_late and not tagged_late:  # the common case: a final \boxed{} near the end
        found = _plain_boxed(raw, tail)
        if found is None:
            tail_text = _tail_text(raw)
            found = locate_answer(tail_text) if tail_text is not None else None
    if found is None and anywhere:
        text = _decoded(raw)
        found = locate_answer(text)
    bits = _answer_bits(found, label)
    if not (other_script or loops or repeats):
        return bits, None
    text = _decoded(raw) if text is None else text
    if not text.strip():
        return EMPTY, None
    return bits, _text_measures(text, loops, repeats, other_script)


def _before_end_tokens(raw: bytes, stop: int) -> int:
    """Where the response's content ends in `raw` (up to `stop`): before the chat template's
    end tokens it ends with (`<|im_end|>`, `</s>`...), which a loop is not looked for in."""
    while stop > 1 and raw[stop - 1] == 62:  # ">"
        if raw.endswith(b"<|im_end|>", 0, stop):  # Qwen's, the most common
            stop -= 10
        else:
            start = raw.rfind(b"<", max(1, stop - _END_TOKEN_MAX_BYTES), stop)
            if start < 0 or raw[start:stop] not in _END_TOKENS_RAW:
                break
            stop = start
        while stop > 2:  # and the whitespace before it
            if raw[stop - 1] == 32:
                stop -= 1
            elif raw[stop - 2 : stop] in _ESCAPED_SPACES and raw[stop - 3] != 92:  # not "\\n"
                stop -= 2
            else:
                break
    return stop


def _probes_repeat(raw: bytes) -> bool:
    """Whether the response's last _PROBE_WINDOW_BYTES hold repeated sentences: its cheap sign,
    read from the raw bytes (degenerate text repeats most near its end, where a loop takes
    over). First whether any sentence or line occurs twice more (a few C calls), then
    whether the repeats make up half the floor of `repeated_share`."""
    window = raw[-_PROBE_WINDOW_BYTES:]
    pieces = window.replace(NEWLINE, b". ").split(b". ")  # sentences and lines, in one cut
    blank = pieces.count(b"")
    if len(pieces) - len(set(pieces)) - max(0, blank - 1) < REPEAT_MIN_COUNT - 1:
        return False  # no piece occurs twice more (blank ones aside)
    share, _ = _repeats(window, _RAW_ENDS, b". ")
    return share >= REPEAT_FLOOR_SHARE / 2


def _plain_boxed(raw: bytes, tail: int) -> tuple[str, str, int, int] | None:
    """The last `\\boxed{...}` read from the raw bytes after `tail` when its content is plain
    (no braces, escapes or quotes), as `locate_answer` finds it (the caller knows no
    `</answer>` is near the end; an `\\fbox{}` after a final `\\boxed{}` is not looked for);
    None otherwise (then the text is decoded)."""
    start = raw.rfind(BOXED_RAW, max(0, tail))
    if start < 0:
        return None
    found = _PLAIN_BOXED.match(raw, start)
    if found is None:
        return None
    answer = found.group(1).strip()
    return (answer.decode(), "boxed", -1, -1) if answer else None


def _decoded(raw: bytes) -> str:
    try:
        return _decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):  # never: the line decoded
        return ""


def _tail_text(raw: bytes) -> str | None:
    """The response's last _ANSWER_TAIL_BYTES or so, decoded, from a space (which no JSON escape
    holds, so the cut never splits one); None when there is no such space."""
    cut = raw.find(b" ", len(raw) - _ANSWER_TAIL_BYTES)
    if cut < 0:
        return None
    try:
        return _decoder.decode(b'"' + raw[cut:])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def _answer_bits(found: tuple[str, str, int, int] | None, label: Any) -> int:
    if found is None:
        return 0
    if isinstance(label, str | int | float):  # hashable: the step's labels and answers repeat
        match = _cached_match(found[0], label)
    else:
        match = answers_match(found[0], label)
    return ANSWERED | (0 if match is None else AGREES if match else DISAGREES)


_cached_match = functools.lru_cache(maxsize=8192)(answers_match)


def _measure_text(text: str, label: Any) -> tuple[int, dict[str, list] | None]:
    if not text.strip():
        return EMPTY, None
    bits = _answer_bits(locate_answer(text), label)
    return bits, _text_measures(text, True, True, not text.isascii())


def _text_measures(
    text: str, loops: bool, repeats: bool, other_script: bool
) -> dict[str, list] | None:
    stripped = text.strip()
    measures: dict[str, list] = {}
    loop = tail_loop(without_end_tokens(text)) if loops else None
    if loop is not None:
        measures["loop"] = list(loop)
    repeat = repeated_share(stripped) if repeats else None
    if repeat is not None:
        measures["repeat"] = list(repeat)
    script = second_script(text) if other_script else None
    if script is not None:
        measures["script"] = list(script)
    return measures or None


def without_end_tokens(text: str) -> str:
    """`text` without the chat template's end tokens it ends with (and the space between)."""
    while True:
        stripped = text.rstrip()
        token = next((t for t in END_TOKENS if stripped.endswith(t)), None)
        if token is None:
            return text
        text = stripped[: -len(token)]


def tail_loop(text: str) -> tuple[int, int] | None:
    """(cycle length in characters, repeats) of the cycle `text` ends in, when it repeats at
    least LOOP_FLOOR_REPEATS times over LOOP_FLOOR_CHARS characters; the shortest such cycle.
    The repeats are the whole cycles in the longest end of `text` that has the cycle as its
    period, wherever the cycle starts (`prefix + unit * n` repeats `n` times, also when the
    text's trailing whitespace is cut)."""
    body = text.rstrip()
    size = len(body)
    probe = min(_TAIL_BYTES, size // LOOP_FLOOR_REPEATS)
    if probe < 1:
        return None
    tail = body[size - probe :]
    earlier = body.rfind(tail, max(0, size - probe - _LOOP_MAX_PERIOD), size - 1)
    if earlier < 0:
        return None
    period = size - probe - earlier
    unit = body[size - period :]
    start = size - period
    while start >= period and body.startswith(unit, start - period):
        start -= period
    while start > 0 and body[start - 1] == body[start - 1 + period]:  # a part of a cycle
        start -= 1
    run = size - start
    for k, char in enumerate(text[size : size + period]):  # trailing whitespace of the cycle
        if char != body[size - period + k]:
            break
        run += 1
    repeats = run // period
    if repeats < LOOP_FLOOR_REPEATS or repeats * period < LOOP_FLOOR_CHARS:
        return None
    return period, repeats


def repeated_share(text: str) -> tuple[float, int, int] | None:
    """(share of the text's characters in sentences or lines that occur REPEAT_MIN_COUNT times
    or more, how many distinct ones do, the most times one occurs), from REPEAT_FLOOR_SHARE up.
    Only sentences of REPEAT_MIN_SEGMENT characters or more count as repeats, so a table's rows
    (each its own values) and short words ("Yes.") do not."""
    share, repeated = _repeats(text, _TEXT_ENDS, ". ")
    if share < REPEAT_FLOOR_SHARE:
        return None
    return round(share, 4), len(repeated), max(repeated)


def _repeats(text: Any, ends: tuple, stop: Any) -> tuple[float, list[int]]:
    """(the share of `text` in pieces that occur REPEAT_MIN_COUNT times or more, each such
    piece's count): `text` (str, or the raw bytes) cut at every sentence or line end (`ends`,
    each made `stop` first), C-speed splitting and counting."""
    if not text:
        return 0.0, []
    text += ends[3]  # a newline: the last sentence ends as the others do ("Again." is "Again")
    for end in ends:
        text = text.replace(end, stop)
    counts = Counter(text.split(stop))
    repeated = [
        (len(piece), n)
        for piece, n in counts.items()
        if n >= REPEAT_MIN_COUNT and len(piece.strip()) >= REPEAT_MIN_SEGMENT
    ]
    return sum(size * n for size, n in repeated) / len(text), [n for _, n in repeated]


def second_script(text: str) -> tuple[float, str, str, int] | None:
    """(share of the prose's units not in its main writing system, the main one, the second
    one, the second one's units), from SCRIPT_FLOOR_SHARE and SCRIPT_FLOOR_UNITS up. Code,
    maths, quoted text and block quotes are not prose and are left out."""
    prose = _NOT_PROSE.sub(" ", text)
    if _NON_LATIN.search(prose) is None:
        return None
    # CJK found in runs (a character each), fewer matches than one a character; the other
    # alphabets only when one of their letters is there (most texts: Latin and CJK only).
    others = _OTHER_ALPHABETS.search(prose) is not None
    units = dict.fromkeys(_SCRIPTS, 0)
    for name, pattern in _SCRIPTS.items():
        if name == "CJK":
            units[name] = sum(map(len, pattern.findall(prose)))
        elif name == "Latin" or others:
            units[name] = len(pattern.findall(prose))
    ranked = sorted(units.items(), key=lambda item: -item[1])
    total = sum(units.values())
    (main, _), (second, second_units) = ranked[0], ranked[1]
    other = total - ranked[0][1]
    if not total or other < SCRIPT_FLOOR_UNITS or other / total < SCRIPT_FLOOR_SHARE:
        return None
    return round(other / total, 4), main, second, second_units
