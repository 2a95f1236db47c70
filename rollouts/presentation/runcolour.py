"""A run's colour, the same on every page: derived from its name alone, so a run looks the
same on the run picker, on its own trends page and overlaid on another run's.

The rule (lib/run-colour.js is its twin in the browser; both are tested against one list):
the 32-bit FNV-1a hash of the name's UTF-8 bytes (offset basis 0x811C9DC5, prime 0x01000193;
for each byte: xor it in, then multiply by the prime modulo 2**32), modulo `RUN_COLOURS`.
The index names a palette colour, `--rv-run-<index>` in viewer.css, applied by the class
`rv-run-colour-<index>`. Two runs may share a colour (the palette has eight); the legend's
names tell them apart."""

from __future__ import annotations

RUN_COLOURS = 8  # --rv-run-0 ... --rv-run-7 (viewer.css)
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv1a32(text: str) -> int:
    """The 32-bit FNV-1a hash of `text`'s UTF-8 bytes."""
    value = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return value


def run_colour_index(name: str) -> int:
    """The palette index of the run called `name` (0 to RUN_COLOURS - 1)."""
    return fnv1a32(name) % RUN_COLOURS
