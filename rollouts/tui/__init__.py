"""The terminal UI (`visualize --tui`), an optional extra: `tui` (INSTALL_HINT says how)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..install import install_hint

if TYPE_CHECKING:
    from ..store import IndexCache
    from .app import ReadingOf, RolloutsApp

INSTALL_HINT = f'the terminal UI needs the "tui" extra: {install_hint("tui")}'


def available() -> bool:
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True


def make_app(
    data_dir: Path, mask: str, cache: IndexCache, reading_of: ReadingOf | None = None
) -> RolloutsApp:
    """The terminal UI on `data_dir` (textual imported only now, so `available()` can be asked
    without it). Raises OSError when the directory cannot be read. `reading_of(bucket)`: the
    bucket's reading with its verdict (None while its steps are read); the store's own
    without the run's TensorBoard rules when not given."""
    from .app import RolloutsApp

    return RolloutsApp(data_dir, mask, cache=cache, reading_of=reading_of)
