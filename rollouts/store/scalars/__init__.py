"""A run's TensorBoard scalars: found beside its rollouts, read incrementally, kept on disk.

Plain Python, no Django. The `tensorboard` package is an optional extra: nothing here imports
it until an event file is read (`support.py` says whether it is there and how to install it).
"""

from .discovery import (
    MAX_EVENT_FILES,
    TENSORBOARD_DIR_NAME,
    EventListing,
    TensorBoardDir,
    event_files,
    find_tensorboard,
    list_event_files,
)
from .snapshot import ScalarSnapshot
from .store import ScalarStore
from .support import INSTALL_HINT, tensorboard_available

__all__ = [
    "INSTALL_HINT",
    "MAX_EVENT_FILES",
    "TENSORBOARD_DIR_NAME",
    "EventListing",
    "ScalarSnapshot",
    "ScalarStore",
    "TensorBoardDir",
    "event_files",
    "find_tensorboard",
    "list_event_files",
    "tensorboard_available",
]
