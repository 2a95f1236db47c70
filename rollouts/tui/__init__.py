"""The terminal UI (`visualize --tui`), an optional extra: `tui` (INSTALL_HINT says how)."""

from __future__ import annotations

from ..install import install_hint

INSTALL_HINT = f'the terminal UI needs the "tui" extra: {install_hint("tui")}'


def available() -> bool:
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True
