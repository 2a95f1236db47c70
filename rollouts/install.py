"""The command that installs an optional extra, said the way that works where the viewer runs.

`pip install ".[tui]"` works only in a checkout, and `pip install "relax-rollout-viewer[tui]"`
only where an index has the package (none does): so a checkout (the source tree, or
`pip install -e .`) is told `pip install -e ".[tui]"`, and a viewer installed from a wheel is
told the extra's own requirements, read from its installed metadata. Standard library only,
no Django: every layer says it. Never a path in a hint: hints go into HTTP responses.
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path

DISTRIBUTION = "relax-rollout-viewer"
# Above the `rollouts` package: the checkout's top, or site-packages for a wheel.
SOURCE_ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def install_hint(extra: str, root: Path = SOURCE_ROOT) -> str:
    """`pip install ...` for `extra`; `root` is where a checkout's pyproject.toml would be.

    Cached: messages built at import time call it, and it reads a file or the metadata.
    """
    if is_checkout(root):
        return f'pip install -e ".[{extra}]" (in the checkout)'
    wanted = extra_requirements(extra)
    if not wanted:  # no metadata to read (or no such extra): the package's own spelling
        return f'pip install "{DISTRIBUTION}[{extra}]"'
    return "pip install " + " ".join(f'"{requirement}"' for requirement in wanted)


def is_checkout(root: Path) -> bool:
    """Whether `root` holds this project's pyproject.toml (not just any project's)."""
    try:
        with (root / "pyproject.toml").open("rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return isinstance(project, dict) and project.get("name") == DISTRIBUTION


def extra_requirements(extra: str) -> list[str]:
    """The installed distribution's requirements for `extra` (`textual>=0.80; extra == "tui"`
    in its metadata), without the marker; empty when the metadata cannot be read."""
    try:
        declared = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return []
    only_extra = re.compile(rf"""extra\s*==\s*(["']){re.escape(extra)}\1""")
    found = []
    for entry in declared:
        requirement, _, marker = entry.partition(";")
        if only_extra.fullmatch(marker.strip()):
            found.append(requirement.strip())
    return found
