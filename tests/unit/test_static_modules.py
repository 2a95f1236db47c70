"""The JavaScript is native ES modules: every page loads one entry module and no classic script
(the theme is rendered by the server, so nothing has to run before the first paint), every
import is relative and names a file that exists, no module sets a global, and the preloads each
page sends are its entry's whole import graph, also when a storage renames the files
(ManifestStaticFilesStorage).
"""

from __future__ import annotations

import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.staticfiles.storage import ManifestStaticFilesStorage
from django.core.management import call_command
from django.template import Context, Template

from rollouts.templatetags.rollouts_modules import imports_of, module_graph
from tests.support.servers import REPO_ROOT

STATIC = REPO_ROOT / "rollouts" / "static"
APP_STATIC = STATIC / "rollouts"
TEMPLATES = REPO_ROOT / "rollouts" / "templates" / "rollouts"
# The specifier of every import and export-from, and any dynamic import: read independently of
# rollouts_modules.py's own pattern, so a statement that one misses the other still sees.
SPECIFIER_RE = re.compile(
    r"""(?:^|;)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']([^"']+)["']"""
    r"""|(?:^|;)\s*import\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']""",
    re.M,
)
PAGE_MODULE_RE = re.compile(r"""\{% page_module "(\w+)" %\}""")


def modules() -> list[Path]:
    """Every module of the app: the static JavaScript, less the vendored libraries."""
    vendor = APP_STATIC / "vendor"
    return sorted(p for p in APP_STATIC.rglob("*.js") if vendor not in p.parents)


def static_path(path: Path) -> str:
    return path.relative_to(STATIC).as_posix()


def specifiers(source: str) -> list[str]:
    # Comments can quote code ("import what it needs"): leave their lines out.
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    return ["".join(groups) for groups in SPECIFIER_RE.findall(code)]


class Scripts(HTMLParser):
    """The <script> and <link rel=modulepreload> tags of a template or a page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.scripts: list[dict[str, str]] = []
        self.preloads: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if tag == "script":
            self.scripts.append(attr)
        if tag == "link" and attr.get("rel") == "modulepreload":
            self.preloads.append(attr["href"])


# -- the templates -------------------------------------------------------------------------------
@pytest.mark.parametrize("template", sorted(TEMPLATES.glob("*.html")), ids=lambda p: p.name)
def test_no_template_loads_a_classic_script(template):
    for script in Scripts(template.read_text()).scripts:
        if "src" not in script:
            # Data for the scripts, never code: the CSP (script-src 'self') would refuse it.
            assert script.get("type") == "application/json", (template.name, script)
        else:
            assert script.get("type") == "module", (template.name, script)


def test_the_check_sees_a_classic_script():
    html = """<script src="{% static 'rollouts/viewer.js' %}" defer></script>"""
    assert Scripts(html).scripts[0].get("type") != "module"


def test_every_page_names_one_entry_module_that_exists_and_every_entry_is_used():
    named = {}
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text()
        if '{% extends "rollouts/base.html" %}' in text:
            found = PAGE_MODULE_RE.findall(text)
            assert len(found) == 1, template.name
            named[template.name] = found[0]
    assert len(named) >= 10
    entries = {p.stem for p in (APP_STATIC / "pages").glob("*.js")}
    assert set(named.values()) == entries
    assert "page_module" not in (TEMPLATES / "base.html").read_text().split("{% block module")[0]


# -- the modules ---------------------------------------------------------------------------------
@pytest.mark.parametrize("module", modules(), ids=static_path)
def test_every_import_is_relative_and_names_a_module_that_exists(module):
    for specifier in specifiers(module.read_text()):
        # Relative, so the module works under any prefix and mount: never "/static/...".
        assert specifier.startswith(("./", "../")), (module.name, specifier)
        target = (module.parent / specifier).resolve()
        assert target.is_file(), (module.name, specifier)
        assert APP_STATIC in target.parents, (module.name, specifier)


@pytest.mark.parametrize("module", modules(), ids=static_path)
def test_no_module_sets_a_global(module):
    source = module.read_text()
    assert not re.search(r"\bwindow\.rv", source), module.name
    assert not re.search(r"\b(?:window|globalThis|self)\.\w+\s*=[^=]", source), module.name


def test_the_global_check_sees_an_assignment():
    assert re.search(r"\b(?:window|globalThis|self)\.\w+\s*=[^=]", "window.rvChart = { a };")
    source = 'import { a,\n  b } from "../lib/x.js";\nexport * from "./y.js";\nimport("/abs.js");'
    assert specifiers(source) == ["../lib/x.js", "./y.js", "/abs.js"]
    assert specifiers('export function f() {\n  return byId("rv-x");\n}') == []


def test_the_tags_import_reader_sees_every_form_of_import():
    source = (
        'import { a,\n  b,\n} from "./x.js";\nimport "../y.js";\n'
        "export { z } from './z.js';\n"
        'export const notAnImport = "./no.js";\n// import what it needs from "./c.js"\n'
    )
    assert imports_of(source) == ["./x.js", "../y.js", "./z.js"]


def closure(entry: str) -> set[str]:
    """The modules `entry` imports, directly or not, read with this test's own pattern."""
    seen: set[str] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        for specifier in specifiers((STATIC / module).read_text()):
            imported = posixpath.normpath(posixpath.join(posixpath.dirname(module), specifier))
            if imported not in seen and imported != entry:
                seen.add(imported)
                todo.append(imported)
    return seen


