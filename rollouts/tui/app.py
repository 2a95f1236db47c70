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
from typing import ClassVar, TypeVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, Label, Select, SelectionList
from textual.worker import get_current_worker

from ..presentation import present_sample
from ..store import IndexCache, StepIndex, StoreError
from .find import FindBar
from .history import History, PromptHistory, prompt_history
from .learning import LearningLine, ReadingOf
from .pane import FlagsLine, SamplePane
from .progress import ColumnProgress
from .search import SearchScreen
from .session import Session
from .sidebar import Sidebar

T = TypeVar("T")


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
        Binding("F", "next_flagged", "next flagged"),
        Binding("slash", "search", "search steps"),
        Binding("enter", "find_next", "next match", show=False),
        Binding("escape", "clear_find", "clear", show=False),
        Binding("j", "page(1)", "page down"),
        Binding("k", "page(-1)", "page up"),
        Binding("g", "edge(0)", "top"),
        Binding("G", "edge(1)", "bottom"),
        Binding("s", "toggle_table", "plain/table"),
        Binding("r", "refresh", "refresh"),
        Binding("h", "prompt_history", "prompt history"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(
        self,
        data_dir: Path | str,
        mask_str: str | None = None,
        cache: IndexCache | None = None,
        reading_of: ReadingOf | None = None,
    ) -> None:
        super().__init__()
        self.session = Session(data_dir, mask_str, cache)
        self.reading_of: ReadingOf = reading_of or (lambda _, bucket: self.session.reading(bucket))
        self.table_mode = False
        self.hidden_fields: set[str] = set()

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal():
            session = self.session
            yield Sidebar(session)
            with Vertical(id="main"):
                yield FindBar(id="findbar")
                yield LearningLine(session, self.reading_of, id="learning")
                yield Label("", id="status")
                yield FlagsLine()
                yield ColumnProgress(self.session)
                yield SamplePane()
        yield Footer()

    def on_mount(self) -> None:
        self._sidebar().sync_buckets(self.session)
        self._open_current_step()

    # -- opening steps (worker threads) --------------------------------------------------
    # Threads cannot be stopped, so a worker that was superseded (the user moved on to another
    # step) finishes its reading but applies nothing: results are applied on the app's thread,
    # and only by the worker that is still current.
    def _open_current_step(self) -> None:
        self._sidebar().sync_steps(self.session)
        step = self.session.step
        if step is None:
            self.session.index = None
            self._show_message(f"bucket {self.session.bucket!r} has no step files yet")
            self.query_one(LearningLine).ask()
            return
        self._set_status(f"opening {self.session.step_label(step)} ...")
        step_pos = self.session.step_pos
        self._load_step(step_pos, partial(self._after_open, step_pos), "cannot open this step")

    @work(thread=True, exclusive=True, group="step")
    def _in_worker(
        self, read: Callable[[], T], apply: Callable[[T], None], fail: Callable[[str], None]
    ) -> None:
        """`read` on a worker thread, then `apply` to its result (or `fail` with the error) on
        the app's thread, only if no newer worker of the group has started meanwhile."""
        worker = get_current_worker()
        try:
            result = read()
        except (StoreError, OSError) as exc:
            if not worker.is_cancelled:
                self.call_from_thread(fail, str(exc))
            return
        if not worker.is_cancelled:
            self.call_from_thread(apply, result)

    def _load_step(self, step_pos: int, apply: Callable[[StepIndex], None], failed: str) -> None:
        """Open (or re-open) the step at `step_pos`, then `apply` its index."""
        read = partial(self.session.load_step, step_pos)
        self._in_worker(read, apply, lambda error: self._show_message(f"{failed}: {error}"))

    def _after_open(self, step_pos: int, index: StepIndex) -> None:
        self.session.show_step(step_pos, index)
        self._sidebar().sync_choices(self.session)
        self._set_status("")
        self._show_sample()
        if index.columns_ready:
            self.query_one(LearningLine).ask()
        else:  # after the first paint: the column pass holds the GIL for seconds on a big step
            self.call_after_refresh(self._build_columns, index)

    def _build_columns(self, index: StepIndex) -> None:
        """The column pass, which the progress bar follows."""
        self._in_worker(
            partial(self.session.build_columns, index),
            lambda _: self._after_columns(index),
            lambda error: self._set_status(f"indexing failed: {error}"),
        )

    def _after_columns(self, index: StepIndex) -> None:
        if index is not self.session.index:
            return
        self.session.reorder()
        self._sidebar().sync_choices(self.session)
        bad = index.invalid_lines()
        if bad:
            lines = ", ".join(str(b["line"]) for b in bad[:5]) + (" ..." if len(bad) > 5 else "")
            self._set_status(f"{len(bad)} unreadable line(s) left out: line {lines}")
        self._show_sample(keep_scroll=True)
        self.query_one(LearningLine).ask()

    # -- showing -------------------------------------------------------------------------
    def _show_sample(self, keep_scroll: bool = False) -> None:
        session = self.session
        label = self.query_one("#sample-label", Label)
        label.update(f"Sample {session.rank + 1} / {session.total}" if session.total else "Sample")
        pane = self._pane()
        try:
            line, sample, warnings = session.read()
        except StoreError as exc:
            pane.show(None)
            self._show_message(str(exc))
            return
        pane.show(present_sample(sample, session.mask, warnings), line)
        self.query_one(FlagsLine).show(session.flags())
        if warnings:
            self._set_status(f"line {line}: " + "; ".join(warnings))
        self._sidebar().sync_fields(session.keys(sample), self.hidden_fields)
        self._render_view()
        self._update_title()
        if not keep_scroll:
            pane.edge(bottom=False)

    def _render_view(self) -> None:
        pane, find = self._pane(), self._find_bar()
        pane.render_sample(self.hidden_fields, self.table_mode, find.query_text)
        find.show_count(pane.match_number, len(pane.matches))

    def _show_message(self, message: str) -> None:
        self._pane().show_message(message)
        self._set_status(message)

    def _set_status(self, message: str) -> None:
        self.query_one("#status", Label).update(message)

    def _sidebar(self) -> Sidebar:
        return self.query_one("#sidebar", Sidebar)

    def _pane(self) -> SamplePane:
        return self.query_one("#pane", SamplePane)

    def _update_title(self) -> None:
        step = self.session.step
        where = f"{self.session.bucket} · {self.session.step_label(step)}" if step else ""
        self.sub_title = f"{self.session.catalog.name} · {where}"

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

    @on(Select.Changed, "#flag")
    def _flag_chosen(self, event: Select.Changed) -> None:
        flag = str(event.value) or None
        if flag != self.session.flag:
            self._reorder(lambda: self.session.set_flag(flag))

    @on(Select.Changed, "#dataset")
    def _dataset_chosen(self, event: Select.Changed) -> None:
        dataset = str(event.value) or None
        if dataset != self.session.dataset:
            self._reorder(lambda: self.session.set_dataset(dataset))

    def _reorder(self, change: Callable[[], None]) -> None:
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
    def _fields_changed(self) -> None:
        # Also sent after the sidebar rebuilt the list; it then matches `hidden_fields` already.
        self.hidden_fields = self._sidebar().hidden_fields()
        self._render_view()

    # -- find ----------------------------------------------------------------------------
    def _find_bar(self) -> FindBar:
        return self.query_one("#findbar", FindBar)

    def action_find(self) -> None:
        self._find_bar().open()

    @on(Input.Changed, "#find")
    def _find_typed(self) -> None:
        self._pane().match_number = 1
        self._render_view()
        self._scroll_to_match()

    @on(Input.Submitted, "#find")
    def _find_submitted(self) -> None:
        self.action_find_next()

    def action_find_next(self) -> None:
        if self._pane().next_match():
            self._render_view()
            self._scroll_to_match()

    def action_clear_find(self) -> None:
        self._find_bar().close()
        pane = self._pane()
        pane.match_number = 0
        pane.focus()
        self._render_view()

    def _scroll_to_match(self) -> None:
        if not self.table_mode:
            self._pane().scroll_to_match()

    # -- search across steps (search.py) --------------------------------------------------
    def action_search(self) -> None:
        self.push_screen(SearchScreen(self.session.catalog, self.session.bucket), self._open_hit)

    def _open_hit(self, hit: tuple[str, int] | None) -> None:
        """Open the sample a search hit or the prompt's history names: (step name, position),
        its step first if another one is shown; None: the list was closed."""
        if hit is None:
            return
        name, position = hit
        self.session.relist()  # the search may have seen steps the step list has not
        step_pos = next((i for i, s in enumerate(self.session.steps) if s.name == name), None)
        if step_pos is None:
            self._set_status(f"step {name} is no longer there")
            return
        self._sidebar().sync_steps(self.session)
        self._load_step(
            step_pos, partial(self._after_open_at, step_pos, position), "cannot open this step"
        )

    def _after_open_at(self, step_pos: int, position: int, index: StepIndex) -> None:
        self._after_open(step_pos, index)
        self._sidebar().sync_steps(self.session)  # the step selector shows the step opened
        self.session.show_position(position)  # kept when the columns arrive
        self._show_sample()

    # -- actions -------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if self.session.move(delta):
            self._show_sample()

    def action_next_flagged(self) -> None:
        found = self.session.next_flagged()
        if found:
            self._show_sample()
        else:
            self._set_status("flags: after indexing" if found is None else "no flagged sample here")

    def action_step(self, delta: int) -> None:
        if self.session.move_step(delta):
            self._open_current_step()

    def action_switch_bucket(self) -> None:
        following = self.session.next_bucket()
        if following is not None:
            self._switch_to_bucket(following)

    def _switch_to_bucket(self, bucket: str) -> None:
        try:
            self.session.switch_bucket(bucket)
        except StoreError as exc:
            self._set_status(str(exc))
            return
        self._sidebar().sync_buckets(self.session)
        self._open_current_step()

    def action_page(self, direction: int) -> None:
        self._pane().page(direction)

    def action_edge(self, bottom: int) -> None:
        self._pane().edge(bool(bottom))

    def action_toggle_table(self) -> None:
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
        self._sidebar().sync_buckets(self.session)
        self._sidebar().sync_steps(self.session)
        self.query_one(LearningLine).forget()  # asked again once the step is read again
        if session.index is None or session.step is None:
            self._open_current_step()
            return
        self._load_step(session.step_pos, self._after_refresh, "refresh failed")

    def _after_refresh(self, index: StepIndex) -> None:
        self.session.update_index(index)
        if not index.columns_ready:
            self.call_after_refresh(self._build_columns, index)
        else:
            self.query_one(LearningLine).ask()
        self._sidebar().sync_choices(self.session)
        self._show_sample(keep_scroll=True)
        self._set_status(f"refreshed: {self.session.total} samples")

    # -- the prompt's history ----------------------------------------------------------
    def action_prompt_history(self) -> None:
        """The steps where the shown sample's prompt appears (read on a worker thread)."""
        session = self.session
        try:
            _, sample, _ = session.read()
        except StoreError as exc:
            self._set_status(str(exc))
            return
        self._set_status("finding this prompt in every step ...")
        self._in_worker(
            partial(prompt_history, session.catalog, session.bucket, sample),
            self._show_history,
            lambda error: self._set_status(f"prompt history failed: {error}"),
        )

    def _show_history(self, history: History | None) -> None:
        if history is None:
            self._set_status("this sample has no prompt")
            return
        self._set_status("")
        self.push_screen(PromptHistory(history), self._open_hit)
