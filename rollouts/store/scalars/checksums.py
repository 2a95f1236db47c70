"""The data checksums of many records at once: tensorboard's CRC-32C (its table, its mask),
computed for all records of one length together with numpy (a dependency of tensorboard).

tensorboard's own `masked_crc32c` is pure Python, a loop per byte: 60,000 small records (one
per scalar, as torch's SummaryWriter writes them) took most of a second. Records of one length
are checked side by side, a byte position at a time over all of them; lengths with few records
(a long image summary, say) use tensorboard's function as it is.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

VECTOR_MIN = 8  # records of one length below this: checked one by one
_MASK_DELTA = 0xA282EAD8


@functools.cache
def _table() -> Any:
    import numpy as np
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import CRC_TABLE

    return np.array(CRC_TABLE, dtype=np.uint32)


def masked_crcs(buffer: bytes, starts: list[int], length: int) -> Any:
    """The masked CRC-32C of `buffer[s : s + length]` for each s in `starts` (a uint32 array)."""
    import numpy as np

    table = _table()
    data = np.frombuffer(buffer, dtype=np.uint8)
    block = data[np.asarray(starts, dtype=np.int64)[:, None] + np.arange(length)]
    crc = np.full(len(starts), 0xFFFFFFFF, dtype=np.uint32)
    for column in block.T:
        crc = table[(crc ^ column) & 0xFF] ^ (crc >> np.uint32(8))
    crc ^= np.uint32(0xFFFFFFFF)
    return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(_MASK_DELTA)


def bad_records(buffer: bytes, spans: list[tuple[int, int]]) -> int | None:
    """The index of the first record in `spans` ((data offset, length), in file order) whose
    data does not match its checksum, or None when all do."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    by_length: dict[int, list[int]] = {}
    for index, (_, length) in enumerate(spans):
        by_length.setdefault(length, []).append(index)
    first_bad: int | None = None
    for length, indexes in by_length.items():
        stored = [struct.unpack_from("<I", buffer, spans[i][0] + length)[0] for i in indexes]
        if len(indexes) < VECTOR_MIN:
            computed = [masked_crc32c(buffer[spans[i][0] : spans[i][0] + length]) for i in indexes]
        else:
            computed = masked_crcs(buffer, [spans[i][0] for i in indexes], length).tolist()
        for index, want, got in zip(indexes, stored, computed, strict=True):
            if want != got:
                first_bad = index if first_bad is None else min(first_bad, index)
                break  # the later ones of this length cannot come first
    return first_bad
