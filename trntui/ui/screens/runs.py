"""The Runs screen: imported trial runs, their set's spread, and one run's throughput plot.

Facts come from the runs table written at import time (``store.runs``); selecting a run reads
its stored timeline in a worker to draw the plot, so the screen never re-parses a log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from trntui.core.errors import UserError
from trntui.core.run_facts import run_facts, spread
from trntui.core.throughput_series import throughput_series
from trntui.store.runs import RunSetInfo, load_run, load_runs, remove_run, run_sets
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.widgets.status_line import StatusLine
from trntui.ui.widgets.throughput_plot import ThroughputPlot

if TYPE_CHECKING:
    from trntui.ui.app import TrnTuiApp

UNKNOWN = "?"


def minutes(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value / 60:.2f}"


def number(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:,.4g}"


class RunsScreen(Screen[None]):
    DEFAULT_CSS = """
    RunsScreen #runs { height: 1fr; min-height: 5; }
    RunsScreen #set-summary { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    RunsScreen #empty { padding: 1 2; }
    """

    BINDINGS = [
        Binding("i", "import_runs", "Import", id="runs.import"),
        Binding("x", "remove_run", "Remove", id="runs.remove"),
    ]

    def __init__(self) -> None:
        super().__init__(id="runs-screen")
        self.runs = pl.DataFrame()
        self.sets: dict[str, RunSetInfo] = {}

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
        yield StatusLine()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        for label, key in [
            ("Set", "set"),
            ("Status", "status"),
            ("Fmt", "format"),
            ("Run min", "run"),
            ("Result min", "result"),
            ("Steady", "steady"),
            ("Unit", "unit"),
            ("Rst", "restarts"),
        ]:
            table.add_column(label, key=key)
        self.reload_runs()

    def reload_runs(self) -> None:
        root = self._app.project.root
        try:
            self.runs = load_runs(root)
            self.sets = {info.name: info for info in run_sets(root)}
        except UserError as error:
            self._app.status = (str(error), "error")
            self.runs = pl.DataFrame()
            self.sets = {}
        table = self.query_one("#runs", DataTable)
        table.clear()
        empty = self.runs.is_empty()
        self.query_one("#empty").display = empty
        table.display = not empty
        if empty:
            self.query_one("#set-summary", Static).update("")
            self.query_one(ThroughputPlot).show(None, warmup_end_s=None, stalls_s=(), message=" ")
            return
        for row in self.runs.sort("set_name", "source").iter_rows(named=True):
            table.add_row(
                row["set_name"][-18:],
                row["status"],
                row["format"][:4],
                minutes(row["run_s"]),
                minutes(row["launch_to_result_s"]),
                number(row["steady_throughput"]),
                (row["throughput_unit"] or UNKNOWN).removesuffix("/s"),
                str(row["restarts"]),
                key=row["run_id"],
            )

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
        members = self.runs.filter(pl.col("set_name") == set_name)
        counted = members.filter(pl.col("status") == "succeeded")
        info = self.sets.get(set_name)
        thr = spread(counted["steady_throughput"].to_list())
        unit = counted["throughput_unit"].drop_nulls().unique().to_list()
        parts = [f"Set {set_name}: {members.height} runs, {counted.height} succeeded"]
        if thr is not None and len(unit) == 1:
            parts.append(
                f"steady {unit[0]} min {thr.min:,.4g} / median {thr.median:,.4g} / "
                f"max {thr.max:,.4g}, trimmed mean {thr.trimmed_mean:,.4g}"
            )
        if info is not None and info.is_mlperf:
            score = info.mlperf_score_minutes
            parts.append(
                "MLPerf score "
                + (f"{score:.3f} min" if score is not None else "invalid (too many failed runs)")
            )
        self.query_one("#set-summary", Static).update("; ".join(parts))

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
        facts = run_facts(run, self._app.inventory.goal.quality_target())
        series = throughput_series(run, plot.plot_columns)
        stalls = tuple((stall.at_s - stall.lost_s, stall.at_s) for stall in facts.stalls)
        self.app.call_from_thread(
            plot.show, series, warmup_end_s=facts.warmup_end_s, stalls_s=stalls
        )

    def action_import_runs(self) -> None:
        if self._app.project.read_only:
            self._app.notify_read_only()
            return
        self.app.push_screen(
            ImportRunsScreen(self._app.project.root, self._app.inventory.goal.quality_target()),
            self._imported,
        )

    def _imported(self, summary: str | None) -> None:
        self.reload_runs()
        if summary:
            self._app.status = (summary, "")

    def action_remove_run(self) -> None:
        if self._app.project.read_only:
            self._app.notify_read_only()
            return
        table = self.query_one("#runs", DataTable)
        if self.runs.is_empty() or table.cursor_row < 0:
            return
        run_id = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        source = self.runs.filter(pl.col("run_id") == run_id)["source"][0]

        def confirmed(yes: bool | None) -> None:
            if yes and run_id is not None:
                remove_run(self._app.project.root, run_id)
                self.reload_runs()
                self._app.status = (f"Removed run {run_id} ({source}); re-import to restore", "")

        self.app.push_screen(
            ConfirmScreen(f"Remove the run imported from\n{source}?\n(Its log file is kept.)"),
            confirmed,
        )
