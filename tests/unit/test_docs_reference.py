"""The reference pages cannot drift: every flag of `visualize` and `train`, every `RELAX_*` and
`ROLLOUTS_*` name the code reads, every URL pattern under `api/`, and every shell block of the
pages a newcomer follows is documented (and run: tests/e2e/test_docs_recipes.py)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from django.urls import URLPattern, URLResolver

from tests.support.recipes import DOCS, SHELLS, fenced_blocks, recipes
from tests.support.servers import REPO_ROOT

SETTINGS_PAGE = DOCS / "reference" / "settings.md"
API_PAGES = (DOCS / "api.md", DOCS / "api-training.md")
NAME = re.compile(r"\b(?:RELAX|ROLLOUTS)_[A-Z0-9_]*[A-Z0-9]\b")


def cli_reference() -> str:
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.reference())


def test_the_cli_reference_is_what_the_parsers_say():
    assert (DOCS / "reference" / "cli.md").read_text() == cli_reference(), (
        "docs/reference/cli.md is stale: .venv/bin/python docs/cli_reference.py "
        "> docs/reference/cli.md"
    )


@pytest.mark.parametrize("command", ["visualize", "train"])
def test_every_flag_has_a_row_in_the_cli_reference(command: str):
    from django.core.management import load_command_class

    parser = load_command_class("rollouts", command).create_parser("manage.py", command)
    page = (DOCS / "reference" / "cli.md").read_text()
    section = page.split(f"## `{command}`", 1)[1].split("\n## ", 1)[0]
    first_cells = {line.split("|")[1].strip() for line in section.splitlines() if line[:2] == "| "}
    for action in parser._actions:
        if action.help == "==SUPPRESS==" or "-h" in action.option_strings:
            continue
        names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar}`"
        assert names in first_cells, f"{command} {names} is not in docs/reference/cli.md"


def names_in_code() -> set[str]:
    found: set[str] = set()
    for path in [
        *(REPO_ROOT / "rollouts").rglob("*.py"),
        *(REPO_ROOT / "relax_site").rglob("*.py"),
    ]:
        found.update(NAME.findall(path.read_text()))
    return found


def documented_names(page: str | None = None) -> set[str]:
    """Names in the first cell of a table row of the settings page."""
    text = SETTINGS_PAGE.read_text() if page is None else page
    rows = (line for line in text.splitlines() if line.startswith("| `"))
    return {name for row in rows for name in NAME.findall(row.split("|")[1])}


def test_every_relax_and_rollouts_name_the_code_reads_has_a_row():
    missing = sorted(names_in_code() - documented_names())
    assert missing == [], f"not in a table of docs/reference/settings.md: {missing}"


def test_the_names_check_catches_a_row_taken_out():
    page = SETTINGS_PAGE.read_text()
    assert "RELAX_DATA_DIR" in names_in_code() & documented_names(page)
    without = "\n".join(
        line for line in page.splitlines() if not line.startswith("| `RELAX_DATA_DIR`")
    )
    assert "RELAX_DATA_DIR" not in documented_names(without)  # a mention in prose is no row


def api_routes() -> set[str]:
    """Every route under api/ the app serves, its converters written as `<>`."""
    from rollouts import urls

    routes: set[str] = set()

    def walk(patterns: Sequence[object], prefix: str) -> None:
        for pattern in patterns:
            assert isinstance(pattern, URLPattern | URLResolver)
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif route.startswith("api/") and pattern.name != "api-not-found":
                routes.add(re.sub(r"<[^>]*>", "<>", route))

    walk(urls.urlpatterns, "")
    return routes


def documented_routes(text: str | None = None) -> set[str]:
    """Routes written as `GET api/...` or `POST api/...` on the API pages; an optional part in
    brackets (`api/view/<bucket>/<step>[/sample/<position>]`) names both routes."""
    text = "\n".join(page.read_text() for page in API_PAGES) if text is None else text
    found: set[str] = set()
    for written in re.findall(r"`(?:GET|POST) (api/[^` ]*)", text):
        written = written.split("[?", 1)[0].split("?", 1)[0]
        for route in (
            re.sub(r"\[(/[^\]]*)\]", "", written),
            re.sub(r"\[(/[^\]]*)\]", r"\1", written),
        ):
            found.add(re.sub(r"<[^>]*>", "<>", route))
    return found


def test_every_api_route_is_in_the_api_reference():
    routes = api_routes()
    assert "api/jsonl/<>/steps" in routes and "api/train/state" in routes
    missing = sorted(routes - documented_routes())
    assert missing == [], f"not documented as `GET|POST api/...` in docs/api*.md: {missing}"


def test_the_routes_check_catches_a_line_taken_out():
    text = "\n".join(page.read_text() for page in API_PAGES)
    assert "api/jsonl/<>/steps" in documented_routes(text)
    without = "\n".join(line for line in text.splitlines() if "/steps`" not in line)
    assert "api/jsonl/<>/steps" not in documented_routes(without)
    optional = documented_routes("`GET api/view/<bucket>/<step>[/sample/<position>]`")
    assert optional == {"api/view/<>/<>", "api/view/<>/<>/sample/<>"}


@pytest.mark.parametrize("page", ["getting-started.md", "deployment.md"])
def test_every_shell_block_of_the_pages_a_newcomer_follows_is_a_tested_recipe(page: str):
    blocks = fenced_blocks(DOCS / page)
    assert any(lang in SHELLS for _, lang, _ in blocks)
    untested = [body[:60] for name, lang, body in blocks if lang in SHELLS and name is None]
    assert untested == [], f"shell blocks of {page} without a recipe marker"
    used = "\n".join(
        p.read_text() for p in (REPO_ROOT / "tests").rglob("*.py") if p.name != "recipes.py"
    )
    names = [name for name, _, _ in blocks if name]
    unused = [n for n in names if f'"{n}"' not in used]
    assert unused == [], f"recipes of {page} that no test runs: {unused}"


def test_a_shell_block_without_a_marker_is_seen(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text("<!-- recipe: one -->\n```bash\nls\n```\n\ntext\n\n```bash\nrm -rf x\n```\n")
    assert fenced_blocks(page) == [("one", "bash", "ls"), (None, "bash", "rm -rf x")]


def test_recipe_names_are_unique_across_the_docs():
    assert len(recipes()) >= 10  # recipes() itself fails on a name used twice
