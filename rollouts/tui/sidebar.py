"""The selectors on the left: bucket, step, sample number, dataset, flag, sort, and the fields
shown.

The sidebar lays them out and keeps them showing what the session shows; the app reacts to
their changes (a change the sidebar makes itself is not the user's, and is not announced).
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, Input, Label, Select, SelectionList
from textual.widgets.selection_list import Selection

from .session import Session


def step_options(session: Session) -> list[tuple[str, int]]:
    return [(session.step_label(s), pos) for pos, s in enumerate(session.steps)]


class Sidebar(Vertical):
    def __init__(self, session: Session) -> None:
        super().__init__(id="sidebar")
        self._initial = session

    def compose(self) -> ComposeResult:
        session = self._initial
        steps = step_options(session)
        yield Label("Bucket", classes="caption")
        buckets = [(b, b) for b in session.buckets]
        yield Select(buckets, id="bucket", allow_blank=False, value=session.bucket)
        yield Label("Step", classes="caption")
        # A blank entry only when there is nothing to pick.
        yield Select(
            steps,
            id="step",
            prompt="no steps",
            allow_blank=not steps,
            value=session.step_pos if steps else Select.NULL,
        )
        yield Label("Sample", id="sample-label", classes="caption")
        yield Input(placeholder="number, Enter", id="sample", type="integer")
        yield Label("Dataset", id="dataset-label", classes="caption")
        yield Select([("all datasets", "")], id="dataset", allow_blank=False)
        yield Label("Flag", classes="caption")
        yield Select(session.flag_choices(), id="flag", allow_blank=False, value="")
        yield Label("Sort", classes="caption")
        yield Select([("file order", "")], id="sort", allow_blank=False)
        yield Label("Fields", classes="caption")
        yield Button("select all", id="fields-all", compact=True)
        yield SelectionList[str](id="fields")

    def _set_options(self, select_id: str, options: list[tuple[str, Any]], value: Any) -> None:
        select = self.query_one(f"#{select_id}", Select)
        # set_options() itself selects the first option; neither change is the user's. (The app
        # is the message pump running whenever the sidebar is synced.)
        with self.app.prevent(Select.Changed):
            select.set_options(options)
            if options:
                select.value = value

    def sync_buckets(self, session: Session) -> None:
        self._set_options("bucket", [(b, b) for b in session.buckets], session.bucket)

    def sync_steps(self, session: Session) -> None:
        self._set_options("step", step_options(session), session.step_pos)

    def sync_choices(self, session: Session) -> None:
        """The sort choices, the flags with their counts and the datasets of the open step (the
        dataset selector only when the step has datasets)."""
        self._set_options("sort", session.sort_choices(), session.selection.sort_key)
        self._set_options("flag", session.flag_choices(), session.flag or "")
        datasets = session.datasets()
        options = [("all datasets", ""), *((d, d) for d in datasets)]
        self._set_options("dataset", options, session.dataset or "")
        show = bool(datasets)
        self.query_one("#dataset").display = show
        self.query_one("#dataset-label").display = show

    def hidden_fields(self) -> set[str]:
        """The fields the user unticked."""
        fields = self.query_one("#fields", SelectionList)
        selected = set(fields.selected)
        every = [fields.get_option_at_index(i).value for i in range(fields.option_count)]
        return {k for k in every if k not in selected}

    @on(Button.Pressed, "#fields-all")
    def _select_all_fields(self) -> None:
        self.query_one("#fields", SelectionList).select_all()

    def sync_fields(self, keys: list[str], hidden: set[str]) -> None:
        fields = self.query_one("#fields", SelectionList)
        current = [fields.get_option_at_index(i).value for i in range(fields.option_count)]
        if current == keys:
            return
        fields.clear_options()
        fields.add_options([Selection(k, k, k not in hidden) for k in keys])
