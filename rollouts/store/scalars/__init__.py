"""A run's TensorBoard scalars: found beside its rollouts, read incrementally, kept on disk.

Plain Python, no Django. The `tensorboard` package is an optional extra: nothing here imports
it until an event file is read (`support.py` says whether it is there and how to install it).
"""

from .discovery import TensorBoardDir, event_files, find_tensorboard
from .store import ScalarStore
from .support import INSTALL_HINT, tensorboard_available

__all__ = [
    "INSTALL_HINT",
    "ScalarStore",
    "TensorBoardDir",
    "event_files",
    "find_tensorboard",
    "tensorboard_available",
]
