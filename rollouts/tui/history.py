"""The shown sample's prompt across the bucket's steps (`h`): one row per step where it appears,
with its samples' mean reward, and one row per sample; Enter opens a sample, Escape closes.

The rows come from `store.lineage` (the prompt-id column of every step, never sample bodies),
the same as the web's prompt page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from ..presentation import format_number
from ..store import (
    NO_PROMPT,
    Appearance,
    Catalog,
    SkippedStep,
    find_prompt,
    format_prompt_id,
    prompt_id_of_value,
)


@dataclass(frozen=True, slots=True)
class History:
    prompt_id: str
    appearances: list[Appearance]
    steps: list[dict[str, Any]]
    skipped: list[SkippedStep]


def prompt_history(catalog: Catalog, bucket: str, sample: dict[str, Any]) -> History | None:
    """The history of `sample`'s prompt in `bucket` (None when the sample has no prompt).
    Reads every step's prompt columns: run it on a worker thread."""
    prompt_id = prompt_id_of_value(sample.get("prompt"))
    if prompt_id == NO_PROMPT:
        return None
    found = find_prompt(catalog, bucket, prompt_id)
    return History(format_prompt_id(prompt_id), found.appearances, found.steps, found.skipped)


def _number(value: float | None) -> str:
    return "–" if value is None else format_number(value)  # noqa: RUF001 (an en dash: no value)


# A prompt shared by 60,000 samples would be a list of 60,000 rows (as the web page was before
# it paged): each step lists its first samples, and the whole list stops at a bound.
SAMPLES_PER_STEP = 50
MOST_OPTIONS = 2000


def history_options(history: History) -> list[Option]:
    """A disabled heading per step (its mean reward), then its first samples, each openable;
    a sample's option id is "STEP_NAME:POSITION". A line says what was left out."""
    options: list[Option] = []
    by_step: dict[int, list[Appearance]] = {}
    for a in history.appearances:
        by_step.setdefault(a.step, []).append(a)
    for n, step in enumerate(history.steps):
        if len(options) >= MOST_OPTIONS:
            rest = history.steps[n:]
            left = sum(s["samples"] for s in rest)
            options.append(Option(f"… {len(rest)} more steps, {left} samples", disabled=True))
            break
        found = by_step[step["step"]]
        heading = (
            f"step {step['name']}: {step['samples']} sample{'s' if step['samples'] != 1 else ''},"
            f" mean reward {_number(step['mean_reward'])}"
        )
        options.append(Option(heading, disabled=True))
        if len(found) > SAMPLES_PER_STEP:
            more = len(found) - SAMPLES_PER_STEP
            found = found[:SAMPLES_PER_STEP]
        else:
            more = 0
        for a in found:
            length = _number(a.response_length)
            text = (
                f"   line {a.line}: reward {_number(a.reward)}, {a.status or '–'}, length {length}"  # noqa: RUF001
            )
            options.append(Option(text, id=f"{a.name}:{a.position}"))
        if more:
            options.append(Option(f"   … {more} more samples in this step", disabled=True))
    return options


class PromptHistory(ModalScreen[tuple[str, int] | None]):
    """The list; dismissed with (step name, position) of the chosen sample, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "close"),
        Binding("h", "dismiss(None)", "close", show=False),
    ]
    DEFAULT_CSS = """
    PromptHistory { align: center middle; }
    PromptHistory > Vertical {
        width: 90%; height: 80%; border: round $accent; background: $surface;
    }
    PromptHistory OptionList { height: 1fr; }
    """

    def __init__(self, history: History) -> None:
        super().__init__()
        self.history = history

    def compose(self) -> ComposeResult:
        history = self.history
        with Vertical():
            yield Label(
                f"prompt {history.prompt_id}: {len(history.appearances)} samples in "
                f"{len(history.steps)} steps (Enter opens one, Escape closes)"
                + "".join(f"; step {s['step']} skipped: {s['error']}" for s in history.skipped),
                id="history-title",
            )
            yield OptionList(*history_options(history), id="history")

    def on_mount(self) -> None:
        options = self.query_one("#history", OptionList)
        options.focus()
        options.highlighted = next(
            (i for i in range(options.option_count) if not options.get_option_at_index(i).disabled),
            None,
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        step, _, position = (event.option.id or "").partition(":")
        self.dismiss((step, int(position)))
