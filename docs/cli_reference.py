"""docs/reference/cli.md, generated from the commands' own parsers so it cannot drift:

    .venv/bin/python docs/cli_reference.py > docs/reference/cli.md

`tests/unit/test_docs_reference.py` fails when the file differs from what this prints.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "relax_site.settings")

WIDTH = 96  # the usage lines' width, fixed so the output does not depend on the terminal

INTRO = """\
# Command line

Generated from the commands' parsers by `docs/cli_reference.py`; a test fails when this page
and the parsers differ. In a checkout the commands are `./run visualize ...` and
`./run train ...` (or `.venv/bin/python manage.py visualize ...`); installed from the wheel,
`relax-viewer visualize ...` (`relax-viewer DATA_DIR ...` for short) and `relax-viewer train ...`.
Environment variables and Django settings are in [Settings and environment](settings.md).
"""


def cell(text: str) -> str:
    """Text for a Markdown table cell, shown as written (regexes hold `<`, `\\` and `|`)."""
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\\", "&#92;")):
        text = text.replace(raw, entity)
    return " ".join(text.split()).replace("|", "\\|")


def default_of(action: argparse.Action) -> str:
    if action.default in (None, False, "", argparse.SUPPRESS) or action.required:
        return ""
    if isinstance(action.default, list | tuple):
        return cell(", ".join(f"`{item}`" for item in action.default))
    return f"`{cell(str(action.default))}`"


def section(name: str, parser: argparse.ArgumentParser) -> str:
    parser.prog = f"manage.py {name}"
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar}`"
        meaning = cell(formatter._expand_help(action)) if action.help else ""
        rows.append(f"| {names} | {default_of(action)} | {meaning} |")
    return "\n".join(
        [
            f"## `{name}`",
            "",
            cell(parser.description or ""),
            "",
            "```text",
            formatter.format_help().strip(),
            "```",
            "",
            "| argument | default | meaning |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def reference() -> str:
    import django

    django.setup()
    from rollouts.management.commands import train, visualize

    parts = [INTRO]
    for name, command in (("visualize", visualize.Command), ("train", train.Command)):
        parts.append(section(name, command().create_parser("manage.py", name)))
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(reference())
