"""The Runs screen driven by keys: preview, confirm, cancel, errors, and the plot."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import DataTable, Input, Static

from tests import HANG_GUARD_S, MLPERF_DATA, SAMPLE, SIZE, loggen
from tests.ui_support import settle, type_runs_filter, wait_until
from trntui.importers import Cancelled, import_file
from trntui.store.project import Project
from trntui.store.quality import load_recorded_quality
from trntui.store.run_import import import_paths
from trntui.store.runs import default_set_name, load_runs
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens import import_runs
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.run_detail import RunDetailScreen
from trntui.ui.screens.runs import RunsScreen
from trntui.ui.widgets.throughput_plot import PlotFacts, ThroughputPlot

if TYPE_CHECKING:
    from rich.text import Text

    from trntui.core.throughput_series import ThroughputSeries

LORA = MLPERF_DATA / "v4.0" / "smc" / "results" / "8xSMC-H100-SXM-80GB" / "llama2_70b_lora"


async def focus_runs_table(pilot, app: TrnTuiApp) -> DataTable:
    """Go to Runs (2) and focus its table, as a user moving in it does."""
    await pilot.press("2")
    await settle(pilot)
    table = app.screen.query_one("#runs", DataTable)
    table.focus()
    return table


async def open_import(pilot, app: TrnTuiApp, paths: str) -> ImportRunsScreen:
    await pilot.press("2")
    await settle(pilot)
    assert isinstance(app.screen, RunsScreen)
    await pilot.press("i")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ImportRunsScreen)
    screen.query_one("#paths", Input).value = paths
    await pilot.press("enter")
    return screen


def message_of(screen: ImportRunsScreen) -> str:
    return str(screen.query_one("#message").content)


async def test_preview_then_confirm_stores_the_runs(new_session: Project, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LORA, logs)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(logs))
        await settle(pilot)
        preview = screen.query_one("#preview", DataTable)
        expected = len(list(logs.glob("result_*.txt")))
        assert expected > 1
        assert preview.row_count == expected
        assert load_runs(new_session.root).is_empty(), "the preview must not store anything"
        message = str(screen.query_one("#message").content)
        # The new project's targets name no run set: the user is told before importing.
        assert f"into set '{default_set_name(next(logs.glob('result_*.txt')))}'" in message
        assert "no target is measured by it" in message
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        stored = load_runs(new_session.root)
        assert stored.height == expected
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == expected
        plot = app.screen.query_one(ThroughputPlot)
        assert plot._series is not None


async def test_preview_judges_runs_by_the_goal_like_the_runs_table(
    new_session: Project, tmp_path: Path
) -> None:
    """neuronx-distributed logs do not say their planned steps: the goal does (600 here)."""
    project = new_session
    goal = dataclasses.replace(project.inventory.goal, work_amount=600 * 32.0, work_unit="samples")
    distribution = dataclasses.replace(project.inventory.distribution, global_batch_size=32)
    project.save_inventory(
        dataclasses.replace(project.inventory, goal=goal, distribution=distribution)
    )
    log = tmp_path / "trn3.log"
    loggen.write_nxd(log, loggen.NxdSpec(states_plan=False))
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(log))
        await settle(pilot)
        preview = screen.query_one("#preview", DataTable)
        assert preview.row_count == 1
        status, run_min = preview.get_row_at(0)[2:4]
        assert status == "succeeded"
        assert run_min != "unknown", "with the goal's planned steps the run time is known"
        await pilot.press("ctrl+s")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        row = table.coordinate_to_cell_key((0, 0)).row_key
        assert [str(table.get_cell(row, key)) for key in ("status", "run")] == [status, run_min]


async def test_bad_file_is_reported_with_its_name_and_nothing_is_stored(
    new_session: Project, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.log"
    bad.write_bytes(b"\x00\x01 this is not a training log\n" * 5)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(bad))
        await settle(pilot)
        assert "broken.log" in message_of(screen)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ImportRunsScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
    assert load_runs(new_session.root).is_empty()


async def test_missing_path_is_refused_before_any_work(
    new_session: Project, tmp_path: Path
) -> None:
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(tmp_path / "nope.log"))
        await settle(pilot)
        assert "Not found" in message_of(screen)
        assert not screen.busy, "no worker was started"


async def test_escape_cancels_without_storing(
    new_session: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Escape while the import worker reads the first log: the worker is told to stop, the
    dialog says nothing was imported, and nothing is. The first read waits for the test, so
    escape always comes while the worker runs, however fast or slow the machine is."""
    logs = tmp_path / "logs"
    shutil.copytree(LORA, logs)
    reading, go_on = threading.Event(), threading.Event()
    outcomes: list[str] = []

    def held_import(path, **options):
        reading.set()
        assert go_on.wait(HANG_GUARD_S), "the test never let the import go on"
        try:
            run = import_file(path, **options)
        except Cancelled:
            outcomes.append("cancelled")
            raise
        outcomes.append("read")
        return run

    monkeypatch.setattr(import_runs, "import_file", held_import)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(logs))
        try:
            assert await asyncio.to_thread(reading.wait, HANG_GUARD_S), "no import started"
            assert screen.busy
            await pilot.press("escape")
            assert app.screen is screen, "the first escape cancels, it does not close"
            await wait_until(
                pilot, lambda: "Cancelled" in message_of(screen), "the cancel reported"
            )
        finally:
            go_on.set()  # a failed check must not leave the worker's thread held
        await wait_until(pilot, lambda: outcomes, "the held read went on")
        assert outcomes == ["cancelled"], "the read in progress stopped on the cancel"
        assert screen.query_one("#preview", DataTable).row_count == 0
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one("#runs", DataTable).row_count == 0
    assert load_runs(new_session.root).is_empty()


