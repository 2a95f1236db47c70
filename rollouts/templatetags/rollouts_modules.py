"""The `page_module` tag: a page's one script, its entry module under static/rollouts/pages/,
and a `<link rel="modulepreload">` for every module that entry imports, directly or not, so the
browser asks for the whole graph at once instead of discovering it one import at a time.

The graph is read from the modules' own import statements (relative specifiers, as the browser
resolves them), once per process: the files ship with the app and do not change under it.
Every URL is `{% static %}`'s, so a prefix (FORCE_SCRIPT_NAME, STATIC_URL) and a storage that
renames files both apply to the preloads as they do to the entry."""

from __future__ import annotations

import functools
import posixpath
import re
from pathlib import Path

from django import template
from django.templatetags.static import static
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

register = template.Library()

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
# `import ... from "./x.js"`, `export ... from "./x.js"` and `import "./x.js"`: the specifier of
# every static import, across lines. Only relative specifiers: the app imports nothing else.
IMPORT_RE = re.compile(
    r"""^\s*(?:import\s*|(?:import|export)\b[^"';]*?\bfrom\s*)["'](\.{1,2}/[^"']+)["']""",
    re.M,
)


def imports_of(source: str) -> list[str]:
    """The relative specifiers a module's source imports, in order."""
    return IMPORT_RE.findall(source)


def resolve(module: str, specifier: str) -> str:
    """A specifier as the browser resolves it against the importing module's path."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(module), specifier))


@functools.cache
def module_graph(entry: str) -> tuple[str, ...]:
    """Every module `entry` (a static path, "rollouts/pages/sample.js") imports, directly or
    not, depth first in import order, without the entry itself."""
    seen: list[str] = []

    def visit(module: str) -> None:
        for specifier in imports_of((STATIC_DIR / module).read_text()):
            imported = resolve(module, specifier)
            if imported != entry and imported not in seen:
                seen.append(imported)
                visit(imported)

    visit(entry)
    return tuple(seen)


@register.simple_tag
def page_module(name: str) -> SafeString:
    """`{% page_module "sample" %}`: the page's entry module and the preloads of its graph."""
    entry = f"rollouts/pages/{name}.js"
    return _page_markup(entry, static(entry))


@functools.lru_cache(maxsize=256)
def _page_markup(entry: str, entry_url: str) -> SafeString:
    """The markup, made once per entry and entry URL: a `static()` a module cost about 1 ms of
    every page. The entry's URL carries what the others' depend on (the prefix, STATIC_URL, the
    storage's naming), and the files do not change under a running process."""
    script = format_html('<script type="module" src="{}"></script>', entry_url)
    preloads = format_html_join(
        "\n",
        '<link rel="modulepreload" href="{}">',
        ((static(module),) for module in module_graph(entry)),
    )
    return format_html("{}\n{}", script, preloads)
