"""A local `tokenizer.json` (the `tokens` extra: the `tokenizers` library), to show a sample's
token ids as text. Nothing is downloaded: `Tokenizer.from_file` reads the one file named by
ROLLOUTS_TOKENIZER (`visualize --tokenizer PATH`, RELAX_TOKENIZER).

A tokenizer that cannot be used shows no text (the ids and log-probs are still shown); the
system check (rollouts.W016) says why at start-up, so a request never fails over it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .install import install_hint

INSTALL_TOKENS = f"install the `tokens` extra: {install_hint('tokens')}"
_MAX_ID = 2**32 - 1  # the library takes u32 ids; anything else raises OverflowError


def tokenizers_available() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def tokenizer_problem(path: Path) -> str | None:
    """Why `path` cannot be used as a tokenizer (for the system check), or None."""
    if not tokenizers_available():
        return f"the `tokenizers` package is not installed; {INSTALL_TOKENS}"
    try:
        _load(*_identity(path))
    except OSError as exc:
        return f"{path} cannot be read: {exc.strerror or exc}"
    except Exception as exc:  # the library raises a bare Exception for a file it cannot parse
        return f"{path} is not a tokenizer.json the `tokenizers` library reads: {exc}"
    return None


def load_tokenizer(path: Path | None) -> TokenText | None:
    """The tokenizer at `path` (read once per version of the file), or None: unset/unusable."""
    if path is None or not tokenizers_available():
        return None
    try:
        return TokenText(_load(*_identity(path)))
    except Exception:  # said at start-up by the system check; the page shows ids only
        return None


def _identity(path: Path) -> tuple[str, int, int]:
    st = os.stat(path)
    return str(path), st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int, size: int) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


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