async def test_read_only_session_cannot_import(new_session: Project) -> None:
    """The keys that open the import dialog in the writable session do nothing in a second,
    read-only session of the same project but say why."""
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", "i")
        await settle(pilot)
        assert isinstance(app.screen, ImportRunsScreen), "writable: the same keys open it"

    second = Project.open(new_session.root, allow_read_only=True)
    try:
        assert second.read_only
        app = TrnTuiApp(second)
        notices: list[str] = []
        notify = app.notify

        def recorded(message: str, *args, **kwargs) -> None:
            notices.append(message)
            notify(message, *args, **kwargs)

        app.notify = recorded  # type: ignore[method-assign]
        async with app.run_test(size=SIZE) as pilot:
            assert "Read-only" in app.status[0] and new_session.holder in app.status[0]
            await pilot.press("2")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen)
            assert notices == []
            await pilot.press("i")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen), "read-only: no import dialog"
            assert len(notices) == 1
            assert "Read-only" in notices[0] and new_session.holder in notices[0]
    finally:
        second.close()
    assert load_runs(new_session.root).is_empty()


def test_runs_screen_snapshot_with_plot(sample_project: Project, snap_compare) -> None:
    async def show_runs(pilot) -> None:
        await wait_until(pilot, lambda: pilot.app.analysis is not None, "the first estimate")
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("down", "up")
        await settle(pilot)
        assert pilot.app.screen.query_one(ThroughputPlot)._series is not None

    assert snap_compare(TrnTuiApp(sample_project), terminal_size=SIZE, run_before=show_runs)


async def test_run_detail_records_a_quality_result(trn_project: tuple[Path, str]) -> None:
    root, run_id = trn_project
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, RunDetailScreen)
            assert "not verified" in str(app.screen.query_one("#facts").content)
            await pilot.press("r")
            await settle(pilot)
            form = app.screen
            assert isinstance(form, ItemFormScreen)
            form.query_one("#field-value", Input).value = "0.92"
            form.query_one("#field-source", Input).value = "eval job 7"
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen)
    recorded = load_recorded_quality(root)
    assert run_id in recorded
    assert recorded[run_id].value == 0.92
    assert recorded[run_id].source == "eval job 7"


