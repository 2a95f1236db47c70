"""The terminal UI on the values and names that used to break the web pages (issue 12, sections
1 and 2): it shows what the pages show, says what was replaced, and lists only real steps."""

from __future__ import annotations

import io
import re

import pytest

from tests.tui.test_app import (
    RolloutsApp,
    drive,
    label_text,
    option_labels,
    press,
    step_of,
    view_text,
)

pytestmark = pytest.mark.tui

OK = '{"sample_index": %d, "prompt": "p", "response": "fine", "reward": 1.0, "status": "done"}\n'
HOSTILE = [
    OK % 0,
    '{"sample_index": 1, "response": "caf\\udcc3", "status": "trunc\\udcc3", "reward": 0.5}\n',
    '{"sample_index": 2, "response": "big", "reward": 1e999, "label": ' + "9" * 5000 + "}\n",
    '{"sample_index": 3, "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
    OK % 4,
]


def test_replaced_text_is_shown_and_said_so_in_plain_and_table_mode(write_step, data_dir):
    from rich.console import Console
    from rich.table import Table
    from textual.widgets import Static

    write_step("train", 0, HOSTILE)

    async def scenario(app: RolloutsApp, pilot) -> None:
        # The deep line is unreadable (and said so); the other four are shown, in file order.
        assert label_text(app, "#sample-label") == "Sample 1 / 4"
        assert "line 4" in label_text(app, "#status")
        assert "!" not in view_text(app).split("\n")[0]  # an ordinary sample: no warning
        await press(app, pilot, "n")
        text = view_text(app)
        assert "caf\ufffd" in text and "trunc\ufffd" in text
        warning = "! lone surrogate escapes (invalid Unicode) replaced with U+FFFD"
        assert text.splitlines()[0] == warning
        assert "replaced with U+FFFD" in label_text(app, "#status")
        await press(app, pilot, "s")
        table = app.query_one("#view", Static).content
        assert isinstance(table, Table)
        console = Console(width=120, record=True, file=io.StringIO())
        console.print(table)
        assert re.search(r"warning\s+│\s+lone surrogate escapes", console.export_text())
        await press(app, pilot, "s", "n")
        text = view_text(app)
        assert re.search(r"^reward: 1e999$", text, re.MULTILINE), text[:500]
        assert "9" * 4000 in text
        assert text.splitlines()[0].startswith("! reward: ")
        await press(app, pilot, "n")
        assert "sample_index: 4" in view_text(app)

    drive(RolloutsApp(data_dir), scenario)


def test_only_ascii_digit_names_are_steps(write_step, data_dir):
    write_step("train", 1, [OK % 0])
    for name in ("\u0661.jsonl", "\U0001d7cf.jsonl", "2.jsonl\n", "3.jsonl "):
        write_step("train", name, [OK % 9])

    async def scenario(app: RolloutsApp, pilot) -> None:
        assert step_of(app) == 1
        assert [label.split(" (")[0] for label in option_labels(app, "#step")] == ["Step 1"]

    drive(RolloutsApp(data_dir), scenario)
