"""The documentation's recipes as written: each fenced block after a `<!-- recipe: NAME -->`
line of a page under docs/ (or the README), so a test runs exactly what a reader copies."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.servers import REPO_ROOT

DOCS = REPO_ROOT / "docs"
RECIPE = re.compile(r"<!-- recipe: (\S+) -->\n```\w*\n(.*?)\n```", re.DOTALL)
FENCE = re.compile(r"^(<!-- recipe: (\S+) -->\n)?```(\w*)\n(.*?)\n```", re.DOTALL | re.MULTILINE)
SHELLS = {"bash", "sh", "shell", "console"}


def pages() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def recipes() -> dict[str, str]:
    found: dict[str, str] = {}
    for page in pages():
        for name, body in RECIPE.findall(page.read_text()):
            assert name not in found, f"two recipes are called {name}"
            found[name] = body + "\n"
    return found


def recipe(name: str) -> str:
    found = recipes()
    assert name in found, f"the documentation has no recipe {name}"
    return found[name]


def write_recipes(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).write_text(recipe(name))


def fenced_blocks(page: Path) -> list[tuple[str | None, str, str]]:
    """(recipe name or None, language, body) of every fenced block of a page."""
    return [(name or None, lang, body) for _, name, lang, body in FENCE.findall(page.read_text())]


def commands(script: str) -> list[str]:
    """A shell block's commands, one a line, a line ending in `\\` joined with the next."""
    return [c.strip() for c in script.replace("\\\n", " ").splitlines() if c.strip()]
