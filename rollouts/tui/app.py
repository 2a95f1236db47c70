"""`manage.py visualize DATA_DIR --tui`: the terminal viewer, for users who only have SSH.

Thin on purpose: `Session` decides what is shown, `text` how it looks; this module wires keys
and widgets to them. Anything that reads a file runs in a worker thread, so the interface never
freezes on a big step: the first sample shows after the newline scan, and the columns (sorting,
datasets, the key list) fill in behind a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (
    Button,
    Footer,
    Header,
    Input,
    Label,
    ProgressBar,
    Select,
    SelectionList,
    Static,
)
from textual.widgets.selection_list import Selection
from textual.worker import get_current_worker

from ..presentation.sample import PresentedSample, present_sample
from ..store import IndexCache, StepIndex, StoreError
from .session import Session, find_matches
from .text import sample_table, sample_text

PROGRESS_INTERVAL = 0.2  # seconds between progress-bar updates while indexing


class RolloutsApp(App[None]):
    TITLE = "Relax Rollout Viewer"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "move(1)", "next"),
        Binding("p", "move(-1)", "prev"),
        Binding("N", "step(1)", "next step"),
        Binding("P", "step(-1)", "prev step"),
        Binding("b", "switch_bucket", "bucket"),
        Binding("f", "find", "find"),
        Binding("enter", "find_next", "next match", show=False),
        Binding("escape", "clear_find", "clear", show=False),
        Binding("j", "page(1)", "page down"),
        Binding("k", "page(-1)", "page up"),
        Binding("g", "edge(0)", "top"),
        Binding("G", "edge(1)", "bottom"),
        Binding("s", "switch_mode", "plain/table"),
        Binding("r", "refresh", "refresh"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(
        self, data_dir: Path | str, mask_str: str | None = None, cache: IndexCache | None = None
    ) -> None:
        super().__init__()
        self.session = Session(data_dir, mask_str, cache)
        self.table_mode = False
        self.hidden_fields: set[str] = set()
        self.matches: list[int] = []
        self.match_number = 0  # 1-based; 0 when there is no current match
        self.presented: PresentedSample | None = None
        self.line = 0
        self.plain = ""

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal():
            with Vertical(id="sidebar"):
                yield Label("Bucket", classes="caption")
                buckets = [(b, b) for b in self.session.buckets]
                yield Select(buckets, id="bucket", allow_blank=False, value=self.session.bucket)
                yield Label("Step", classes="caption")
                steps = self._step_options()
                # A blank entry only when there is nothing to pick.
                chosen = {"value": self.session.step_pos} if steps else {}
                yield Select(steps, id="step", prompt="no steps", allow_blank=not steps, **chosen)
                yield Label("Sample", id="sample-label", classes="caption")
                yield Input(placeholder="number, Enter", id="sample", type="integer")
                yield Label("Dataset", id="dataset-label", classes="caption")
                yield Select([("all datasets", "")], id="dataset", allow_blank=False)
                yield Label("Sort", classes="caption")
                yield Select([("file order", "")], id="sort", allow_blank=False)
                yield Label("Fields", classes="caption")
                yield Button("select all", id="fields-all", compact=True)
                yield SelectionList[str](id="fields")
            with Vertical(id="main"):
                with Horizontal(id="findbar"):
                    yield Input(placeholder="find in this sample", id="find")
                    yield Label("", id="find-count")
                yield Label("", id="status")
                yield ProgressBar(id="progress", show_eta=False)
                with VerticalScroll(id="pane"):
                    yield Static("", id="view")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#findbar").display = False
        self.query_one("#progress").display = False
        self._sync_buckets()
        self._open_current_step()
        self.set_interval(PROGRESS_INTERVAL, self._show_progress)

    # -- opening steps (worker threads) --------------------------------------------------
    # Threads cannot be stopped, so a worker that was superseded (the user moved on to another
    # step) finishes its reading but applies nothing: results are applied on the app's thread,
    # and only by the worker that is still current.
    def _open_current_step(self) -> None:
        self._sync_steps()
        step = self.session.step
        if step is None:
            self.session.index = None
            self._show_message(f"bucket {self.session.bucket!r} has no step files yet")
            return
        self._set_status(f"opening {self.session.step_label(step)} ...")
        step_pos = self.session.step_pos
        self._load_step(step_pos, partial(self._after_open, step_pos), "cannot open this step")

    @work(thread=True, exclusive=True, group="step")
    def _load_step(self, step_pos: int, apply: Callable[[StepIndex], None], failed: str) -> None:
        """Read the step on a worker thread; `apply` runs on the app's thread if still wanted."""
        worker = get_current_worker()
        try:
            index = self.session.load_step(step_pos)
        except (StoreError, OSError) as exc:
            if not worker.is_cancelled:
                self.call_from_thread(self._show_message, f"{failed}: {exc}")
            return
        if not worker.is_cancelled:
            self.call_from_thread(apply, index)

    def _after_open(self, step_pos: int, index: StepIndex) -> None:
        self.session.show_step(step_pos, index)
        self._sync_choices()
        self._set_status("")
        self._show_sample()
        if not index.columns_ready:
            # After the first paint: the column pass holds the GIL for seconds on a big step.
            self.call_after_refresh(self._build_columns, index)

    @work(thread=True, exclusive=True, group="step")
    def _build_columns(self, index: StepIndex) -> None:
        """The column pass on a worker thread; the progress bar follows it."""
        worker = get_current_worker()
        try:
            self.session.build_columns(index)
        except (StoreError, OSError) as exc:
            if not worker.is_cancelled:
                self.call_from_thread(self._set_status, f"indexing failed: {exc}")
            return
        if not worker.is_cancelled:
            self.call_from_thread(self._after_columns, index)

    def _after_columns(self, index: StepIndex) -> None:
        if index is not self.session.index:
            return
        self.session.reorder()
        self._sync_choices()
        bad = index.invalid_lines()
        if bad:
            lines = ", ".join(str(b["line"]) for b in bad[:5]) + (" ..." if len(bad) > 5 else "")
            self._set_status(f"{len(bad)} unreadable line(s) left out: line {lines}")
        self._show_sample(keep_scroll=True)

    def _show_progress(self) -> None:
        if not self.is_running:  # the timer can fire once more while the app shuts down
            return
        bar = self.query_one("#progress", ProgressBar)
        done, total = self.session.columns_progress()
        indexing = self.session.index is not None and not self.session.columns_ready
        bar.display = indexing and total > 0
        if bar.display:
            bar.update(total=total, progress=done)

    # -- showing -------------------------------------------------------------------------
    def _show_sample(self, keep_scroll: bool = False) -> None:
        session = self.session
        label = self.query_one("#sample-label", Label)
        label.update(f"Sample {session.rank + 1} / {session.total}" if session.total else "Sample")
        try:
            self.line, sample = session.read()
        except StoreError as exc:
            self.presented = None
            self._show_message(str(exc))
            return
        self.presented = present_sample(sample, session.mask)
        self._sync_fields(session.keys(sample))
        self._render_view()
        self._update_title()
        if not keep_scroll:
            self.query_one("#pane", VerticalScroll).scroll_home(animate=False)

    def _render_view(self) -> None:
        if self.presented is None:
            return
        text = sample_text(self.presented, self.line, self.hidden_fields)
        self.plain = text.plain
        self.matches = find_matches(self.plain, self._find_query())
        if self.match_number > len(self.matches):
            self.match_number = min(1, len(self.matches))
        self._highlight(text)
        view = self.query_one("#view", Static)
        if self.table_mode:
            view.update(sample_table(self.presented, self.line, self.hidden_fields))
        else:
            view.update(text)
        self._update_find_count()

    def _highlight(self, text: Text) -> None:
        length = len(self._find_query())
        for number, start in enumerate(self.matches, 1):
            style = "black on yellow" if number == self.match_number else "reverse"
            text.stylize(style, start, start + length)

    def _show_message(self, message: str) -> None:
        self.query_one("#view", Static).update(Text(message, style="bold red"))
        self._set_status(message)

    def _set_status(self, message: str) -> None:
        self.query_one("#status", Label).update(message)

    def _update_title(self) -> None:
        step = self.session.step
        where = f"{self.session.bucket} · {self.session.step_label(step)}" if step else ""
        self.sub_title = f"{self.session.catalog.name} · {where}"

    # -- keeping the selectors in step with the session ----------------------------------
    def _set_options(self, select_id: str, options: list[tuple[str, Any]], value: Any) -> None:
        select = self.query_one(f"#{select_id}", Select)
        # set_options() itself selects the first option; neither change is the user's.
        with self.prevent(Select.Changed):
            select.set_options(options)
            if options:
                select.value = value

    def _sync_buckets(self) -> None:
        buckets = self.session.buckets
        self._set_options("bucket", [(b, b) for b in buckets], self.session.bucket)

    def _step_options(self) -> list[tuple[str, int]]:
        session = self.session
        return [(session.step_label(s), pos) for pos, s in enumerate(session.steps)]

    def _sync_steps(self) -> None:
        self._set_options("step", self._step_options(), self.session.step_pos)

    def _sync_choices(self) -> None:
        session = self.session
        self._set_options("sort", session.sort_choices(), session.selection.sort_key)
        datasets = session.datasets()
        self._set_options(
            "dataset", [("all datasets", ""), *((d, d) for d in datasets)], session.dataset or ""
        )
        show = bool(datasets)
        self.query_one("#dataset").display = show
        self.query_one("#dataset-label").display = show

    def _sync_fields(self, keys: list[str]) -> None:
        fields = self.query_one("#fields", SelectionList)
        current = [fields.get_option_at_index(i).value for i in range(fields.option_count)]
        if current == keys:
            return
        fields.clear_options()
        fields.add_options([Selection(k, k, k not in self.hidden_fields) for k in keys])

    # -- selectors -----------------------------------------------------------------------
    @on(Select.Changed, "#bucket")
    def _bucket_chosen(self, event: Select.Changed) -> None:
        if event.value != self.session.bucket:
            self._switch_to_bucket(str(event.value))

    # Changed messages arrive after the app's own `_set_options` has returned, so each handler
    # compares with the session: a selector showing what is already shown does nothing.
    @on(Select.Changed, "#step")
    def _step_chosen(self, event: Select.Changed) -> None:
        if isinstance(event.value, int) and event.value != self.session.step_pos:
            self.session.step_pos = event.value
            self._open_current_step()

    @on(Select.Changed, "#sort")
    def _sort_chosen(self, event: Select.Changed) -> None:
        sort_key = str(event.value)
        if sort_key != self.session.selection.sort_key:
            self._reorder(lambda: self.session.set_sort(sort_key))

    @on(Select.Changed, "#dataset")
    def _dataset_chosen(self, event: Select.Changed) -> None:
        dataset = str(event.value) or None
        if dataset != self.session.dataset:
            self._reorder(lambda: self.session.set_dataset(dataset))

    def _reorder(self, change) -> None:
        try:
            change()
        except StoreError as exc:
            self._set_status(str(exc))
            return
        self._show_sample()

    @on(Input.Submitted, "#sample")
    def _sample_typed(self, event: Input.Submitted) -> None:
        try:
            self.session.go_to(int(event.value))
        except ValueError:
            self._set_status(f"not a sample number: {event.value!r}")
            return
        event.input.value = ""
        self.query_one("#pane").focus()
        self._show_sample()

    @on(SelectionList.SelectedChanged, "#fields")
    def _fields_changed(self, event: SelectionList.SelectedChanged) -> None:
        # Also sent after the app rebuilt the list; the selection then matches `hidden_fields`.
        fields = event.selection_list
        selected = set(fields.selected)
        every = [fields.get_option_at_index(i).value for i in range(fields.option_count)]
        self.hidden_fields = {k for k in every if k not in selected}
        self._render_view()

    @on(Button.Pressed, "#fields-all")
    def _select_all_fields(self) -> None:
        self.query_one("#fields", SelectionList).select_all()

    # -- find ----------------------------------------------------------------------------
    def _find_query(self) -> str:
        bar = self.query_one("#findbar")
        return self.query_one("#find", Input).value if bar.display else ""

    def action_find(self) -> None:
        self.query_one("#findbar").display = True
        self.query_one("#find", Input).focus()

    @on(Input.Changed, "#find")
    def _find_typed(self) -> None:
        self.match_number = 1
        self._render_view()
        self._scroll_to_match()

    @on(Input.Submitted, "#find")
    def _find_submitted(self) -> None:
        self.action_find_next()

    def action_find_next(self) -> None:
        if not self.matches:
            return
        self.match_number = self.match_number % len(self.matches) + 1
        self._render_view()
        self._scroll_to_match()

    def action_clear_find(self) -> None:
        find = self.query_one("#find", Input)
        find.value = ""
        self.query_one("#findbar").display = False
        self.match_number = 0
        self.query_one("#pane").focus()
        self._render_view()

    def _update_find_count(self) -> None:
        count = self.query_one("#find-count", Label)
        if not self._find_query():
            count.update("")
        elif not self.matches:
            count.update("no match")
        else:
            count.update(f"{self.match_number}/{len(self.matches)}")

    def _scroll_to_match(self) -> None:
        if not self.matches or self.table_mode or not self.match_number:
            return
        offset = self.matches[self.match_number - 1]
        pane = self.query_one("#pane", VerticalScroll)
        width = max(pane.size.width - 2, 20)
        # Rows above the match, counting soft wraps of each line at the pane's width.
        rows = sum(max(1, -(-len(line) // width)) for line in self.plain[:offset].split("\n"))
        pane.scroll_to(y=max(rows - 3, 0), animate=False)

    # -- actions -------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if self.session.move(delta):
            self._show_sample()

    def action_step(self, delta: int) -> None:
        session = self.session
        target = session.step_pos + delta
        if 0 <= target < len(session.steps):
            session.step_pos = target
            self._open_current_step()

    def action_switch_bucket(self) -> None:
        buckets = self.session.buckets
        if len(buckets) > 1:
            following = buckets[(buckets.index(self.session.bucket) + 1) % len(buckets)]
            self._switch_to_bucket(following)

    def _switch_to_bucket(self, bucket: str) -> None:
        try:
            self.session.switch_bucket(bucket)
        except StoreError as exc:
            self._set_status(str(exc))
            return
        self._sync_buckets()
        self._open_current_step()

    def action_page(self, direction: int) -> None:
        pane = self.query_one("#pane", VerticalScroll)
        (pane.scroll_page_down if direction > 0 else pane.scroll_page_up)(animate=False)

    def action_edge(self, bottom: int) -> None:
        pane = self.query_one("#pane", VerticalScroll)
        (pane.scroll_end if bottom else pane.scroll_home)(animate=False)

    def action_switch_mode(self) -> None:
        self.table_mode = not self.table_mode
        self._render_view()

    def action_refresh(self) -> None:
        """New steps, a grown or rewritten file: what a live run changes under us."""
        session = self.session
        try:
            session.relist()
        except StoreError as exc:
            self._show_message(f"refresh failed: {exc}")
            return
        self._sync_steps()
        if session.index is None or session.step is None:
            self._open_current_step()
            return
        self._load_step(session.step_pos, self._after_refresh, "refresh failed")

    def _after_refresh(self, index: StepIndex) -> None:
        self.session.update_index(index)
        if not index.columns_ready:
            self.call_after_refresh(self._build_columns, index)
        self._sync_choices()
        self._show_sample(keep_scroll=True)
        self._set_status(f"refreshed: {self.session.total} samples")
