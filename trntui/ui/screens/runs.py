"""The Runs screen: imported trial runs, their set's spread, and one run's throughput plot.

The runs come from the runs table (``store.runs``); their facts from the session's last
recompute (``Session.computed``: derived once, shared with the estimate); selecting a run reads
its stored timeline in a worker to draw the plot, so the screen never re-parses a log.

The table holds at most ``SHOWN_ROWS`` runs (filling a table costs a tenth of a millisecond
or more per row, and a team's archive has ten thousand): ``/`` filters the runs by their
set's name or their log's, and the status line says how many are shown of how many. While a
filter is typed the table holds only ``TYPING_ROWS`` (each keystroke refills it); enter fills it.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import ClassVar

import polars as pl
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.events import DescendantBlur
from textual.widgets import DataTable, Footer, Input, Static
from textual.worker import get_current_worker

from trntui.core.backtest import Backtest, backtest
from trntui.core.errors import UserError
from trntui.core.format import number
from trntui.core.inventory import TrainingTarget
from trntui.core.run_facts import RunFacts, run_facts, summarize_set
from trntui.core.system_size import set_size
from trntui.core.throughput_series import throughput_series
from trntui.core.timeline import SystemSize
from trntui.store.runs import (
    RunSetInfo,
    load_run,
    load_runs,
    run_sets,
    stale_runs,
)
from trntui.store.scenarios import current_user
from trntui.store.set_sizes import run_sizes
from trntui.store.telemetry import run_detail
from trntui.ui.format import UNKNOWN, distinct_labels, fit_middle, plural
from trntui.ui.key_hold import key_hold_of
from trntui.ui.screens.base import SessionScreen, edits
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.import_runs import Imported, ImportRunsScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.run_detail import RunDetailScreen
from trntui.ui.screens.run_entries import MoveEntry, SetSizeEntry
from trntui.ui.screens.runs_columns import (
    COLUMNS,
    LOG_WIDTH,
    NARROW_LOG_WIDTH,
    NARROW_SET_WIDTH,
    SET_WIDTH,
    WIDE_FROM,
    launched,
    minutes,
    size_cell,
    steady_cell,
)
from trntui.ui.session import Session
from trntui.ui.text import cell, shown
from trntui.ui.widgets.area_bar import AreaBar
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.status_line import StatusLine
from trntui.ui.widgets.text_field import TextField
from trntui.ui.widgets.throughput_plot import PlotFacts, ThroughputPlot

SHOWN_ROWS = 200
"""The most runs the table holds (a refill of 200 rows costs plain Textual's table about
120 ms at a keystroke: ``benchmarks/bench_team_archive.py``)."""
TYPING_ROWS = 50
"""The most runs the table holds while a filter is typed: the rows in view and several pages
more, refilled at each keystroke; enter (or leaving the field) fills it to ``SHOWN_ROWS``."""


OPENING_DETAIL = "opening a run's detail"
"""What the held keys wait for while a worker reads the run's detail (``ui/key_hold.py``)."""


def as_text(value: object) -> object:
    """A cell as the ``Text`` the table would make of it, made here: the table reads a string
    as markup (two-fifths of a 200-row refill's time at each filter keystroke, in a team's
    archive). ``cell`` has already shown anything markup would read."""
    return Text(value, no_wrap=True, end="") if isinstance(value, str) else value


class RunsTable(DataTable[str]):
    """The runs, a row each. The highlighted row stays in view when the table gets shorter:
    scrolled to (a set just imported, a filter's match) while the set line under the table
    was shorter, it went out of view when a longer one took a line from the table.

    Enter opens the run's detail (after a worker reads it): keys typed right after wait for
    it (``ui/key_hold.py``)."""

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"select_cursor"})

    def on_resize(self) -> None:
        if self.row_count and self.cursor_row >= 0:
            # The same row: scrolled into view, no new highlight.
            self.call_after_refresh(self.move_cursor, row=self.cursor_row)


