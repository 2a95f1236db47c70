"""The layout is the architecture: the store and the presentation never import Django, imports
point one way (views -> presentation -> store), a package is entered only through its face (its
`__init__`), no private name crosses a module, no module imports itself back through another,
a module above 400 lines says why, and the layout table of docs/architecture.md lists exactly
the modules there are."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from tests.support.imports import statement_imports
from tests.support.servers import REPO_ROOT

PACKAGE = REPO_ROOT / "rollouts"
STATIC = PACKAGE / "static" / "rollouts"
# STYLE.md: small modules, one idea each. A module above this many lines is not an error but a
# review note: the layout table says why it is long, in the words given here.
REVIEW_LINES = 400
LONGER = {
    "rollouts/static/rollouts/training.js": "the page's wiring: the poll and its cursors, the "
    "snapshot, the top bar and the buttons",
    "rollouts/tui/app.py": "the wiring of the one screen's keys, widgets and worker threads",
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


def imported_names(module: str, path: Path) -> list[tuple[str, list[str]]]:
    """(the module an import statement names, the names it takes) for every import statement."""
    return list(_imports(module, path.name == "__init__.py", path.read_text()))


@functools.cache
def _imports(module: str, is_package: bool, text: str) -> tuple[tuple[str, list[str]], ...]:
    """Once a process: several tests read every module, and parsing and walking the trees were
    most of their time. Keyed by the text, so a changed file is read anew."""
    return tuple(statement_imports(module, is_package, text))


@functools.cache
def _holds_code(text: str) -> bool:
    body = ast.parse(text).body
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) for n in body)


def is_submodule(name: str) -> bool:
    """Whether `rollouts.x.y` is a module of this repository (a file or a package folder)."""
    path = REPO_ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(module: str, path: Path) -> set[str]:
    """Every module `module` imports. `from . import views` imports the submodule only (the
    package's own code is already running), `from .store import Catalog` the package."""
    found: set[str] = set()
    for base, names in imported_names(module, path):
        submodules = {f"{base}.{name}" for name in names if is_submodule(f"{base}.{name}")}
        found |= submodules
        if not names or len(submodules) < len(names):
            found.add(base)
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


def packages() -> set[str]:
    return {name for name, path in python_modules().items() if path.name == "__init__.py"}


def face_problem(importer: str, imported: str, faces: set[str]) -> str | None:
    """Why `importer` may not import `imported`, or None. A package's `__init__` is its face:
    from outside the package, only the face is imported. Inside a package, its modules and its
    parents' modules are at hand (`store/search/scan.py` reads `store/lines.py`); the site
    (`relax_site`) sits beside the app's top-level modules (`rollouts.conf`, `rollouts.urls`)."""
    if imported in faces or not imported.startswith("rollouts."):
        return None
    home = imported.rpartition(".")[0]
    where = importer if importer in faces else importer.rpartition(".")[0]
    if where.startswith("relax_site"):
        where = "rollouts"
    if where == home or where.startswith(home + "."):
        return None
    return f"{importer} imports {imported}, inside {home}: import {home} (its face) instead"


def test_a_package_is_entered_through_its_face():
    """Which module of `rollouts.store` holds `Catalog` is the store's business: views import
    `rollouts.store`, not `rollouts.store.catalog` (and the same for every package)."""
    faces = packages()
    site = {module_name(p): p for p in sorted((REPO_ROOT / "relax_site").glob("*.py"))}
    graph = {**internal_imports(), **{n: imports_of(n, p) for n, p in site.items()}}
    offenders = [
        problem
        for name, imported_set in sorted(graph.items())
        for imported in sorted(imported_set)
        if (problem := face_problem(name, imported, faces)) is not None
    ]
    assert offenders == []


def test_the_face_rule_catches_a_reach_inside_and_allows_a_parents_module():
    faces = {"rollouts.store", "rollouts.store.search", "rollouts.views"}
    assert face_problem("rollouts.views.samples", "rollouts.store.catalog", faces)
    assert face_problem("rollouts.store.catalog", "rollouts.store.search.scan", faces)
    assert face_problem("relax_site.middleware", "rollouts.web.responses", faces | {"r.web"})
    assert not face_problem("rollouts.views.samples", "rollouts.store", faces)
    assert not face_problem("rollouts.views.samples", "rollouts.store.search", faces)
    assert not face_problem("rollouts.store.search.scan", "rollouts.store.lines", faces)
    assert not face_problem("rollouts.views.samples", "rollouts.conf", faces)
    assert not face_problem("relax_site.settings", "rollouts.conf", faces)


def private_imports(module: str, path: Path) -> list[str]:
    """Names starting with `_` taken from another of the app's modules (`from .x import _y`)."""
    return [
        f"{module} takes {name} from {base}"
        for base, names in imported_names(module, path)
        if base.split(".")[0] in ("rollouts", "relax_site") and base != module
        for name in names
        if name.startswith("_") and not is_submodule(f"{base}.{name}")
    ]


def test_no_private_name_crosses_a_module():
    """A leading underscore means "this module's own": a name another module needs is public
    (and a format two modules share lives in one module both import, as `store/disk/format`)."""
    offenders = [
        line for name, path in python_modules().items() for line in private_imports(name, path)
    ]
    assert offenders == []


def test_the_private_name_rule_can_catch_one(tmp_path):
    module = tmp_path / "rollouts" / "store" / "disk" / "prompts.py"
    module.parent.mkdir(parents=True)
    module.write_text("from .entry import _decoded, LineTable\nfrom re import _parser\n")
    found = private_imports("rollouts.store.disk.prompts", module)
    assert found == ["rollouts.store.disk.prompts takes _decoded from rollouts.store.disk.entry"]


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
    assert {"django.conf", "rollouts.views.api"} <= found
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
    return _holds_code(path.read_text())


def test_a_module_above_the_review_size_says_why():
    """Not a cap that decides where code goes: a module may grow past REVIEW_LINES when one idea
    needs the room, and then LONGER (and the layout table) say what that idea is."""
    long = {
        str(path.relative_to(REPO_ROOT))
        for path in source_files()
        if len(path.read_text().splitlines()) > REVIEW_LINES
    }
    assert sorted(long - set(LONGER)) == [], "say why each is long, in LONGER and the table"
    assert sorted(set(LONGER) - long) == [], "no longer long: drop its note"


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