def test_run_set_labels_read_apart_where_the_names_differ() -> None:
    from trntui.ui.format import distinct_labels

    systems = [f"HPE-Cray-XD670-H200-SXM5-141GB_n{n}_24.09/llama2_70b_lora" for n in (1, 2, 4)]
    names = [*systems, "gpu-baseline", "trn3"]
    labels = distinct_labels(names + systems, 16)
    assert set(labels) == set(names)
    assert all(len(label) <= 16 for label in labels.values())
    assert len(set(labels.values())) == len(names), labels
    assert labels["gpu-baseline"] == "gpu-baseline" and labels["trn3"] == "trn3"
    assert [labels[s][:3] for s in systems] == ["…n1", "…n2", "…n4"]
    # A single long name shows its beginning, marked as cut (the line under the table has it all).
    (only,) = distinct_labels([systems[0]], 16).values()
    assert only == systems[0][:15] + "…"


async def test_undo_on_the_runs_screen_shows_the_runs_as_judged_by_the_goal_put_back(
    sample_project: Project,
) -> None:
    import dataclasses

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)

        def outcomes() -> list[str]:
            return [str(table.get_cell_at((i, 2))) for i in range(table.row_count)]  # Status

        before = outcomes()
        assert "succeeded" in before
        goal = app.session.inventory.goal
        assert goal.quality_threshold is not None
        strict = dataclasses.replace(goal, quality_threshold=goal.quality_threshold / 100)
        assert (
            app.session.edit_inventory(
                dataclasses.replace(app.session.inventory, goal=strict), label="goal"
            )
            is None
        )
        await wait_until(pilot, lambda: outcomes() != before, "the stricter goal is shown")
        assert "succeeded" not in outcomes()
        await pilot.press("ctrl+z")
        await wait_until(pilot, lambda: outcomes() == before, "the undone goal is shown")
        assert app.current_mode == "runs", "without leaving the screen"


async def test_a_narrow_runs_table_marks_the_unit_once_the_runs_units_differ(
    sample_dir: Path,
) -> None:
    """At 80 columns the table has no Unit column: the sample's MLPerf runs (samples/s) show
    their numbers alone; with a Hugging Face run (tokens/s) beside them, every steady
    throughput says its unit, and the table still fits without scrolling sideways."""
    hf_log = Path(__file__).parent / "data" / "frameworks" / "hf" / "trainer.log"

    async def steady_cells() -> tuple[list[str], int]:
        with Project.open(sample_dir) as project:
            app = TrnTuiApp(project)
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("2")
                await settle(pilot)
                table = app.screen.query_one("#runs", DataTable)
                at = [c.label.plain for c in table.ordered_columns].index("Steady")
                cells = [str(table.get_cell_at((i, at))) for i in range(table.row_count)]
                return cells, table.max_scroll_x

    alone, _ = await steady_cells()
    assert alone and all(re.fullmatch(r"[\d,.]+", cell) for cell in alone), alone
    import_paths(sample_dir, [hf_log], set_name="hf")
    mixed, sideways = await steady_cells()
    assert any(cell.endswith(" tok") for cell in mixed), mixed
    assert all(re.fullmatch(r"[\d,.]+ (smp|tok)", cell) for cell in mixed), mixed
    assert sideways == 0, f"the table scrolls {sideways} columns sideways"


async def plot_alone(series: ThroughputSeries, facts: PlotFacts, size: tuple[int, int]) -> Text:
    """``series`` drawn by a ``ThroughputPlot`` alone in an app of ``size``, as rendered."""
    from textual.app import App

    class PlotApp(App[None]):
        def compose(self):
            yield ThroughputPlot()

    app = PlotApp()
    async with app.run_test(size=size) as pilot:
        plot = app.query_one(ThroughputPlot)
        plot.show(series, facts)
        await pilot.pause()
        return plot.render()


