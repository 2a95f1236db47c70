"""A presented sample as rich renderables: the web page's structure in terminal colours.

The segments come from `presentation.render` and the field layout from `presentation.sample`, the
same code the web pages use, so both show the same turns, think blocks and pad badges.
"""

from __future__ import annotations

from collections.abc import Collection

from rich.table import Table
from rich.text import Text

from ..presentation import Block, LearningVerdict, Node, PresentedSample, Rendered, Section

ROLE_STYLES = {
    "system": "bold bright_black",
    "user": "bold cyan",
    "assistant": "bold green",
    "tool": "bold yellow",
}
BLOCK_STYLES = {
    "think": "italic magenta",
    "tool_call": "green",
    "tools": "dark_cyan",
    "tool_response": "yellow",
    "answer": "bold bright_white on dark_blue",
}
# Is it learning? The verdict's tones (presentation/learning.py) in the web's colours: green,
# amber, red, grey (the rv-learning-<tone> classes).
TONE_STYLES = {
    "good": "bold green",
    "warn": "bold yellow",
    "bad": "bold white on red",
    "neutral": "dim",
}
MARKER_STYLE = "dim"
SPECIAL_STYLE = "bold magenta"
PAD_STYLE = "black on bright_blue"
HEADING_STYLE = "bold underline"
KEY_STYLE = "bold blue"
WARNING_STYLE = "bold yellow"
EMPTY = Text("(empty string)", style="dim italic")
# Long arrays (token ids, log-probs) are shown up to here in the terminal, with the count of
# the rest said out loud; the web viewer and the JSON API show them whole.
ARRAY_ITEMS_SHOWN = 400


def rendered_text(rendered: Rendered) -> Text:
    text = Text()
    for turn in rendered.turns:
        if turn.is_blank and len(rendered.turns) > 1:
            continue
        if turn.role is not None:
            text.append(f"{turn.role.upper() or '(no role)'}", ROLE_STYLES.get(turn.role, "bold"))
            if turn.start_marker:
                text.append(f"  {turn.start_marker.rstrip()}", MARKER_STYLE)
            text.append("\n")
        for block in turn.blocks:
            _append_block(text, block)
        if turn.end_marker:
            if not text.plain.endswith("\n"):
                text.append("\n")
            text.append(turn.end_marker, MARKER_STYLE)
        if turn.role is not None:
            text.append("\n\n")
    return text


def _append_block(text: Text, block: Block) -> None:
    if block.kind == "text":
        _append_spans(text, block, None)
        return
    style = BLOCK_STYLES.get(block.kind, "")
    if not block.text.strip():  # "<tool_call></tool_call>" in instructions: just the tags
        tags = (f"<{block.kind}>" if block.opened else "") + (
            f"</{block.kind}>" if block.closed else ""
        )
        text.append(tags, SPECIAL_STYLE)
        return
    label = block.kind.replace("_", " ")
    notes = []
    if not block.opened:
        notes.append("began in the prompt")
    if not block.closed:
        notes.append("not closed")
    if not text.plain.endswith("\n") and text.plain:
        text.append("\n")
    text.append(f"┌ {label}" + (f" ({', '.join(notes)})" if notes else "") + "\n", f"bold {style}")
    if block.pretty is not None:
        text.append(block.pretty, style)
    else:
        _append_spans(text, block, style)
    if not text.plain.endswith("\n"):
        text.append("\n")
    text.append(f"└ end {label}\n", f"dim {style}")


def _append_spans(text: Text, block: Block, style: str | None) -> None:
    for span in block.display_spans:
        if span.kind == "text":
            text.append(span.text, style or "")
        elif span.kind == "pad":
            text.append(f"[{span.text} \u00d7{span.count}]", PAD_STYLE)  # multiplication sign
        else:
            text.append(span.text, SPECIAL_STYLE)


