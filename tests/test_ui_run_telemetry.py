"""Run detail with utilization and the verdict; attaching a capture from the UI."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from textual.widgets import DataTable, Input

from tests import SIZE
from tests.loggen import LAUNCH
from tests.telemetry_gen import MonitorSpec, Phase, write_monitor
from tests.ui_support import settle
from trntui.store.project import Project
from trntui.store.telemetry import load_captures
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.attach_capture import AttachCaptureScreen
from trntui.ui.screens.run_detail import RunDetailScreen
from trntui.ui.screens.runs import RunsScreen


async def open_detail(pilot, app: TrnTuiApp) -> RunDetailScreen:
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(app.screen, RunDetailScreen)
    return app.screen


async def test_without_capture_the_detail_says_utilization_is_not_measured(
    trn_project: tuple[Path, str],
) -> None:
    root, _ = trn_project
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_detail(pilot, app)
            text = str(screen.query_one("#limits").content)
            assert "no capture attached" in text
            assert "accelerator-bound" in text and "not measured" in text


async def test_attached_busy_capture_makes_the_run_accelerator_bound(
    trn_project: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = trn_project
    capture = tmp_path / "monitor.jsonl"
    # Idle while compiling, then 90 % busy until well past the end of the run.
    # The nxd log's clock is the host's local time without a zone: so is the capture's.
    write_monitor(
        capture,
        MonitorSpec(
            phases=(Phase(120, 0.0), Phase(1200, 90.0)),
            start=LAUNCH - dt.timedelta(seconds=5),
            instance_type="trn3.48xlarge",
        ),
    )
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_detail(pilot, app)
            await pilot.press("t")
            await settle(pilot)
            attach = app.screen
            assert isinstance(attach, AttachCaptureScreen)
            attach.query_one("#capture", Input).value = str(capture)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen), "attaching closes the detail"
            assert "attached" in app.status[0] or "placed" in app.status[0]
            # The whole message is also a notification (the status line cuts it at 80).
            assert any(n.message == app.status[0] for n in app._notifications)
            assert not load_captures(root, run_id).is_empty()
            await open_detail(pilot, app)
            headline = str(app.screen.query_one("#headline").content)
            assert "accelerator-bound" in headline


async def test_capture_from_another_day_is_refused(
    trn_project: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = trn_project
    capture = tmp_path / "monitor.jsonl"
    write_monitor(
        capture,
        MonitorSpec(
            phases=(Phase(600, 90.0),),
            start=LAUNCH + dt.timedelta(days=3),
            instance_type="trn3.48xlarge",
        ),
    )
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_detail(pilot, app)
            await pilot.press("t")
            await settle(pilot)
            app.screen.query_one("#capture", Input).value = str(capture)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, AttachCaptureScreen)
            assert "Not attached" in str(app.screen.query_one("#message").content)
    assert load_captures(root, run_id).is_empty()


async def test_a_capture_without_clock_is_placed_by_the_offset_field(
    trn_project: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = trn_project
    capture = tmp_path / "no-clock.jsonl"
    write_monitor(
        capture,
        MonitorSpec(
            phases=(Phase(600, 90.0),), wrapper_timestamp=False, instance_type="trn3.48xlarge"
        ),
    )
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_detail(pilot, app)
            await pilot.press("t")
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, AttachCaptureScreen)
            dialog.query_one("#capture", Input).value = str(capture)
            await pilot.press("enter")
            await settle(pilot)
            message = str(dialog.query_one("#message").content)
            assert "Not attached" in message and "Offset" in message
            dialog.query_one("#offset", Input).value = "soon"
            await pilot.press("enter")
            await settle(pilot)
            assert "give seconds" in str(dialog.query_one("#message").content)
            dialog.query_one("#offset", Input).value = "30"
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(app.screen, AttachCaptureScreen), "attached and closed"
    (offset,) = load_captures(root, run_id)["offset_s"].to_list()
    assert offset == 30.0


def test_run_detail_snapshot_with_utilization_and_verdict(
    sample_project: Project, snap_compare
) -> None:
    async def open_last_trainium_run(pilot) -> None:
        app = pilot.app
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count > 12
        table.move_cursor(row=12)  # where twelve down keys lead, without twelve plot loads
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        assert "accelerator-bound" in str(app.screen.query_one("#headline").content)

    assert snap_compare(
        TrnTuiApp(sample_project), terminal_size=SIZE, run_before=open_last_trainium_run
    )


def test_a_wrapped_detail_line_keeps_its_place_under_its_value() -> None:
    from rich.console import Console
    from rich.text import Text

    from trntui.ui.text import Hanging

    text = Text(
        "System                1 x 16 Trainium3 = 16 (stated by sample project: one server)\n"
        "  init / compile      3.2 min\n"
        "  note: " + "word " * 12
    )
    console = Console(width=50, record=True, color_system=None)
    console.print(Hanging(text))
    lines = console.export_text().splitlines()
    assert lines[0].startswith("System                1 x 16")
    assert lines[1].startswith(" " * 22) and lines[1].strip(), "continues under the value"
    assert any(line.startswith("  init / compile      3.2 min") for line in lines)
    assert str(Hanging(text)) == text.plain


async def test_record_quality_shows_the_result_already_recorded(sample_project: Project) -> None:
    """The form opened empty and keeping it silently replaced the recorded result (the run
    then missed its target); now it holds the recorded one and says it replaces it."""
    from trntui.store.quality import load_recorded_quality
    from trntui.ui.screens.item_form import ItemFormScreen

    recorded = load_recorded_quality(sample_project.root)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        run_id = next(key.value for key in table.rows if key.value in recorded)
        table.move_cursor(row=table.get_row_index(run_id))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        await pilot.press("r")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        assert form.title_text == f"Replace the recorded quality of run {run_id}"
        assert form.query_one("#field-value", Input).value == f"{recorded[run_id].value:g}"
        assert form.query_one("#field-source", Input).value == recorded[run_id].source
