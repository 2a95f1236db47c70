"""Servers subject to file permissions, so that "permission denied" can be tested for real.

The tests usually run as root, and root reads a `chmod 000` file anyway. So a server started
through `unprivileged_launcher()` runs as `nobody` (`runuser -u nobody`) when nobody can run
this Python; when it cannot (an interpreter under a private /root, say), as root without the
two capabilities that let root ignore file permissions (`setpriv` drops CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH), which the kernel then checks exactly as for any other user. A test
that is already not root needs neither. `None` when no way is available: the test skips,
and under CI=true it fails instead.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

VISUALIZE = (sys.executable, "manage.py", "visualize")
DROP_CAPS = "-dac_override,-dac_read_search"


def _works(prefix: list[str]) -> bool:
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", "import django, rollouts"],
            capture_output=True,
            timeout=60,
            check=False,
            cwd=Path(__file__).resolve().parents[2],
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def unprivileged_launcher() -> tuple[list[str], str] | None:
    """(argv prefix to run a command subject to file permissions, how), or None."""
    if os.geteuid() != 0:
        return [], "the test user"
    runuser = shutil.which("runuser")
    if runuser and _works(nobody := [runuser, "-u", "nobody", "--"]):
        return nobody, "nobody (runuser)"
    setpriv = shutil.which("setpriv")
    caps = [f"--inh-caps={DROP_CAPS}", f"--bounding-set={DROP_CAPS}"]
    if setpriv and _works(dropped := [setpriv, *caps, "--"]):
        return dropped, "root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (setpriv)"
    return None


def require_unprivileged() -> tuple[list[str], str]:
    found = unprivileged_launcher()
    if found is None:
        message = "cannot start a server subject to file permissions (no runuser/setpriv)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@contextmanager
def shared_dir(prefix: str) -> Iterator[Path]:
    """A fresh directory anyone may enter and read (pytest's tmp_path is private to root);
    removed afterwards, whatever its files' modes."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for child in path.rglob("*"):
            if not child.is_symlink():
                child.chmod(stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)


def readable_tree(root: Path) -> None:
    """Every directory under `root` enterable and every file readable by anyone."""
    for child in [root, *root.rglob("*")]:
        child.chmod(0o755 if child.is_dir() else 0o644)