def node_text(node: Node, indent: int = 0) -> Text:
    if node.type == "string":
        return Text(node.display) if node.display else EMPTY.copy()
    if node.type == "scalar":
        return Text(node.display)
    if node.type == "array" and not node.children:
        return _scalar_array(node)
    text = Text()
    label = f"[{node.count} item{'s' if node.count != 1 else ''}]" if node.type == "array" else ""
    if label:
        text.append(label, "dim")
    if node.type == "object" and not node.children:
        text.append("{}", "dim")
    pad = "  " * (indent + 1)
    for key, child in node.children:
        text.append(f"\n{pad}")
        text.append(f"{key}: ", KEY_STYLE)
        text.append_text(node_text(child, indent + 1))
    return text


def _scalar_array(node: Node) -> Text:
    text = Text(f"[{node.count} item{'s' if node.count != 1 else ''}] ", style="dim")
    items = node.display.split(", ") if node.display else []
    if len(items) > ARRAY_ITEMS_SHOWN:
        text.append(", ".join(items[:ARRAY_ITEMS_SHOWN]))
        text.append(f" … and {len(items) - ARRAY_ITEMS_SHOWN} more", "bold yellow")
    else:
        text.append(", ".join(items))
    return text


def section_body(section: Section) -> Text:
    if section.rendered is not None:
        return EMPTY.copy() if section.empty else rendered_text(section.rendered)
    assert section.node is not None
    return node_text(section.node)


def _visible(name: str, hidden: Collection[str]) -> bool:
    return name.split(".")[0] not in hidden  # "reward.acc" goes with "reward"


def sample_text(presented: PresentedSample, line: int, hidden: Collection[str] = ()) -> Text:
    """Plain mode: the info fields on top, then each text and other field under a heading."""
    text = Text()
    for warning in presented.warnings:
        text.append(f"! {warning}\n", WARNING_STYLE)
    info = [row for row in presented.info if _visible(row.name, hidden)]
    if info:
        text.append(f"Sample Info (line {line})\n", HEADING_STYLE)
        for row in info:
            text.append(f"{row.name}: ", KEY_STYLE)
            text.append(f"{row.display}\n", "dim" if row.kind == "null" else "")
        text.append("\n")
    for section in (*presented.texts, *presented.others):
        if not _visible(section.name, hidden):
            continue
        text.append(f"{section.name}\n", HEADING_STYLE)
        text.append_text(section_body(section))
        text.rstrip()
        text.append("\n\n")
    text.rstrip()
    return text


def sample_table(presented: PresentedSample, line: int, hidden: Collection[str] = ()) -> Table:
    """Table mode: one row per field, values wrapped in the second column."""
    table = Table(title=f"line {line}", show_header=True, expand=True, show_lines=True)
    table.add_column("field", style=KEY_STYLE, no_wrap=True)
    table.add_column("value", ratio=1)
    for warning in presented.warnings:
        table.add_row("warning", Text(warning, WARNING_STYLE))
    for row in presented.info:
        if _visible(row.name, hidden):
            table.add_row(row.name, row.display)
    for section in (*presented.texts, *presented.others):
        if _visible(section.name, hidden):
            table.add_row(section.name, section_body(section))
    return table


def verdict_text(bucket: str, verdict: LearningVerdict | None) -> Text:
    """The bucket's "is it learning?" line: the verdict's label in its tone's style, then why."""
    text = Text(f"{bucket}: ", style="bold")
    if verdict is None:
        return text.append("reading the steps…", style=TONE_STYLES["neutral"])
    text.append(f" {verdict['label']} ", style=TONE_STYLES.get(verdict["tone"], "dim"))
    if verdict["why"]:
        text.append(f" {verdict['why']}", style="dim")
    return text


def flags_line(flags: list[dict[str, str]]) -> Text:
    """A sample's flags with their reasons on one line ("flags: repeats (ends in ...)"); empty
    without flags. A Text, so nothing in a reason is read as markup."""
    if not flags:
        return Text("")
    text = Text("flags: ", style="bold")
    for i, flag in enumerate(flags):
        if i:
            text.append("; ")
        text.append(flag["name"], style="bold red")
        text.append(f" ({flag['reason']})")
    return text
