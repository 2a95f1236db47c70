"""The layout is the architecture: the store and the presentation never import Django, imports
point one way (views -> presentation -> store), no module imports itself back through another,
modules stay small, and the layout table of docs/architecture.md lists exactly the modules
there are."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests.support.servers import REPO_ROOT

PACKAGE = REPO_ROOT / "rollouts"
STATIC = PACKAGE / "static" / "rollouts"
MAX_LINES = 300  # STYLE.md: small modules, one idea each
# Modules allowed to be longer, each with the reason the layout table gives too.
LONGER = {
    "rollouts/tui/app.py": "the wiring of the one screen's keys, widgets and worker threads",
    "rollouts/training/job.py": "one job's life in one place: start, attach, status, pause, stop, "
    "how it ended",
    "rollouts/training/progress.py": "one parser of a child's stdout: JSON lines, SB3 tables, "
    "merged ticks, attempts and phases",
    "rollouts/store/reading.py": "every rule of the reading beside the numbers it states",
    "rollouts/integrations/sb3.py": "the whole SB3 integration a user reads in one place",
    "rollouts/static/rollouts/chart.js": "one chart for every page: scales, ticks, smoothing, "
    "gaps, crosshair and keys",
    "rollouts/static/rollouts/training.js": "the page's wiring: the poll and its cursors, the "
    "snapshot, the top bar and the buttons",
    "rollouts/static/rollouts/trends.js": "the page's wiring: the trends JSON read, read again "
    "while indexing and on each poll answer, and every part drawn from it",
}

# Who may import whom, by layer. A layer not named may not be imported.
LAYERS = {
    "install": {"install"},  # how to install an extra: every layer may say it
    "store": {"store", "install"},
    "presentation": {"presentation", "store", "install"},
    "tui": {"tui", "presentation", "store", "install"},
    "demo": {"demo", "install"},
    "control": {"control"},
    "integrations": {"integrations", "control"},
    "training": {"training", "control", "store", "install"},
    "demo_trainer": {"demo_trainer", "demo", "control"},
    "glue": {"glue", "presentation", "store", "training", "install"},
    "views": {"views", "glue", "presentation", "store", "training", "install"},
    "urls": {"views", "glue"},
    "commands": {"commands", "glue", "store", "tui", "training", "install"},
}
WITHOUT_DJANGO = {
    "store", "presentation", "tui", "demo", "control", "training", "demo_trainer", "integrations",
    "install",
}  # fmt: skip


def layer_of(module: str) -> str:
    parts = module.split(".")
    layers = (
        "store",
        "presentation",
        "tui",
        "demo",
        "demo_trainer",
        "control",
        "views",
        "urls",
        "training",
        "integrations",
        "install",
    )
    if len(parts) > 1 and parts[1] in layers:
        return parts[1]
    if len(parts) > 1 and parts[1] == "management":
        return "commands"
    return "glue"  # conf, access, cache, runs, links, query, checks, server, templatetags, ...


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def read_module(text: str, filename: str) -> tuple[tuple[ast.Import | ast.ImportFrom, ...], bool]:
    """A module's import statements, wherever they are (functions included), and whether it
    holds more than a docstring. Once a process: six tests read every module, and parsing and
    walking the trees were most of their time. Keyed by the text, so a changed file is read
    anew; only the statements are kept, not the trees."""
    tree = ast.parse(text, filename)
    code = any(
        not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in tree.body
    )
    imports = tuple(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return imports, code


def imports_of(module: str, path: Path) -> set[str]:
    """Every module `module` imports, wherever the import statement is (functions included)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in read_module(path.read_text(), str(path))[0]:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            # `from . import views`: the submodule itself
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def internal_imports() -> dict[str, set[str]]:
    modules = python_modules()
    return {
        name: {imported for imported in imports_of(name, path) if imported in modules}
        for name, path in modules.items()
    }


def test_the_store_presentation_and_terminal_ui_never_import_django():
    offenders = []
    for name, path in python_modules().items():
        if layer_of(name) in WITHOUT_DJANGO:
            bad = sorted(i for i in imports_of(name, path) if i.split(".")[0] == "django")
            offenders += [f"{name} imports {i}" for i in bad]
    assert offenders == []


def test_imports_point_one_way_between_layers():
    offenders = [
        f"{name} ({layer_of(name)}) imports {imported} ({layer_of(imported)})"
        for name, imported_set in internal_imports().items()
        for imported in sorted(imported_set)
        if imported != "rollouts" and layer_of(imported) not in LAYERS[layer_of(name)]
    ]
    assert offenders == []


def test_other_layers_reach_the_training_backends_through_the_package_face():
    """Views, commands and checks import `rollouts.training.backends`, never a module inside it
    (which backend module holds what is the package's own business)."""
    inside = "rollouts.training.backends."
    offenders = [
        f"{name} imports {imported}"
        for name, imported_set in internal_imports().items()
        for imported in sorted(imported_set)
        if imported.startswith(inside) and not name.startswith("rollouts.training.")
    ]
    assert offenders == []


def test_no_module_imports_itself_back():
    graph = internal_imports()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for imported in sorted(graph[name]):
            if imported == name:
                continue
            if state.get(imported) == 1:
                cycles.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_cycle_check_sees_imports_inside_functions(tmp_path):
    lazy = tmp_path / "rollouts" / "store" / "lazy.py"
    lazy.parent.mkdir(parents=True)
    lazy.write_text("def later():\n    from .catalog import Catalog\n    return Catalog\n")
    assert "rollouts.store.catalog" in imports_of("rollouts.store.lazy", lazy)


def test_the_layer_rules_can_catch_a_bad_import(tmp_path):
    bad = tmp_path / "rollouts" / "store" / "oops.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from django.conf import settings\nfrom ..views import api\n")
    found = imports_of("rollouts.store.oops", bad)
    assert {"django.conf", "rollouts.views", "rollouts.views.api"} <= found
    assert "views" not in LAYERS[layer_of("rollouts.store.oops")]


def source_files() -> list[Path]:
    """The app's Python and JavaScript modules (lib/ and pages/ too, not the vendored ones)."""
    site = REPO_ROOT / "relax_site"
    scripts = [p for p in STATIC.rglob("*.js") if STATIC / "vendor" not in p.parents]
    return sorted([*PACKAGE.rglob("*.py"), *scripts, *site.glob("*.py")])


def holds_code(path: Path) -> bool:
    """Whether a file holds more than a docstring (an empty `__init__.py` is no module)."""
    if path.suffix != ".py":
        return True
    return read_module(path.read_text(), str(path))[1]


@pytest.mark.parametrize("path", source_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_modules_stay_small(path):
    name = str(path.relative_to(REPO_ROOT))
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES or name in LONGER, f"{name} has {lines} lines"


def layout_rows() -> dict[str, str]:
    """The layout table of docs/architecture.md: path -> the rest of its row."""
    page = (REPO_ROOT / "docs" / "architecture.md").read_text()
    section = page.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"^\| `([^`]+)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_the_layout_table_lists_exactly_the_modules_there_are():
    rows = layout_rows()
    files = {str(p.relative_to(REPO_ROOT)) for p in source_files() if holds_code(p)}
    listed = {row for row in rows if not row.endswith("/")}
    assert sorted(files - listed) == [], "modules missing from the layout table"
    assert sorted(listed - files) == [], "the layout table lists modules that are gone"
    for name, reason in LONGER.items():
        assert reason in rows[name], f"the layout table gives no reason why {name} is long"