async def test_plot_phases_read_apart_without_colour() -> None:
    from trntui.core.throughput_series import ThroughputSeries

    series = ThroughputSeries(
        start_s=0.0,
        end_s=80.0,
        rates=(1.0, 2.0, 3.0, 3.0, 0.5, 3.0, 3.0, 3.0),
        unit="samples/s",
        restart_columns=(6,),
    )

    facts = PlotFacts(warmup_s=20.0, warmup_end_s=20.0, stalls_s=((40.0, 50.0),))
    lines = (await plot_alone(series, facts, (40, 10))).plain.splitlines()
    marks = next(line for line in lines if "└" in line).split("└", 1)[1]
    # 10 s columns: 0-1 before the warm-up ends (20 s); 3-5 touch the 40-50 s stall (a column
    # within half a column of it counts); 6 holds the restart; 2 and 7 are steady (blank).
    assert marks == "ww !!!↺ ", marks
    assert any("w warm-up" in line and "! stall" in line for line in lines)


async def test_the_plot_styles_runs_of_columns_not_each_column() -> None:
    """A span per plotted cell (some 500 at 80x24) made Textual convert and cut every one at
    each highlighted run: most of a key's frame on the Runs screen. Columns in one colour are
    one span: a steady run of 60 columns has, per bar row, its label, its axis and its bars."""
    from trntui.core.throughput_series import ThroughputSeries

    series = ThroughputSeries(
        start_s=0.0,
        end_s=600.0,
        rates=(2.0,) * 30 + (2.1,) * 30,
        unit="samples/s",
        restart_columns=(),
    )

    text = await plot_alone(series, PlotFacts(steady=2.05, unit="samples/s"), (80, 10))
    bar_rows = [line for line in text.plain.splitlines() if line[8:9] in ("│", "┤")]
    assert len(bar_rows) == 5 and "█" * 60 in bar_rows[-1], bar_rows
    first_legend = text.plain.index("\n", text.plain.index("└"))
    spans_of_bars = [span for span in text.spans if span.end <= first_legend]
    # label + axis + bars per row, and the floor line: label + axis, then one span of marks.
    assert len(spans_of_bars) <= 3 * (len(bar_rows) + 1), len(spans_of_bars)


