"""The Runs screen driven by keys: preview, confirm, cancel, errors, and the plot."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from tests import MLPERF_DATA, loggen
from trntui.store.project import Project, init_project
from trntui.store.runs import load_runs
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.runs import RunsScreen
from trntui.ui.widgets.throughput_plot import ThroughputPlot

SHARED = MLPERF_DATA
LORA = SHARED / "v4.0" / "smc" / "results" / "8xSMC-H100-SXM-80GB" / "llama2_70b_lora"
SIZE = (80, 24)


@pytest.fixture
def project(tmp_path: Path):
    root = init_project(tmp_path / "proj")
    with Project.open(root) as opened:
        yield opened


async def open_import(pilot, app: TrnTuiApp, paths: str) -> ImportRunsScreen:
    await pilot.press("2")
    await pilot.pause()
    assert isinstance(app.screen, RunsScreen)
    await pilot.press("i")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, ImportRunsScreen)
    screen.query_one("#paths", Input).value = paths
    await pilot.press("enter")
    return screen


async def wait_for_workers(app: TrnTuiApp) -> None:
    await app.workers.wait_for_complete()


async def test_preview_then_confirm_stores_the_runs(project: Project, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LORA, logs)
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(logs))
        await wait_for_workers(app)
        await pilot.pause()
        preview = screen.query_one("#preview", DataTable)
        expected = len(list(logs.glob("result_*.txt")))
        assert preview.row_count == expected
        assert load_runs(project.root).is_empty(), "the preview must not store anything"
        await pilot.press("ctrl+s")
        await wait_for_workers(app)
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        stored = load_runs(project.root)
        assert stored.height == expected
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == expected
        await wait_for_workers(app)
        await pilot.pause()
        plot = app.screen.query_one(ThroughputPlot)
        assert plot._series is not None


async def test_preview_judges_runs_by_the_goal_like_the_runs_table(
    project: Project, tmp_path: Path
) -> None:
    """neuronx-distributed logs do not say their planned steps: the goal does (600 here)."""
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
        await wait_for_workers(app)
        await pilot.pause()
        preview = screen.query_one("#preview", DataTable)
        assert preview.row_count == 1
        status, run_min = preview.get_row_at(0)[2:4]
        assert status == "succeeded"
        assert run_min != "?", "with the goal's planned steps the run time is known"
        await pilot.press("ctrl+s")
        await wait_for_workers(app)
        await pilot.pause()
        table = app.screen.query_one("#runs", DataTable)
        assert table.get_row_at(0)[2:4] == [status, run_min]  # after Set and Size


async def test_bad_file_is_reported_with_its_name_and_nothing_is_stored(
    project: Project, tmp_path: Path
) -> None:
    bad = tmp_path / "broken.log"
    bad.write_bytes(b"\x00\x01 this is not a training log\n" * 5)
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(bad))
        await wait_for_workers(app)
        await pilot.pause()
        message = str(screen.query_one("#message").content)
        assert "broken.log" in message
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ImportRunsScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
    assert load_runs(project.root).is_empty()


async def test_missing_path_is_refused_before_any_work(project: Project, tmp_path: Path) -> None:
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_import(pilot, app, str(tmp_path / "nope.log"))
        await pilot.pause()
        assert "Not found" in str(screen.query_one("#message").content)


async def test_escape_cancels_without_storing(project: Project, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(LORA, logs)
    app = TrnTuiApp(project)
    async with app.run_test(size=SIZE) as pilot:
        await open_import(pilot, app, str(logs))
        await pilot.press("escape")
        await wait_for_workers(app)
        await pilot.pause()
        if isinstance(app.screen, ImportRunsScreen):
            await pilot.press("escape")
            await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
    assert load_runs(project.root).is_empty()


async def test_read_only_session_cannot_import(project: Project) -> None:
    second = Project.open(project.root, allow_read_only=True)
    try:
        app = TrnTuiApp(second)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2", "i")
            await pilot.pause()
            assert isinstance(app.screen, RunsScreen)
    finally:
        second.close()


SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "llama2-70b-lora"


def test_runs_screen_snapshot_with_plot(tmp_path: Path, snap_compare) -> None:
    root = tmp_path / "llama2-70b-lora"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".trntui.lock"))

    async def show_runs(pilot) -> None:
        await pilot.press("2")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("down", "up")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.3)

    with Project.open(root) as project:
        assert snap_compare(TrnTuiApp(project), terminal_size=SIZE, run_before=show_runs)


async def test_run_detail_records_a_quality_result(tmp_path: Path) -> None:
    from tests.loggen import NxdSpec, write_nxd
    from trntui.store.quality import load_recorded_quality
    from trntui.store.runs import import_paths
    from trntui.ui.screens.inventory import ItemFormScreen
    from trntui.ui.screens.run_detail import RunDetailScreen

    root = tmp_path / "proj"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".trntui.lock", "runs", "logs"))
    log = tmp_path / "trn.log"
    write_nxd(log, NxdSpec(total_steps=384, batch=8, stall_at=None, crash_at=None))
    (outcome,) = import_paths(root, [log], set_name="trn")
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await wait_for_workers(app)
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, RunDetailScreen)
            assert "not verified" in str(app.screen.query_one("#facts").content)
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, ItemFormScreen)
            await pilot.press(*"0.92", "tab", *"eval job 7")
            await pilot.press("ctrl+s")
            await wait_for_workers(app)
            await pilot.pause()
            assert isinstance(app.screen, RunsScreen)
    recorded = load_recorded_quality(root)
    assert outcome.run_id in recorded
    assert recorded[outcome.run_id].value == 0.92
    assert recorded[outcome.run_id].source == "eval job 7"
