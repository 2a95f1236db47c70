"""Whether the optional `tensorboard` package is installed, and what to say when it is not.

Importing it costs about half a second (protobuf and its generated modules), so the viewer
imports it only when it has event files to read, and says once that it is missing.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import sys

from ...install import install_hint

logger = logging.getLogger("rollouts.store")

INSTALL_HINT = (
    f"TensorBoard scalars need the optional tensorboard package: {install_hint('tensorboard')}"
)
_said = False


def tensorboard_available() -> bool:
    """Whether `tensorboard` can be imported (found, not imported: that is the slow part). The
    search of sys.path is made once per process (every trends answer and poll asks), so a package
    installed while the viewer runs is seen after a restart; one imported already is seen."""
    if "tensorboard" in sys.modules:
        return sys.modules["tensorboard"] is not None  # None: import blocked
    return _found()


@functools.cache
def _found() -> bool:
    try:
        return importlib.util.find_spec("tensorboard") is not None
    except (ImportError, ValueError):
        return False


def say_missing_once() -> None:
    """Log the install hint the first time scalars were wanted without the package."""
    global _said
    if not _said:
        _said = True
        logger.warning(INSTALL_HINT)