async def test_the_mlperf_plot_reads_at_80x24(sample_project: Project) -> None:
    """Issue 26: the MLPerf plot was a solid block with one y label, and its warm-up mark
    covered the whole first block (~45% of the plot). result_1.txt of the sample's H100 set,
    by hand from its log: block 1 holds 1536 samples in 775.230 s (1.981/s: compilation and
    first steps inside), blocks 2-5 hold 384 samples in about 190.3 s each (2.018/s), and an
    evaluation of about 40 s follows each of the first four blocks."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.analysis is not None, "the first estimate")
        table = await focus_runs_table(pilot, app)
        table.move_cursor(row=0)
        await settle(pilot)
        run_id = table.coordinate_to_cell_key((0, 0)).row_key.value
        assert "result_1.txt" in str(table.get_row_at(0)[1])
        plot = app.screen.query_one(ThroughputPlot)
        await wait_until(pilot, lambda: plot._series is not None, "the plot")
        facts = app.screen.facts[run_id]
        lines = plot.render().plain.splitlines()
    rows = [line for line in lines if "│" in line[:10] or "┤" in line[:10] or "└" in line[:10]]
    labels = [line[:8].strip() for line in rows if line[:8].strip()]
    assert len(labels) >= 3, lines
    assert all(float(label.replace(",", "")) > 1.5 for label in labels), "the axis is cut"
    steady = f"{facts.steady_throughput:,.4g}"
    # 2.017/s lies in the top row (the steady blocks reach 2.018/s): marked there.
    assert rows[0][8] == "┤" and f"steady ┤{steady}" in lines[-1], "steady rate on the axis"
    bars = [line[9:] for line in rows[:-1]]
    marks = rows[-1][9:]
    # Warm-up is the facts' warm-up time (775.23 s less the 1536 samples at the median pace,
    # about 14 s), not the whole first block: one 25 s column of 67 here.
    column_s = (1714273556.798 - 1714271859.794) / len(marks)  # run_start to last block_stop
    assert marks.count("w") == math.ceil(facts.phases.warmup_s / column_s) == 1
    assert marks.startswith("w ")
    # The four evaluations are gaps; the first block is drawn lower than the steady ones.
    assert len(re.findall(r"(?<=\S) +(?=\S)", bars[-1])) == 4, bars[-1]
    assert bars[0][0] == " " and bars[0][35] == "█", bars[0]


async def test_runs_fit_80_columns_and_the_extra_width_shows_every_column(
    sample_project: Project,
) -> None:
    """At 80 columns the table fits without scrolling sideways (size and unit are in the line
    under it, the launch time in the run detail); at 120 it also shows size, unit and launch
    time, each run's as its log tells."""
    from trntui.core.timeline import RunMetadata

    runs = load_runs(sample_project.root)
    launched = {
        run_id: RunMetadata.from_json(text).launch_time
        for run_id, text in runs.select("run_id", "metadata_json").iter_rows()
    }
    assert any(when is not None for when in launched.values())

    def headers(table: DataTable) -> list[str]:
        return [str(column.label) for column in table.columns.values()]

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert table.virtual_size.width <= table.scrollable_content_region.width, "no scrolling"
        assert "Launched" not in headers(table) and "Steady" in headers(table)
        assert all("..." not in str(c) for c in table.get_row_at(0)), "facts shown"
        run_id = table.coordinate_to_cell_key((0, 0)).row_key.value
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        when = launched[run_id]
        expected = "unknown" if when is None else when.strftime("%Y-%m-%d %H:%M")
        assert f"Launched              {expected}" in str(app.screen.query_one("#facts").content)
        await pilot.press("escape")
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        assert headers(table)[-1] == "Launched" and {"Size", "Unit"} <= set(headers(table))
        for run_id, when in launched.items():
            shown = str(table.get_row(run_id)[-1])
            assert shown == ("unknown" if when is None else when.strftime("%Y-%m-%d %H:%M"))


async def test_the_import_preview_tells_a_capture_from_a_log(
    new_session: Project, tmp_path: Path
) -> None:

    logs = tmp_path / "trn3-example"
    shutil.copytree(SAMPLE / "logs" / "trn3-example", logs)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(logs))
        await settle(pilot)
        preview = screen.query_one("#preview", DataTable)
        rows = [preview.get_row_at(i) for i in range(preview.row_count)]
        captures = [row for row in rows if str(row[1]) == "neuron-monitor"]
        assert len(captures) == 3
        assert all(str(row[2]) == "telemetry" and "attach" in str(row[5]) for row in captures)
        # Each file reads apart from the others (a cut from the left gave all three captures
        # "…euron-monitor.jsonl"), and no cell is wider than the column's 20 cells.
        names = [str(row[0]) for row in rows]
        assert len(set(names)) == len(names) == 6, names
        assert all(len(name) <= 20 for name in names)
        assert all(any(f"run{n}" in name for name in names if "…" in name) for n in (1, 2, 3))
        message = str(screen.query_one("#message").content)
        assert "3 utilization captures, not imported" in message
        # The set the runs go into follows the runs, not the captures' sentence ("attach each
        # to its run with t in the run's detail into set ..." read as if the captures went there).
        assert message.startswith("3 runs ready to import into set '"), message
        assert message.endswith("ctrl+s imports them."), message