class RunsScreen(SessionScreen):
    DEFAULT_CSS = """
    RunsScreen #runs { height: 1fr; min-height: 5; }
    RunsScreen #set-summary { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    RunsScreen #empty { padding: 1 2; }
    """

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset(
        {
            "import_runs",
            "open_run",
            "move_set",
            "state_size",
            "remove_run",
            "filter_runs",
            "leave_filter",
        }
    )
    """Actions that open a dialog, or move the focus to the filter field or away from it: keys
    typed right after wait for it (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding(
            "i",
            "import_runs",
            "Import",
            tooltip="Import run logs (files or folders), previewed before storing",
            id="runs.import",
        ),
        Binding(
            "slash",
            "filter_runs",
            "Filter",
            show=False,  # in Help (f1) and the palette; the footer has no room at 80 columns
            tooltip="Show only the runs whose set or log name holds the text typed",
            id="runs.filter",
        ),
        Binding(
            "escape",
            "leave_filter",
            "Table",
            tooltip="Leave the filter for the table, the filter kept (then 1-4 switch areas)",
            id="runs.leave_filter",
        ),
        Binding(
            "z",
            "state_size",
            "Set size",
            tooltip="State the system size of the highlighted run's set",
            id="runs.size",
        ),
        Binding(
            "m",
            "move_set",
            "Move",
            show=False,  # in Help (f1) and the palette; the footer has no room at 80 columns
            tooltip="Rename the highlighted run's set, or move the run to another set",
            id="runs.move_set",
        ),
        Binding(
            "x", "remove_run", "Remove", tooltip="Remove the highlighted run", id="runs.remove"
        ),
        Binding(
            "d",
            "remove_run",
            "Remove",
            show=False,
            tooltip="Remove the highlighted run (d deletes on every screen)",
            id="runs.remove_d",
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session, id="runs-screen")
        self.runs = pl.DataFrame()
        self.sets: dict[str, RunSetInfo] = {}
        self.facts: dict[str, RunFacts] = {}
        self._units_differ = False
        """Whether the runs' facts have more than one throughput unit (``steady_cell``)."""
        self.sizes: dict[str, SystemSize | None] = {}
        self.backtests: dict[str, Backtest | None] = {}
        self._observations: pl.DataFrame | None = None
        self._shown_derived: object = None
        """The run facts the table shows (see ``_show_facts``)."""
        self._set_summary_text = ""
        """The set lines shown below the table (``_show_set``)."""
        self._typing_rows = False
        """The table holds fewer runs than it would, because a filter is being typed."""
        self._said = ""
        """What ``_say_shown`` last put on the status line ('' when it said nothing)."""
        self._plotted: tuple[str, object, int] | None = None
        """The run whose plot is shown or loading, the run facts and the plot width it was
        drawn with."""

    def compose(self) -> ComposeResult:
        yield AreaBar("screen.runs", self.session)
        with Vertical(id="runs-body"):
            yield Static(
                "No runs imported yet. Press [b]i[/b] to import training logs "
                "(MLPerf, Megatron-LM, neuronx-distributed, Hugging Face trainer_state.json).",
                id="empty",
            )
            table = RunsTable(id="runs", cursor_type="row", zebra_stripes=True)
            yield table
            yield Static("", id="set-summary")
            yield ThroughputPlot(id="plot")
        yield EstimateBar(self.session)
        yield StatusLine(self.session.signals.status)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._wide: bool | None = None
        self._mixed_units = False
        """Whether the columns were laid out for runs of more than one throughput unit."""
        self._set_columns()
        # The facts come with each estimate: it follows every change of the goal (also an
        # undo while this screen shows) and every import.
        signals = self.session.signals
        signals.recomputed.subscribe(self, lambda _: self._show_facts())
        signals.runs.subscribe(self, lambda _: self.reload_runs())
        self.reload_runs()

    def reload_runs(self) -> None:
        """Read the runs table; each run's facts come from the session's last estimate."""
        root = self.session.root
        try:
            # In the table's order once, not at every filter keystroke.
            self.runs = load_runs(root).sort("set_name", "source")
            self.sets = {info.name: info for info in run_sets(root, self.runs)}
            self.sizes = run_sizes(self.runs, self.session.store.stated_sizes())
        except UserError as error:
            self.set_status(str(error), "error")
            self.runs = pl.DataFrame()
            self.sets = {}
        empty = self.runs.is_empty()
        self.query_one("#empty").display = empty
        self.query_one("#runs", DataTable).display = not empty
        if empty:
            self.query_one("#runs", DataTable).clear()
            self._set_summary_text = ""
            self.query_one("#set-summary", Static).update("")
            self.query_one(ThroughputPlot).show(None, message=" ")
            return
        stale = stale_runs(self.runs)
        if stale:
            self.set_status(
                f"{plural(stale, 'run')} {'was' if stale == 1 else 'were'} read by an older "
                "trntui: press i and import their logs "
                "again to read their system size and job clock"
            )
        self._shown_derived = None  # the sets may differ: check them again
        self._plotted = None  # a run imported again is read again
        self._show_facts()

    def _show_facts(self) -> None:
        """Each run's facts as the session's last estimate derived them (against the goal's
        quality target and planned steps); a run imported since shows '...' until the next.

        Every recompute reaches here (each inventory keystroke): the table and the back-tests
        are redone only when the facts are new (the session's ``ProjectStore`` keeps one object
        per runs table, goal and plan)."""
        computed = self.session.computed
        if computed is None or computed.derived is self._shown_derived:
            if computed is None:
                self._show_rows()
            return
        self._shown_derived = computed.derived
        self.facts = {run.run_id: run.facts for run in computed.derived}
        self._units_differ = len({facts.throughput_unit for facts in self.facts.values()}) > 1
        self._observations = computed.context.observations
        self.backtests = {}
        highlighted = self._selected_run_id()  # before a new layout clears the table
        self._set_columns()  # new widths when the units now differ (or no longer do)
        self._show_rows(keep=highlighted)

    def _backtest(self, set_name: str) -> Backtest | None:
        """The set's back-test (the model against the trials it came from), worked out when
        the set is first shown (about a millisecond; a team's archive has a thousand sets)."""
        if set_name not in self.backtests and self._observations is not None:
            self.backtests[set_name] = backtest(self._observations, set_name)
        return self.backtests.get(set_name)

    def _set_columns(self) -> bool:
        """Lay the table out for the terminal's width (and, narrow, for whether the runs'
        units differ: ``steady_cell``); True when that changed the columns."""
        wide = self.app.size.width >= WIDE_FROM
        if (wide, self._units_differ) == (self._wide, self._mixed_units):
            return False
        self._wide, self._mixed_units = wide, self._units_differ
        table = self.query_one("#runs", DataTable)
        table.clear(columns=True)
        for key, header, narrow in COLUMNS:
            if wide or narrow is not None:
                table.add_column(header if wide else narrow or "", key=key)
        return True

    def on_resize(self) -> None:
        if not self.is_mounted:
            return
        highlighted = self._selected_run_id()  # before a new layout clears the table
        if self._set_columns() and not self.runs.is_empty():
            self._show_rows(keep=highlighted)
        self.call_after_refresh(self._plot_at_width)

    def _plot_at_width(self) -> None:
        """Draw the highlighted run's plot again when the plot's width changed: its series
        has a column per cell of the width it was read at."""
        plot = self.query_one(ThroughputPlot)
        run_id = self._selected_run_id()
        drawn = self._plotted
        if drawn is not None and drawn[0] == run_id and drawn[2] != plot.plot_columns:
            self._plotted = (drawn[0], self._shown_derived, plot.plot_columns)
            self._load_plot(drawn[0])

    async def action_filter_runs(self) -> None:
        """Show the filter field above the table (it takes a line only while shown)."""
        field = self._filter_field()
        if field is None:
            field = TextField(
                placeholder="Filter: part of a set or log name (enter: to the table)",
                compact=True,
                id="runs-filter",
            )
            await self.query_one("#runs-body", Vertical).mount(field, before="#runs")
        field.focus()

    def action_leave_filter(self) -> None:
        self.query_one("#runs", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc leaves the filter field; elsewhere on the screen it is not bound (nor shown)."""
        if action == "leave_filter":
            field = self._filter_field()
            return field is not None and field.has_focus
        return True

    def _filter_field(self) -> TextField | None:
        found = self.query("#runs-filter")
        return found.first(TextField) if found else None

    def _filter_text(self) -> str:
        field = self._filter_field()
        return "" if field is None else field.value.strip()

    @on(Input.Changed, "#runs-filter")
    def _filter_changed(self) -> None:
        field = self._filter_field()
        self._show_rows(typing=field is not None and field.has_focus)

    @on(Input.Submitted, "#runs-filter")
    def _filter_submitted(self) -> None:
        self._show_all_rows()
        self.query_one("#runs", DataTable).focus()

    @on(DescendantBlur, "#runs-filter")
    async def _filter_left(self) -> None:
        field = self._filter_field()
        if field is not None and not field.value.strip():
            await field.remove()  # an empty filter takes no line
        self._show_all_rows()

    def _show_all_rows(self) -> None:
        """The table filled to ``SHOWN_ROWS`` when typing left it shorter."""
        if self._typing_rows:
            self._show_rows()

    def _matching(self) -> pl.DataFrame:
        """The runs the filter lets through, by set and log (every run without a filter; the
        runs are kept in that order when read)."""
        runs = self.runs
        text = self._filter_text().lower()
        if not text:
            return runs
        return runs.filter(
            pl.any_horizontal(
                pl.col(column).str.to_lowercase().str.contains(text, literal=True)
                for column in ("set_name", "source")
            )
        )

    def _say_shown(self, shown: int, matching: int) -> None:
        """On the status line: how many runs the filter lets through and the table holds.

        Said when it changes, not at every refill: a refill for new facts (after an import,
        an edit) would hide what the action said. When there is nothing to say (no filter,
        every run shown), the count said before is taken off the status line if it still
        shows there: it is stale."""
        text = self._filter_text()
        total = self.runs.height
        first = f"the first {shown:,}" if shown < matching else ""
        more = " (enter: more)" if self._typing_rows and matching > shown else ""
        said = ""
        if text:
            said = f"{matching:,} of {total:,} runs match {text!r}" + (
                f"; {first} are shown{more}" if first else ""
            )
        elif first:
            said = f"{first.capitalize()} of {total:,} runs are shown{more}: / filters them"
        if said == self._said:
            return
        if said:
            self.set_status(said)
        elif self.session.signals.status.value[0] == self._said:
            self.set_status("")
        self._said = said

    def _show_rows(self, typing: bool = False, keep: str | None = None) -> None:
        """Fill the table with the runs the filter lets through, at most ``SHOWN_ROWS`` (at
        most ``TYPING_ROWS`` while the filter is ``typing``, and down to the highlighted run
        if it is further), the highlighted run (or ``keep``) highlighted again if shown."""
        table = self.query_one("#runs", DataTable)
        row_before = table.cursor_row
        run_before = keep or self._selected_run_id()
        table.clear()
        wide = bool(self._wide)
        mixed = not wide and self._mixed_units
        # A short unit after each steady throughput (``steady_cell``) takes its room from
        # the set's name, which the line under the table gives in full.
        name_width = SET_WIDTH if wide else NARROW_SET_WIDTH - (3 if mixed else 0)
        log_width = LOG_WIDTH if wide else NARROW_LOG_WIDTH
        matching = self._matching()
        limit = min(TYPING_ROWS, SHOWN_ROWS) if typing else SHOWN_ROWS
        at = None if run_before is None else matching["run_id"].index_of(run_before)
        if at is not None and at < SHOWN_ROWS:
            limit = max(limit, at + 1)  # the run highlighted stays so
        self._typing_rows = typing and matching.height > limit
        rows = matching.head(limit)
        sets = distinct_labels(rows["set_name"].to_list(), name_width)
        shown = {key for key, _, narrow in COLUMNS if wide or narrow is not None}
        self._say_shown(rows.height, matching.height)
        for row in rows.iter_rows(named=True):
            facts = self.facts.get(row["run_id"])
            cells: dict[str, object] = {
                "set": cell(sets[row["set_name"]]),
                "log": cell(fit_middle(PurePath(row["source"]).name, log_width)),
                "size": size_cell(self.sizes.get(row["run_id"])),
                "launched": launched(row["metadata_json"]) if "launched" in shown else "",
            }
            if facts is None:
                cells |= dict.fromkeys(
                    ("status", "run", "result", "steady", "unit", "restarts", "redo"), "..."
                )
            else:
                cells |= {
                    "status": facts.outcome,
                    "run": minutes(facts.run_s),
                    "result": minutes(facts.launch_to_result_s),
                    "steady": steady_cell(
                        number(facts.steady_throughput), facts.throughput_unit, mixed
                    ),
                    "unit": (facts.throughput_unit or UNKNOWN).removesuffix("/s"),
                    "restarts": str(facts.restarts),
                    "redo": UNKNOWN if facts.redone_steps is None else str(facts.redone_steps),
                }
            table.add_row(
                *(as_text(cells[key]) for key, *_ in COLUMNS if key in shown), key=row["run_id"]
            )
        if run_before is not None and run_before in table.rows:
            # The run highlighted before stays highlighted (a filter that still matches it,
            # new facts): its set lines and plot stay as they are.
            table.move_cursor(row=table.get_row_index(run_before))
        elif row_before >= 0 and table.row_count:
            table.move_cursor(row=min(row_before, table.row_count - 1))

    @on(DataTable.RowHighlighted, "#runs")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        run_id = event.row_key.value if event.row_key else None
        if run_id is None or run_id != self._selected_run_id():
            # Stale: the cursor moved on before this was handled (a refill of the table
            # highlights its first row, then the run that was highlighted before).
            return
        row = self.runs.filter(pl.col("run_id") == run_id)
        if row.is_empty():
            return
        self._show_set(str(row["set_name"][0]))
        plotted = (run_id, self._shown_derived, self.query_one(ThroughputPlot).plot_columns)
        if plotted != self._plotted:
            # The table refilled with the same run highlighted, under the same facts and at
            # the same width: its plot is the one shown (a worker's read and a redraw at every
            # filter keystroke).
            self._plotted = plotted
            self._load_plot(run_id)

    def _show_set(self, set_name: str) -> None:
        """Three lines: the set and its system, the throughput spread, the back-test."""
        members = self.runs.filter(pl.col("set_name") == set_name)["run_id"].to_list()
        known = [self.facts[r] for r in members if r in self.facts]
        info = self.sets.get(set_name)
        size = set_size([self.sizes.get(r) for r in members])
        head = f"Set {set_name}: {plural(len(members), 'run')}"
        spread = ""
        if len(known) == len(members):
            summary = summarize_set(known)
            head += f", {summary.counted} counted"
            thr = summary.steady_throughput
            if thr is not None:
                spread = (
                    f"steady {thr.min:,.4g}-{thr.max:,.4g} {summary.throughput_unit} "
                    f"(median {thr.median:,.4g}, trimmed {thr.trimmed_mean:,.4g})"
                )
        head += f"; {size.short_text()}"
        if size.size is not None and size.size.conflicts:
            head += " (the logs disagree: z states it)"
        elif size.size is not None and size.size.overrides:
            head += f" (logs said {size.size.overrides.split(' (')[0]})"
        if info is not None and info.mlperf_score is not None:
            spread += ("; " if spread else "") + "MLPerf " + info.mlperf_score.text()
        check = self._backtest(set_name)
        tested = (
            "back-test: not possible (no counted run with a throughput and its work)"
            if check is None
            else ("FLAGGED " if check.flagged else "") + "back-test: " + check.text()
        )
        text = "\n".join((head, spread, tested))
        if text != self._set_summary_text:
            # An update lays the whole screen out again (54 ms a key on the sample, quiet):
            # moving between runs of one set changes nothing here, so nothing is redone.
            self._set_summary_text = text
            self.query_one("#set-summary", Static).update(shown(text))

    @work(thread=True, exclusive=True, group="plot", exit_on_error=False)
    def _load_plot(self, run_id: str) -> None:
        plot = self.query_one(ThroughputPlot)
        try:
            # The table the screen read: reading it again takes the GIL from the UI thread
            # for every highlighted run (ten thousand rows checked, in a team's archive).
            run = load_run(self.session.root, run_id, self.runs)
        except UserError as error:
            self.app.call_from_thread(plot.show, None, message=str(error))
            return
        inventory = self.session.inventory
        facts = self.facts.get(run_id) or run_facts(
            run, inventory.goal.quality_target(), inventory.planned_steps()
        )
        series = throughput_series(run, plot.plot_columns)
        shown = PlotFacts(
            warmup_s=facts.phases.warmup_s,
            warmup_end_s=facts.warmup_end_s,
            steady=facts.steady_throughput,
            unit=facts.throughput_unit,
            stalls_s=tuple((stall.at_s - stall.lost_s, stall.at_s) for stall in facts.stalls),
        )
        if get_current_worker().is_cancelled:
            return  # another run was selected meanwhile; its own worker draws the plot
        self.app.call_from_thread(plot.show, series, shown)

    @edits
    def action_import_runs(self) -> None:
        inventory = self.session.inventory
        self.app.push_screen(
            ImportRunsScreen(
                self.session,
                inventory.goal.quality_target(),
                inventory.planned_steps(),
                frozenset(t.run_set for t in inventory.targets if t.run_set),
            ),
            self._imported,
        )

    def _imported(self, imported: Imported | None) -> None:
        """Say what was imported, and highlight its first run in the table (its set line and
        plot follow), so the set just imported is the one shown, not the table's first. A
        filter that would hide a run imported is cleared (and the status line says so): the
        outcome of an import is always in view."""
        if imported is None:
            return
        summary = imported.summary
        filtered = self._filter_text()
        matching = set(self._matching()["run_id"].to_list())
        hidden = [run_id for run_id in imported.run_ids if run_id not in matching]
        field = self._filter_field()
        if filtered and hidden and field is not None:
            field.value = ""
            field.remove()  # an empty filter takes no line
            self._show_rows(keep=hidden[0])
            shown_runs = "it" if len(imported.run_ids) == 1 else "them"
            summary += f"; the filter {filtered!r} was cleared to show {shown_runs}"
        self.set_status(summary)
        table = self.query_one("#runs", DataTable)
        rows = [table.get_row_index(run_id) for run_id in imported.run_ids if run_id in table.rows]
        if rows:
            table.move_cursor(row=min(rows))

    def _selected_run_id(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if self.runs.is_empty() or table.cursor_row < 0 or not table.row_count:
            return None
        return table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value

    @on(DataTable.RowSelected, "#runs")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_run()

    def action_open_run(self) -> None:
        run_id = self._selected_run_id()
        if run_id is None:
            return
        facts = self.facts.get(run_id)
        if facts is None:
            self.set_status("Still deriving the run facts; try again in a moment.")
            return
        set_name = str(self.runs.filter(pl.col("run_id") == run_id)["set_name"][0])
        target = next((t for t in self.session.inventory.targets if t.run_set == set_name), None)
        hold = key_hold_of(self.app)
        if hold is not None:
            hold.wait_for(OPENING_DETAIL)  # the keys after enter wait for the detail
        self._open_detail(run_id, facts, target)

    @work(thread=True, exclusive=True, group="detail", exit_on_error=False)
    def _open_detail(self, run_id: str, facts: RunFacts, target: TrainingTarget | None) -> None:
        """Utilization, compile telemetry and the verdict read stored captures: a worker.
        Whichever way it ends, the keys held since enter go on (to the detail, once shown)."""
        try:
            self._read_detail(run_id, facts, target)
        finally:
            hold = key_hold_of(self.app)
            if hold is not None and self.app.is_running:
                self.app.call_from_thread(hold.done, self.app, OPENING_DETAIL)

    def _read_detail(self, run_id: str, facts: RunFacts, target: TrainingTarget | None) -> None:
        root = self.session.root
        try:
            run = load_run(root, run_id, self.runs)
            telemetry = run_detail(
                root,
                run_id,
                facts,
                parameters_billion=self.session.inventory.model.parameters_billion,
                trainable_parameters_billion=(
                    self.session.inventory.model.trainable_parameters_billion
                ),
                instance_type=target.instance_type if target else None,
                instance_count=target.instance_count if target else 1,
                size=self.sizes.get(run_id),
            )
        except UserError as error:
            self.app.call_from_thread(self.notify, str(error), severity="error")
            return
        if get_current_worker().is_cancelled:
            return
        screen = RunDetailScreen(
            self.session,
            run_id,
            facts,
            run.metadata,
            telemetry,
            self.sizes.get(run_id),
        )
        self.app.call_from_thread(self.app.push_screen, screen)

    def _editable_run(self) -> tuple[str, str] | None:
        """The highlighted run's id and set, when this session may change them."""
        if not self.writable():
            return None
        run_id = self._selected_run_id()
        if run_id is None:
            return None
        return run_id, str(self.runs.filter(pl.col("run_id") == run_id)["set_name"][0])

    def action_move_set(self) -> None:
        """Rename the highlighted run's set (targets measured by it follow), or move the run."""
        picked = self._editable_run()
        if picked is None:
            return
        run_id, old = picked

        def moved(entry: MoveEntry | None) -> None:
            new = "" if entry is None else entry.set_name.strip()
            if entry is None or not new or new == old:
                return
            members = self.runs.filter(pl.col("set_name") == old)["run_id"].to_list()
            run_ids = members if entry.whole_set else [run_id]
            whole = len(run_ids) == len(members)
            inventory = self.session.inventory
            follows = whole and inventory.with_run_set_renamed(old, new) != inventory
            try:
                problem = self.session.move_runs(run_ids, old, new, whole_set=whole)
            except (UserError, OSError) as error:
                self.set_status(f"Not moved: {error}", "error")
                return
            followed = ""
            if follows and problem is not None:
                self.set_status(problem, "error")
                followed = f"; the targets still name {old!r} (see the status line)"
            elif follows:
                followed = "; the targets measured by it follow"
            what = f"Set {old!r} renamed" if whole else "1 run moved"
            # The status line shows the save.
            self.notify(f"{what} to {new!r}{followed}; ctrl+z undoes it")

        self.app.push_screen(
            ItemFormScreen(MoveEntry, MoveEntry(set_name=old), title=f"Run set of {run_id}"),
            moved,
        )

    def action_state_size(self) -> None:
        """State the selected run's set size (an assumption), over whatever its logs print."""
        picked = self._editable_run()
        if picked is None:
            return
        _, set_name = picked
        current = self.session.store.stated_sizes().get(set_name)
        entry = SetSizeEntry(
            nodes=current.nodes if current else None,
            accelerators_per_node=current.accelerators_per_node if current else None,
            accelerator=current.accelerator if current else None,
            source=current.source if current else "",
        )

        def stated(result: SetSizeEntry | None) -> None:
            if result is None or result.nodes is None or result.accelerators_per_node is None:
                return
            size = SystemSize(
                result.nodes,
                result.accelerators_per_node,
                result.accelerator,
                result.source,
                stated_by=current_user(),
            )
            try:
                self.session.state_size(set_name, size)
            except (UserError, OSError) as error:
                self.set_status(f"Size not stated: {error}", "error")
                return
            self.set_status(
                f"Set {set_name}: {size.text()}, stated by {size.stated_by}; ctrl+z undoes it"
            )

        title = f"System size of run set {fit_middle(set_name, 50)}"
        self.app.push_screen(ItemFormScreen(SetSizeEntry, entry, title=title), stated)

    def action_remove_run(self) -> None:
        picked = self._editable_run()
        if picked is None:
            return
        run_id = picked[0]
        source = self.runs.filter(pl.col("run_id") == run_id)["source"][0]

        def confirmed(yes: bool | None) -> None:
            if yes and run_id is not None:
                try:
                    self.session.remove_run(run_id)
                except (UserError, OSError) as error:
                    self.set_status(f"Run not removed: {error}", "error")
                    return
                self.set_status(f"Removed run {run_id} ({source}); re-import to restore")

        self.app.push_screen(
            ConfirmScreen(f"Remove the run imported from\n{source}?\n(Its log file is kept.)"),
            confirmed,
        )
