"""The Runs screen: imported trial runs, their set's spread, and one run's throughput plot.

Facts come from the runs table written at import time (``store.runs``); selecting a run reads
its stored timeline in a worker to draw the plot, so the screen never re-parses a log.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, ClassVar

import polars as pl
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import get_current_worker

from trntui.core.backtest import Backtest, backtest
from trntui.core.errors import UserError
from trntui.core.fields import spec_field
from trntui.core.inventory import TrainingTarget
from trntui.core.run_facts import QualityTarget, RunFacts, run_facts, summarize_set
from trntui.core.system_size import set_size
from trntui.core.throughput_series import throughput_series
from trntui.core.timeline import RunMetadata, SystemSize
from trntui.store.facts import derived_runs
from trntui.store.runs import (
    RunSetInfo,
    assign_set,
    load_run,
    load_runs,
    remove_run,
    run_sets,
    stale_runs,
)
from trntui.store.scenarios import current_user, load_observations
from trntui.store.set_sizes import load_stated_sizes, rename_set, run_sizes, state_size
from trntui.store.telemetry import run_detail
from trntui.ui.format import distinct_labels, fit_middle
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.inventory import ItemFormScreen
from trntui.ui.screens.run_detail import RunDetailScreen
from trntui.ui.text import cell, shown
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.status_line import StatusLine
from trntui.ui.widgets.throughput_plot import ThroughputPlot

if TYPE_CHECKING:
    from trntui.ui.app import TrnTuiApp

UNKNOWN = "?"


@dataclass(frozen=True)
class SetSizeEntry:
    """The system a run set was measured on, stated by a person (its logs print none)."""

    TITLE: ClassVar[str] = "System size"
    nodes: int | None = spec_field("int", "Nodes", required=True, minimum=1, maximum=100_000)
    accelerators_per_node: int | None = spec_field(
        "int", "Per node", unit="accelerators", required=True, minimum=1, maximum=100_000
    )
    accelerator: str | None = spec_field("text", "Accelerator", placeholder="Trainium3")
    source: str = spec_field(
        "text", "Based on", required=True, default="", placeholder="job script, ticket, link"
    )


@dataclass(frozen=True)
class MoveEntry:
    """Where the highlighted run (or its whole set) goes: a run set by name."""

    TITLE: ClassVar[str] = "Run set"
    set_name: str = spec_field(
        "text", "Move to run set", required=True, default="", help="an existing or a new set"
    )
    whole_set: bool = spec_field(
        "bool", "Whole set", required=True, default=True, help="no: only the highlighted run"
    )


def _size_cell(size: SystemSize | None) -> str:
    if size is None:
        return UNKNOWN
    if size.nodes is None or size.accelerators_per_node is None:
        return f"{size.accelerators or UNKNOWN}"
    return f"{size.nodes}x{size.accelerators_per_node}" + ("*" if size.is_assumption else "")


def _launched(metadata_json: str) -> str:
    """When the run was launched, as its log tells (to the minute, in the log's zone)."""
    when = RunMetadata.from_json(metadata_json).launch_time
    return UNKNOWN if when is None else when.strftime("%Y-%m-%d %H:%M")


def minutes(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value / 60:.2f}"


def number(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:,.4g}"


SET_WIDTH = 16
"""Cells for a run set's name in the table (names are cut where they differ, see
``distinct_labels``; the line under the table names the highlighted run's set in full)."""
LOG_WIDTH = 14


class RunsScreen(Screen[None]):
    DEFAULT_CSS = """
    RunsScreen #runs { height: 1fr; min-height: 5; }
    RunsScreen #set-summary { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    RunsScreen #empty { padding: 1 2; }
    """

    BINDINGS = [
        Binding(
            "i",
            "import_runs",
            "Import",
            tooltip="Import run logs (files or folders), previewed before storing",
            id="runs.import",
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

    def __init__(self) -> None:
        super().__init__(id="runs-screen")
        self.runs = pl.DataFrame()
        self.sets: dict[str, RunSetInfo] = {}
        self.facts: dict[str, RunFacts] = {}
        self.sizes: dict[str, SystemSize | None] = {}
        self.backtests: dict[str, Backtest | None] = {}
        self._goal: tuple[QualityTarget | None, int | None] | None = None

    @property
    def _app(self) -> TrnTuiApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static(
                "No runs imported yet. Press [b]i[/b] to import training logs "
                "(MLPerf, Megatron-LM, neuronx-distributed, Hugging Face trainer_state.json).",
                id="empty",
            )
            table: DataTable[str] = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            yield table
            yield Static("", id="set-summary")
            yield ThroughputPlot(id="plot")
        yield EstimateBar()
        yield StatusLine()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        for label in (
            "Set",
            "Log",
            "Size",
            "Status",
            "Run min",
            "Result min",
            "Steady",
            "Unit",
            "Rst",
            "Redo",
            "Launched",
        ):
            table.add_column(label)
        # An undo (ctrl+z) here can put the goal back while this screen shows: every new
        # estimate follows an inventory change, so the facts are checked against it then.
        self.watch(self.app, "analysis", self._goal_changed, init=False)
        self.reload_runs()

    def on_screen_resume(self) -> None:
        """The goal may have changed on the Inventory screen: facts depend on it."""
        self._goal_changed()

    def _goal_changed(self) -> None:
        goal = (self._app.inventory.goal.quality_target(), self._app.inventory.planned_steps())
        if goal != self._goal:
            self.reload_runs()

    def reload_runs(self) -> None:
        """Read the runs table, then derive each run's facts against the current inventory."""
        root = self._app.project.root
        try:
            self.runs = load_runs(root)
            self.sets = {info.name: info for info in run_sets(root)}
            self.sizes = run_sizes(self.runs, load_stated_sizes(root))
        except UserError as error:
            self._app.status = (str(error), "error")
            self.runs = pl.DataFrame()
            self.sets = {}
        empty = self.runs.is_empty()
        self.query_one("#empty").display = empty
        self.query_one("#runs", DataTable).display = not empty
        if empty:
            self.query_one("#runs", DataTable).clear()
            self.query_one("#set-summary", Static).update("")
            self.query_one(ThroughputPlot).show(None, warmup_end_s=None, stalls_s=(), message=" ")
            return
        self._show_rows()
        stale = stale_runs(self.runs)
        if stale:
            self._app.status = (
                f"{stale} run(s) were read by an older trntui: press i and import their logs "
                "again to read their system size and job clock",
                "",
            )
        inventory = self._app.inventory
        self._goal = (inventory.goal.quality_target(), inventory.planned_steps())
        self._derive(*self._goal)

    @work(thread=True, exclusive=True, group="facts", exit_on_error=False)
    def _derive(self, target: QualityTarget | None, planned: int | None) -> None:
        """Facts depend on the inventory's quality target and planned steps, so they are
        derived here from the stored timelines rather than frozen at import time."""
        root = self._app.project.root
        try:
            derived = derived_runs(root, target, planned)
            observations = load_observations(root, self._app.inventory)
        except UserError as error:
            self.app.call_from_thread(self._app.notify, str(error), severity="error")
            return
        if derived.note:
            self.app.call_from_thread(self._app.notify, derived.note)
        facts = {run.run_id: run.facts for run in derived}
        checks = {name: backtest(observations, name) for name in self.sets}
        self.app.call_from_thread(self._facts_ready, facts, checks)

    def _facts_ready(self, facts: dict[str, RunFacts], checks: dict[str, Backtest | None]) -> None:
        self.facts = facts
        self.backtests = checks
        self._show_rows()

    def _show_rows(self) -> None:
        table = self.query_one("#runs", DataTable)
        row_before = table.cursor_row
        table.clear()
        sets = distinct_labels(self.runs["set_name"].to_list(), SET_WIDTH)
        for row in self.runs.sort("set_name", "source").iter_rows(named=True):
            facts = self.facts.get(row["run_id"])
            if facts is None:
                cells = ("...", "...", "...", "...", "...", "...", "...")
            else:
                cells = (
                    facts.outcome,
                    minutes(facts.run_s),
                    minutes(facts.launch_to_result_s),
                    number(facts.steady_throughput),
                    (facts.throughput_unit or UNKNOWN).removesuffix("/s"),
                    str(facts.restarts),
                    UNKNOWN if facts.redone_steps is None else str(facts.redone_steps),
                )
            size = self.sizes.get(row["run_id"])
            log = cell(fit_middle(PurePath(row["source"]).name, LOG_WIDTH))
            name = cell(sets[row["set_name"]])
            launched = _launched(row["metadata_json"])
            table.add_row(name, log, _size_cell(size), *cells, launched, key=row["run_id"])
        if row_before >= 0 and table.row_count:
            table.move_cursor(row=min(row_before, table.row_count - 1))

    @on(DataTable.RowHighlighted, "#runs")
    def _run_highlighted(self, event: DataTable.RowHighlighted) -> None:
        run_id = event.row_key.value if event.row_key else None
        if run_id is None:
            return
        row = self.runs.filter(pl.col("run_id") == run_id)
        if row.is_empty():
            return
        self._show_set(str(row["set_name"][0]))
        self._load_plot(run_id)

    def _show_set(self, set_name: str) -> None:
        """Three lines: the set and its system, the throughput spread, the back-test."""
        members = self.runs.filter(pl.col("set_name") == set_name)["run_id"].to_list()
        known = [self.facts[r] for r in members if r in self.facts]
        info = self.sets.get(set_name)
        size = set_size([self.sizes.get(r) for r in members])
        head = f"Set {set_name}: {len(members)} runs"
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
        if info is not None and info.is_mlperf:
            score = info.mlperf_score_minutes
            spread += (
                ("; " if spread else "")
                + "MLPerf "
                + (f"{score:.3f} min" if score is not None else "invalid (too many failed runs)")
            )
        check = self.backtests.get(set_name)
        tested = (
            "back-test: not possible (no counted run with a throughput and its work)"
            if check is None
            else ("FLAGGED " if check.flagged else "") + "back-test: " + check.text()
        )
        self.query_one("#set-summary", Static).update(shown("\n".join((head, spread, tested))))

    @work(thread=True, exclusive=True, group="plot", exit_on_error=False)
    def _load_plot(self, run_id: str) -> None:
        plot = self.query_one(ThroughputPlot)
        try:
            run = load_run(self._app.project.root, run_id)
        except UserError as error:
            self.app.call_from_thread(
                plot.show, None, warmup_end_s=None, stalls_s=(), message=str(error)
            )
            return
        inventory = self._app.inventory
        facts = self.facts.get(run_id) or run_facts(
            run, inventory.goal.quality_target(), inventory.planned_steps()
        )
        series = throughput_series(run, plot.plot_columns)
        stalls = tuple((stall.at_s - stall.lost_s, stall.at_s) for stall in facts.stalls)
        if get_current_worker().is_cancelled:
            return  # another run was selected meanwhile; its own worker draws the plot
        self.app.call_from_thread(
            plot.show, series, warmup_end_s=facts.warmup_end_s, stalls_s=stalls
        )

    def action_import_runs(self) -> None:
        if self._app.project.read_only:
            self._app.notify_read_only()
            return
        inventory = self._app.inventory
        self.app.push_screen(
            ImportRunsScreen(
                self._app.project.root,
                inventory.goal.quality_target(),
                inventory.planned_steps(),
            ),
            self._imported,
        )

    def _imported(self, summary: str | None) -> None:
        self.reload_runs()
        self._app.estimate_inputs_changed()
        if summary:
            self._app.status = (summary, "")

    def _selected_run_id(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if self.runs.is_empty() or table.cursor_row < 0 or not table.row_count:
            return None
        return table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value

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
            self._app.status = ("Still deriving the run facts; try again in a moment.", "")
            return
        set_name = str(self.runs.filter(pl.col("run_id") == run_id)["set_name"][0])
        target = next((t for t in self._app.inventory.targets if t.run_set == set_name), None)
        self._open_detail(run_id, facts, target)

    @work(thread=True, exclusive=True, group="detail", exit_on_error=False)
    def _open_detail(self, run_id: str, facts: RunFacts, target: TrainingTarget | None) -> None:
        """Utilization, compile telemetry and the verdict read stored captures: a worker."""
        root = self._app.project.root
        try:
            run = load_run(root, run_id)
            telemetry = run_detail(
                root,
                run_id,
                facts,
                parameters_billion=self._app.inventory.model.parameters_billion,
                instance_type=target.instance_type if target else None,
                instance_count=target.instance_count if target else 1,
            )
        except UserError as error:
            self.app.call_from_thread(self._app.notify, str(error), severity="error")
            return
        if get_current_worker().is_cancelled:
            return
        screen = RunDetailScreen(
            run_id,
            facts,
            run.metadata,
            telemetry,
            target.instance_type if target else None,
            self.sizes.get(run_id),
        )
        self.app.call_from_thread(self.app.push_screen, screen, self._detail_closed)

    def _detail_closed(self, _: None) -> None:
        self.reload_runs()
        self._app.estimate_inputs_changed()

    def _editable_run(self) -> tuple[str, str] | None:
        """The highlighted run's id and set, when this session may change them."""
        if self._app.project.read_only:
            self._app.notify_read_only()
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
            try:
                assign_set(self._app.project.root, run_ids, new)
                if whole:  # the stated size and family are the set's: they follow its name
                    rename_set(self._app.project.root, old, new)
            except (UserError, OSError) as error:
                self._app.status = (f"Not moved: {error}", "error")
                return
            followed = ""
            inventory = self._app.inventory
            renamed = inventory.with_run_set_renamed(old, new)
            if whole and renamed != inventory:
                if self._app.apply_inventory(renamed, label="rename run set"):
                    followed = "; the targets measured by it follow"
                else:
                    followed = f"; the targets still name {old!r} (see the status line)"
            what = f"set {old!r} renamed" if whole else "1 run moved"
            self._app.notify(f"{what} to {new!r}{followed}")  # the status line shows the save
            self.reload_runs()
            self._app.estimate_inputs_changed()

        self.app.push_screen(
            ItemFormScreen(MoveEntry, MoveEntry(set_name=old), title=f"Run set of {run_id}"),
            moved,
        )

    def action_state_size(self) -> None:
        """State the selected run's set size when its logs print none (an assumption)."""
        picked = self._editable_run()
        if picked is None:
            return
        _, set_name = picked
        current = load_stated_sizes(self._app.project.root).get(set_name)
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
                state_size(self._app.project.root, set_name, size)
            except (UserError, OSError) as error:
                self._app.status = (f"Size not stated: {error}", "error")
                return
            self.reload_runs()
            self._app.estimate_inputs_changed()
            self._app.status = (f"Set {set_name}: {size.text()}, stated by {size.stated_by}", "")

        title = f"System size of run set {set_name[-30:]}"
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
                    remove_run(self._app.project.root, run_id)
                except (UserError, OSError) as error:
                    self._app.status = (f"Run not removed: {error}", "error")
                    return
                self.reload_runs()
                self._app.estimate_inputs_changed()
                self._app.status = (f"Removed run {run_id} ({source}); re-import to restore", "")

        self.app.push_screen(
            ConfirmScreen(f"Remove the run imported from\n{source}?\n(Its log file is kept.)"),
            confirmed,
        )
