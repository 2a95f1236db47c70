"""The README's recipes as written: each fenced block after a `<!-- recipe: NAME -->` line,
written to a directory under its NAME, so a test runs exactly what a reader copies."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.servers import REPO_ROOT

RECIPE = re.compile(r"<!-- recipe: (\S+) -->\n```\w*\n(.*?)\n```", re.DOTALL)


def recipes() -> dict[str, str]:
    return {
        name: body + "\n" for name, body in RECIPE.findall((REPO_ROOT / "README.md").read_text())
    }


def write_recipes(directory: Path, *names: str) -> None:
    found = recipes()
    for name in names:
        assert name in found, f"the README has no recipe {name}"
        (directory / name).write_text(found[name])