async def test_renaming_a_run_set_keeps_the_targets_measured_by_it(sample_project: Project) -> None:
    from textual.widgets import Select

    trainium = next(t for t in sample_project.inventory.targets if t.run_set == "trn3-example")
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        total = app.analysis.estimate.target(trainium.name).total_usd
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(
            row=table.get_row_index(
                next(
                    r
                    for r, s in load_runs(sample_project.root)
                    .select("run_id", "set_name")
                    .iter_rows()
                    if s == "trn3-example"
                )
            )
        )
        await pilot.press("m")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        assert form.query_one("#field-set_name", Input).value == "trn3-example"
        assert form.query_one("#field-whole_set", Select).value is True
        form.query_one("#field-set_name", Input).value = "trn3-trial"
        await pilot.press("ctrl+s")
        await settle(pilot)
        sets = set(load_runs(sample_project.root)["set_name"].to_list())
        assert "trn3-trial" in sets and "trn3-example" not in sets
        target = next(t for t in app.session.inventory.targets if t.name == trainium.name)
        assert target.run_set == "trn3-trial"
        await wait_until(
            pilot,
            lambda: app.analysis.estimate.target(trainium.name).total_usd is not None,
            "the estimate follows",
        )
        assert app.analysis.estimate.target(trainium.name).total_usd == pytest.approx(total)


async def test_a_preview_of_logs_already_imported_says_so(
    new_session: Project, tmp_path: Path
) -> None:
    """'0 runs ready to import', then on ctrl+s 'preview files first', though the files had
    been previewed: the reason (already imported) was in a column past 80 columns."""
    logs = tmp_path / "logs"
    shutil.copytree(LORA, logs)
    import_paths(new_session.root, [logs])
    count = len(list(logs.glob("result_*.txt")))
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(logs))
        await settle(pilot)
        assert message_of(screen).startswith(
            f"0 runs ready to import; {count} already imported (the same log), left out"
        )
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "every run previewed is already imported" in message_of(screen)
        assert load_runs(new_session.root).height == count


async def test_z_states_a_size_over_the_one_the_logs_state(sample_project: Project) -> None:
    """A log's size can be wrong: z always states one, shown with who stated it and what the
    logs said (the sample's MLPerf set reads 1 x 8 from its systems file)."""
    from trntui.store.set_sizes import load_stated_sizes

    mlperf = next(
        r
        for r, s in load_runs(sample_project.root).select("run_id", "set_name").iter_rows()
        if s != "trn3-example"
    )
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index(mlperf))
        await pilot.press("z")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        form.query_one("#field-nodes", Input).value = "2"
        form.query_one("#field-accelerators_per_node", Input).value = "8"
        form.query_one("#field-source", Input).value = "the job script"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        set_name = load_runs(sample_project.root).filter(pl.col("run_id") == mlperf)["set_name"][0]
        stated = load_stated_sizes(sample_project.root)[set_name]
        assert (stated.nodes, stated.accelerators_per_node) == (2, 8)
        summary = str(app.screen.query_one("#set-summary").render())
        assert "2 x 8" in summary and "logs said 1 x 8" in summary
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        detail = str(app.screen.query_one("#facts", Static).content)
        assert "stated by" in detail and "logs said 1 x 8 NVIDIA H100-SXM5-80GB" in detail


async def test_the_import_paths_complete_and_keep_what_was_typed(
    new_session: Project, tmp_path: Path
) -> None:
    """Issue 26, item 7: no path completion in the import dialog, and shift+tab back into the
    path field selected it all, so the next key replaced every path typed."""
    (tmp_path / "results" / "8xSMC-H100").mkdir(parents=True)
    (tmp_path / "results" / "notes.md").write_text("")
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        field = app.screen.query_one("#paths", Input)
        assert app.focused is field
        await pilot.press(*f"{tmp_path}/results/8x")
        await settle(pilot)
        await pilot.press("right")  # takes the completion Textual shows
        assert field.value == f"{tmp_path}/results/8xSMC-H100/"
        await pilot.press("tab", "shift+tab")
        await settle(pilot)
        assert app.focused is field
        await pilot.press("space", *f"{tmp_path}/results/no", "right")
        assert field.value == f"{tmp_path}/results/8xSMC-H100/ {tmp_path}/results/notes.md"


