"""The sb3 tier: the real stable-baselines3 (the `sb3` extra, which `./run test` installs).
Without it every test here is skipped with the reason, except under `CI=true`, where it fails:
CI must run them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.servers import REPO_ROOT

IN_CI = os.environ.get("CI") == "true"
EXAMPLE = REPO_ROOT / "examples" / "sb3_ppo.py"
# A run small enough for a test: a rollout of 64 steps, 2 epochs of 2 minibatches per update.
TINY = {
    "n_steps": 64,
    "batch_size": 32,
    "n_epochs": 2,
    "poll_every": 16,
    "recovery_every": 128,
    "checkpoint_every": 256,
    "checkpoint_keep": 2,
}


def missing() -> str | None:
    try:
        import gymnasium  # noqa: F401
        import stable_baselines3  # noqa: F401
    except ImportError as exc:
        return f"stable-baselines3 is not installed (pip install -e '.[sb3]'): {exc}"
    return None


@pytest.fixture(autouse=True)
def _needs_sb3() -> None:
    reason = missing()
    if reason:
        if IN_CI:
            pytest.fail(f"CI runs the sb3 tier: {reason}")
        pytest.skip(reason)


def write_sb3_spec(directory: Path, grace: float = 15.0) -> Path:
    """examples/sb3-ppo.toml in `directory` (the child's working directory), its script named
    by absolute path, its grace period `grace`."""
    text = (REPO_ROOT / "examples" / "sb3-ppo.toml").read_text()
    text = text.replace('"sb3_ppo.py"', f'"{EXAMPLE}"', 1)
    text, count = re.subn(r"(?m)^grace_seconds = .*$", f"grace_seconds = {grace}", text)
    assert count == 1 and str(EXAMPLE) in text
    path = directory / "sb3-ppo.toml"
    path.write_text(text)
    return path
