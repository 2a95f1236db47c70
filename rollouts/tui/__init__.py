"""The terminal UI (`visualize --tui`), an optional extra: `pip install ".[tui]"`."""

from __future__ import annotations

INSTALL_HINT = (
    'the terminal UI needs the "tui" extra: pip install "relax-rollout-viewer[tui]"'
    ' (or pip install -e ".[tui]" in a checkout)'
)


def available() -> bool:
    try:
        import textual  # noqa: F401
    except ImportError:
        return False
    return True
