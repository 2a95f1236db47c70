"""A local `tokenizer.json` (the `tokens` extra: the `tokenizers` library), to show a sample's
token ids as text. Nothing is downloaded: the one file named by ROLLOUTS_TOKENIZER
(`visualize --tokenizer PATH`, RELAX_TOKENIZER) is read here and handed to
`Tokenizer.from_str`.

A tokenizer that cannot be used shows no text (the ids and log-probs are still shown); the
system check (rollouts.W016) says why at start-up, so a request never fails over it. Only a
regular file is read, and opening it never blocks: `O_NONBLOCK`, then `fstat`. A FIFO, a device
or a directory is refused (the library's own `from_file` would wait on a FIFO for a writer,
holding the GIL: the whole process, not one request, would stop).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..install import install_hint

INSTALL_TOKENS = f"install the `tokens` extra: {install_hint('tokens')}"
_MAX_ID = 2**32 - 1  # the library takes u32 ids; anything else raises OverflowError
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024  # the largest tokenizer.json read (big vocabs: ~30 MB)
_OPEN_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
_KEPT = 4  # versions of tokenizer files kept parsed
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
    stat.S_IFSOCK: "a socket",
}

_loaded: OrderedDict[tuple[str, int, int, int, int], Any] = OrderedDict()
_said: dict[str, str] = {}  # path -> the last problem logged of it
_lock = threading.Lock()
logger = logging.getLogger("rollouts")


class TokenizerUnusable(Exception):
    """Why the file named cannot be used as a tokenizer, in words a page can show."""


def tokenizers_available() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def tokenizer_problem(path: Path) -> str | None:
    """Why `path` cannot be used as a tokenizer (for the system check and `visualize`), or None."""
    if not tokenizers_available():
        return f"the `tokenizers` package is not installed; {INSTALL_TOKENS}"
    try:
        _load(path)
    except TokenizerUnusable as exc:
        return f"{path} {exc}"
    return None


def load_tokenizer(path: Path | None) -> TokenText | None:
    """The tokenizer at `path` (read once per version of the file), or None: unset/unusable."""
    return tokenizer_state(path)[0]


def tokenizer_state(path: Path | None) -> tuple[TokenText | None, str | None]:
    """(the tokenizer, None), or (None, why it cannot be used now: for the page's warning);
    (None, None) when no tokenizer is set or the package is missing (said at start-up)."""
    if path is None or not tokenizers_available():
        return None, None
    try:
        tokenizer = TokenText(_load(Path(path)))
    except TokenizerUnusable as exc:
        problem = f"the tokenizer file {exc}"
    else:
        if _said:
            with _lock:
                _said.pop(str(path), None)
        return tokenizer, None
    with _lock:
        said = _said.get(str(path))
        _said[str(path)] = problem
    if said != problem:  # once per change, not once per page
        logger.warning("%s (%s); token ids are shown without their text", problem, path)
    return None, problem


def _load(path: Path) -> Any:
    """The parsed tokenizer of the file now at `path`: read and parsed once per version."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise TokenizerUnusable(f"cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a file")
            raise TokenizerUnusable(f"is not a regular file ({kind}): name a tokenizer.json")
        if st.st_size > MAX_TOKENIZER_BYTES:
            raise TokenizerUnusable(
                f"is {st.st_size:,} bytes, more than a tokenizer.json"
                f" ({MAX_TOKENIZER_BYTES:,} at most)"
            )
        key = (str(path), st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        with _lock:
            if key in _loaded:
                _loaded.move_to_end(key)
                return _loaded[key]
        tokenizer = _parse(_read_all(fd, st.st_size))
    except OSError as exc:
        raise TokenizerUnusable(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    with _lock:
        _loaded[key] = tokenizer
        while len(_loaded) > _KEPT:
            _loaded.popitem(last=False)
    return tokenizer


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total <= MAX_TOKENIZER_BYTES:
        chunk = os.read(fd, max(size - total, 0) + 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise TokenizerUnusable(f"is more than a tokenizer.json ({MAX_TOKENIZER_BYTES:,} bytes)")


def _parse(data: bytes) -> Any:
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_str(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TokenizerUnusable(f"is not a tokenizer.json (not UTF-8: {exc.reason})") from None
    except Exception as exc:  # the library raises a bare Exception for a file it cannot parse
        raise TokenizerUnusable(
            f"is not a tokenizer.json the `tokenizers` library reads: {exc}"
        ) from None


class TokenText:
    """Token ids -> the text each one stands for (special tokens included)."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def pieces(self, ids: Sequence[int | None]) -> list[str | None]:
        """Each id decoded on its own; None for an id the tokenizer cannot hold. A byte-level
        token that is part of one multi-byte character decodes to U+FFFD, as it would alone."""
        usable = [i for i, t in enumerate(ids) if t is not None and 0 <= t <= _MAX_ID]
        texts: list[str | None] = [None] * len(ids)
        if not usable:
            return texts
        try:
            decoded = self._tokenizer.decode_batch(
                [[ids[i]] for i in usable], skip_special_tokens=False
            )
        except Exception:  # a broken vocabulary: ids only, never a failed page
            return texts
        vocab_size = self._tokenizer.get_vocab_size(with_added_tokens=True)
        for i, text in zip(usable, decoded, strict=True):
            token_id = ids[i]
            # An id beyond the vocabulary decodes to "" silently: that is no text, not empty.
            texts[i] = text if token_id is not None and token_id < vocab_size else None
        return texts