@pytest.mark.parametrize("entry", sorted((APP_STATIC / "pages").glob("*.js")), ids=static_path)
def test_the_preloads_are_the_entrys_whole_import_graph(entry, settings):
    settings.STATIC_URL = "/prefix/static/"
    name = static_path(entry)
    html = Template('{% load rollouts_modules %}{% page_module "' + entry.stem + '" %}').render(
        Context()
    )
    tags = Scripts(html)
    assert tags.scripts == [{"type": "module", "src": f"/prefix/static/{name}"}]
    assert sorted(tags.preloads) == sorted(f"/prefix/static/{m}" for m in closure(name))
    assert len(tags.preloads) == len(set(tags.preloads)) == len(module_graph(name))
    assert "rollouts/base.js" in module_graph(name)  # every page: the header, keys, live poll


def test_the_markup_is_remembered_per_entry_url_never_across_prefixes(settings):
    """Made once per entry URL (a `static()` for every module cost about 1 ms of each page);
    another prefix or STATIC_URL is another entry URL, so another markup."""
    render = Template('{% load rollouts_modules %}{% page_module "sample" %}').render
    firsts: dict[str, str] = {}
    for prefix in ("/one/static/", "/two/static/", "/one/static/"):
        settings.STATIC_URL = prefix
        html = render(Context())
        urls = [t["src"] for t in Scripts(html).scripts] + Scripts(html).preloads
        assert urls and all(u.startswith(prefix) for u in urls), (prefix, urls)
        firsts.setdefault(prefix, html)
        assert html == firsts[prefix]


class HashedModules(ManifestStaticFilesStorage):
    """A portal's storage: hashed names, and Django rewriting the imports to them. Only the
    JavaScript's imports are rewritten here: the vendored KaTeX stylesheet names font formats
    that are not shipped (only .woff2 is), which Django's stylesheet rewriting refuses."""

    support_js_module_import_aggregation = True
    patterns = ()  # the stylesheets' url() and the scripts' sourceMappingURL left alone


def test_hashed_file_names_keep_the_graph_and_its_preloads_whole(settings, tmp_path):
    settings.STATIC_ROOT = str(tmp_path)
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": f"{__name__}.HashedModules"},
    }
    call_command("collectstatic", interactive=False, verbosity=0)
    html = Template('{% load rollouts_modules %}{% page_module "trends" %}').render(Context())
    tags = Scripts(html)
    entry = tags.scripts[0]["src"].removeprefix(settings.STATIC_URL)
    assert re.fullmatch(r"rollouts/pages/trends\.[0-9a-f]{12}\.js", entry), entry
    # What the browser loads, from the hashed entry on: every import names a hashed file that
    # exists, and exactly those files are preloaded (no module is fetched twice by two names).
    loaded: set[str] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        for specifier in specifiers((tmp_path / module).read_text()):
            imported = posixpath.normpath(posixpath.join(posixpath.dirname(module), specifier))
            assert (tmp_path / imported).is_file(), (module, specifier)
            assert re.search(r"\.[0-9a-f]{12}\.js$", imported), (module, specifier)
            if imported not in loaded:
                loaded.add(imported)
                todo.append(imported)
    assert {p.removeprefix(settings.STATIC_URL) for p in tags.preloads} == loaded


@pytest.mark.parametrize("template", sorted(TEMPLATES.glob("*.html")), ids=lambda p: p.name)
def test_template_comments_close_on_their_line(template):
    """`{# #}` is one line only: one that goes on renders as text, and text in <head> ends it
    (the stylesheets and the entry module would then sit in <body>)."""
    for number, line in enumerate(template.read_text().splitlines(), 1):
        assert line.count("{#") == line.count("#}"), f"{template.name}:{number}"