@given(
    st.lists(st.text(alphabet="ab/_-. \u00e9", min_size=0, max_size=12), min_size=1, max_size=12)
)
def test_each_name_shares_its_longest_beginning_with_a_sorted_neighbour(names: list[str]) -> None:
    """How long a beginning each name shares with its most similar other name (where a cut run
    set label starts), found from its neighbours in sorted order, is the longest over every
    other name."""
    from trntui.core.format import shared_starts

    def common(a: str, b: str) -> int:
        pairs = enumerate(zip(a, b, strict=False))
        return next((k for k, (x, y) in pairs if x != y), min(len(a), len(b)))

    unique = set(names)
    expected = {
        name: max((common(name, other) for other in unique - {name}), default=0) for name in unique
    }
    assert shared_starts(sorted(unique)) == expected


async def test_the_runs_table_holds_at_most_its_cap_and_a_filter_reaches_the_rest(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trntui.ui.screens import runs as runs_screen

    monkeypatch.setattr(runs_screen, "SHOWN_ROWS", 5)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == 5
        assert app.status[0] == "The first 5 of 13 runs are shown: / filters them"
        assert not app.screen.query("#runs-filter"), "no filter takes no line"
        await pilot.press("slash", *"TRN3")  # any case
        await settle(pilot)
        field = app.screen.query_one("#runs-filter", Input)
        assert field.value == "TRN3"
        assert table.row_count == 3
        assert {str(table.get_row_at(i)[0]) for i in range(3)} == {"trn3-example"}
        assert app.status[0] == "3 of 13 runs match 'TRN3'"
        await pilot.press("enter")
        await settle(pilot)
        assert app.focused is table and field.is_mounted, "the filter stays while it holds"
        field.value = "result_1"  # the log's name: result_1.txt and result_10.txt
        await settle(pilot)
        assert table.row_count == 2
        field.focus()
        field.value = ""
        await settle(pilot)
        assert table.row_count == 5
        table.focus()
        await wait_until(pilot, lambda: not app.screen.query("#runs-filter"), "no empty filter")


async def test_a_filter_keeps_the_highlighted_run_and_its_plot(sample_project: Project) -> None:
    """Typing a filter refills the table: the run highlighted before stays highlighted while
    the filter matches it (not whichever run now sits at its row number), and its plot is not
    read and drawn again at every keystroke."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        table = await focus_runs_table(pilot, app)
        logs = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        row = next(i for i, log in enumerate(logs) if "trn3-run2" in log)
        assert row > 2, "below the three rows the filter leaves"
        table.move_cursor(row=row)
        plot = app.screen.query_one(ThroughputPlot)
        await settle(pilot)
        run_id = table.coordinate_to_cell_key((row, 0)).row_key.value
        plotted = plot._series
        assert plotted is not None
        await pilot.press("slash", *"trn3")
        await settle(pilot)
        assert table.row_count == 3
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == run_id
        assert plot._series is plotted, "the plot shown is kept"
        await pilot.press("backspace")  # "trn": the same run, its row moves back down
        await settle(pilot)
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == run_id
        assert plot._series is plotted


async def test_while_a_filter_is_typed_the_table_holds_fewer_runs_until_enter(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A keystroke in the filter refills the table: while typing it holds only the first
    TYPING_ROWS matches (the rows in view and pages more), and says so; enter, or leaving the
    field, fills it to SHOWN_ROWS."""
    from trntui.ui.screens import runs as runs_screen

    monkeypatch.setattr(runs_screen, "SHOWN_ROWS", 5)
    monkeypatch.setattr(runs_screen, "TYPING_ROWS", 2)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        await pilot.press("slash", *"result")  # the H100 set's ten result_N.txt logs
        await settle(pilot)
        assert table.row_count == 2
        assert app.status[0] == "10 of 13 runs match 'result'; the first 2 are shown (enter: more)"
        await pilot.press("enter")
        await settle(pilot)
        assert table.row_count == 5 and app.focused is table
        assert app.status[0] == "10 of 13 runs match 'result'; the first 5 are shown"
        await pilot.press("slash", "backspace")
        await settle(pilot)
        assert table.row_count == 2, "typing again"
        await pilot.press("tab")  # leaving the field without enter
        await settle(pilot)
        assert table.row_count == 5


async def test_a_filter_typed_right_after_the_slash_lands_in_the_field(
    sample_project: Project,
) -> None:
    """``/trn3`` arriving at once (typed quickly, or batched over SSH): the slash mounts the
    filter field and moves the focus there; the letters after it wait for that and go into
    the field, not to the table (where they are no keys: they were lost)."""
    from textual import events

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        table = await focus_runs_table(pilot, app)
        await settle(pilot)
        for key in ["slash", *"trn3"]:  # all queued before any is handled
            app.post_message(events.Key(key, "/" if key == "slash" else key))
        await settle(pilot)
        field = app.screen.query_one("#runs-filter", Input)
        assert field.value == "trn3"
        assert table.row_count == 3


async def test_the_highlighted_run_and_its_plot_follow_a_resize_and_a_typed_filter(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crossing the wide layout's width keeps the run highlighted (the table is laid out
    again) and draws its plot again at the new width (a series has a column per cell); a
    filter typed while the table holds only its first rows keeps a run further down."""
    from trntui.ui.screens import runs as runs_screen

    monkeypatch.setattr(runs_screen, "TYPING_ROWS", 3)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        table = await focus_runs_table(pilot, app)
        plot = app.screen.query_one(ThroughputPlot)
        table.move_cursor(row=8)
        await settle(pilot)

        def highlighted() -> str:
            return table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value

        run_id = highlighted()
        for width in (130, 80):
            await pilot.resize_terminal(width, SIZE[1])
            await settle(pilot)
            assert highlighted() == run_id, width
            assert plot._series is not None
            assert len(plot._series.rates) == plot.plot_columns, width
        await pilot.press("slash", "r")  # all 13 runs match; the table holds the first 9
        await settle(pilot)
        assert highlighted() == run_id and table.row_count == 9
        assert "the first 9 are shown (enter: more)" in app.status[0]


async def test_an_import_under_a_filter_is_shown_and_said(
    sample_project: Project, tmp_path: Path
) -> None:
    """The review's keys: a filter 'trn' on, then a Hugging Face log imported. The status line
    kept "3 of 14 runs match 'trn'" (the recompute after the import said it again over
    "Imported 1 run(s)") and the new run was hidden. The filter that would hide it is cleared,
    the new run is highlighted, and the import's outcome stays on the status line."""
    log = tmp_path / "hf" / "trainer.log"
    log.parent.mkdir()
    shutil.copy(Path(__file__).parent / "data" / "frameworks" / "hf" / "trainer.log", log)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_runs_filter(pilot, "trn")
        await pilot.press("enter")
        await settle(pilot)
        assert app.status[0] == "3 of 13 runs match 'trn'"
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, ImportRunsScreen)
        await pilot.press(*str(log), "enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        (new,) = set(load_runs(sample_project.root)["run_id"]) - set(load_runs(SAMPLE)["run_id"])
        table = app.screen.query_one("#runs", DataTable)
        assert not app.screen.query("#runs-filter"), "the filter that hid it is gone"
        assert table.row_count == 14
        assert table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value == new
        said = "Imported 1 run; the filter 'trn' was cleared to show it"
        assert app.status[0] == said
        await wait_until(pilot, lambda: new in app.screen.facts, "the new run's facts")
        assert app.status[0] == said, "the recompute after the import says nothing over it"


async def test_a_filter_cleared_takes_its_count_off_the_status_line(
    sample_project: Project,
) -> None:
    """After the filter was cleared, the status line still said "3 of 13 runs match 'trn'"."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        field = await type_runs_filter(pilot, "trn")
        assert app.status[0] == "3 of 13 runs match 'trn'"
        await pilot.press(*["backspace"] * len(field.value))
        await settle(pilot)
        assert field.value == ""
        assert "match" not in app.status[0], app.status
