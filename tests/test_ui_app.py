"""The app driven like a user drives it: keys in, screens and files checked."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable, Input, OptionList

from tests import SIZE
from tests.ui_support import SOON_S, open_new_target_form, open_section, settle, wait_until
from trntui.store.project import Project, read_inventory
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.help import HelpScreen
from trntui.ui.screens.inventory import InventoryScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.widgets.field_form import FieldForm, FieldRow

pytestmark = pytest.mark.usefixtures("instant_saves")


async def focus_field(pilot, app: TrnTuiApp, section: str, key: str) -> Input:
    await open_section(pilot, section)
    field = app.screen.query_one(f"#section-{section} #field-{key}", Input)
    field.focus()
    await settle(pilot)
    assert app.focused is field
    return field


async def type_into(pilot, text: str) -> None:
    await pilot.press("home", "ctrl+k", *text)


def fill(form: ItemFormScreen, **values: str) -> None:
    """Fill the form's fields (typing is what the Inventory field tests drive, key by key)."""
    assert isinstance(form, ItemFormScreen)
    for key, value in values.items():
        form.query_one(f"#field-{key}", Input).value = value


def target_names(root: Path) -> list[str]:
    return [t.name for t in read_inventory(root).inventory.targets]


async def test_each_screen_is_reached_by_its_key(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, InventoryScreen)
        for key, mode in [("2", "runs"), ("3", "prices"), ("4", "scenarios"), ("1", "inventory")]:
            await pilot.press(key)
            await settle(pilot)
            assert app.current_mode == mode
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)


async def test_areas_keep_their_screens_and_never_restyle_the_app(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each area's screen is built once and kept; none restyles the whole app when shown
    (``App.refresh_css``, 0.2-0.3 s), the first area's included: it is the app's default
    screen, not made through a mode."""
    app = TrnTuiApp(sample_project)
    restyles: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        monkeypatch.setattr(app, "refresh_css", lambda *a, **k: restyles.append(app.current_mode))
        screens = {"inventory": app.screen}
        for key, mode in [("2", "runs"), ("1", "inventory"), ("3", "prices"), ("1", "inventory")]:
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screens.setdefault(mode, app.screen)
        for key, mode in [("4", "scenarios"), ("2", "runs"), ("1", "inventory")]:
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screens.setdefault(mode, app.screen)
    assert restyles == []
    assert set(screens) == {"inventory", "runs", "prices", "scenarios"}


async def test_screens_are_offered_in_the_command_palette(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"prices")
        # The palette searches in a worker: wait for its hits, not for a duration.
        hits = app.screen.query_one(CommandList)
        await wait_until(
            pilot, lambda: hits.option_count and hits.highlighted is not None, "a palette hit"
        )
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "prices"


async def test_the_palette_offers_one_quit_the_one_that_asks_about_unsaved_work(
    sample_project: Project,
) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE):
        system = [command.title for command in app.get_system_commands(app.screen)]
    assert "Quit" not in system and "Theme" in system


async def test_valid_edit_is_saved_and_survives_reopening(sample_dir: Path) -> None:
    assert read_inventory(sample_dir).inventory.model.parameters_billion != 13.0
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "model", "parameters_billion")
            await type_into(pilot, "13")
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: read_inventory(sample_dir).inventory.model.parameters_billion == 13.0,
                "the edit saved",
            )
            await pilot.press("ctrl+q")
    with Project.open(sample_dir) as reopened:
        app = TrnTuiApp(reopened)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, "model")
            field = app.screen.query_one("#section-model #field-parameters_billion", Input)
            assert field.value == "13"


async def test_entry_is_saved_when_typing_pauses(
    sample_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No enter, no tab: the entry is committed once no key came for the idle delay. The delay
    is an hour while typing (nothing may be saved yet), then nil for the last keystroke."""
    before = read_inventory(sample_dir).inventory.side_costs.log_gb
    assert before != 7.5
    monkeypatch.setattr(FieldForm, "idle_commit_s", 3600.0)
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            field = await focus_field(pilot, app, "side_costs", "log_gb")
            await type_into(pilot, "7.")
            await settle(pilot)
            assert read_inventory(sample_dir).inventory.side_costs.log_gb == before
            assert app.session.inventory.side_costs.log_gb == before, "committed before the pause"
            monkeypatch.setattr(FieldForm, "idle_commit_s", SOON_S)
            await pilot.press("5")
            await wait_until(
                pilot,
                lambda: read_inventory(sample_dir).inventory.side_costs.log_gb == 7.5,
                "the entry saved after the typing pause",
            )
            assert app.focused is field, "committed by the pause, not by leaving the field"


async def test_invalid_value_shows_inline_error_and_is_not_saved(sample_dir: Path) -> None:
    before = (sample_dir / "trntui.toml").read_bytes()
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "side_costs", "dataset_gb")
            await type_into(pilot, "-5")
            await settle(pilot)
            row = app.screen.query_one("#section-side_costs #row-dataset_gb", FieldRow)
            assert row.has_class("-invalid")
            assert "at least 0 GB" in (row.error or "")
            assert app.status[1] == "error"
            assert (sample_dir / "trntui.toml").read_bytes() == before
            await pilot.press("ctrl+q")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen), "quitting must warn about the bad entry"
            await pilot.press("y")
    # Quitting writes any pending save: the file is still the one from before.
    assert (sample_dir / "trntui.toml").read_bytes() == before


async def test_putting_back_the_saved_value_clears_the_not_saved_message(
    sample_project: Project,
) -> None:
    saved = sample_project.inventory.distribution.global_batch_size
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await focus_field(pilot, app, "distribution", "global_batch_size")
        await type_into(pilot, "xyz")
        await pilot.press("enter")
        await settle(pilot)
        assert app.status[0].startswith("Not saved")
        await type_into(pilot, str(saved))
        await pilot.press("enter")
        await settle(pilot)
        assert not app.status[0].startswith("Not saved"), app.status
        assert app.status[1] != "error"


async def test_add_target_then_delete_and_undo(sample_dir: Path) -> None:
    before = target_names(sample_dir)
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, "targets")
            await pilot.press("a")
            await settle(pilot)
            assert isinstance(app.screen, ItemFormScreen)
            fill(app.screen, name="Trn2 fallback", instance_type="trn2.48xlarge")
            await pilot.press("ctrl+s")
            await wait_until(
                pilot, lambda: len(target_names(sample_dir)) > len(before), "the new target saved"
            )
            names = target_names(sample_dir)
            assert names[-1] == "Trn2 fallback"
            assert names[:-1] == before
            table = app.screen.query_one("#section-targets DataTable", DataTable)
            assert table.row_count == len(names)

            table.move_cursor(row=0)
            await pilot.press("d")
            await wait_until(
                pilot, lambda: len(target_names(sample_dir)) < len(names), "the deletion saved"
            )
            assert target_names(sample_dir) == names[1:]
            await pilot.press("ctrl+z")
            await wait_until(
                pilot, lambda: len(target_names(sample_dir)) == len(names), "the undo saved"
            )
            assert target_names(sample_dir) == names


async def test_item_form_refuses_an_invalid_target(sample_dir: Path) -> None:
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, "targets")
            await pilot.press("a")
            await settle(pilot)
            fill(app.screen, name="bad", instance_type="eight H100s")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert isinstance(app.screen, ItemFormScreen)
            assert "family.size" in str(app.screen.query_one(".error").content)
            await pilot.press("escape")
            await settle(pilot)
    assert "bad" not in target_names(sample_dir)


async def test_second_session_is_read_only_and_names_the_holder(sample_dir: Path) -> None:
    before = target_names(sample_dir)
    assert before
    with Project.open(sample_dir) as first:
        second = Project.open(sample_dir, allow_read_only=True)
        try:
            app = TrnTuiApp(second)
            async with app.run_test(size=SIZE) as pilot:
                await open_section(pilot, "model")
                field = app.screen.query_one("#section-model #field-parameters_billion", Input)
                assert field.disabled
                assert first.holder in app.status[0]
                # The header says so first: a long project name cut at 80 columns hid it.
                assert app.sub_title.startswith("[read-only] ")
                await pilot.press("escape")
                await open_section(pilot, "targets")
                await pilot.press("d")
                await settle(pilot)
                table = app.screen.query_one("#section-targets DataTable", DataTable)
                assert table.row_count == len(before), "the target is still listed"
        finally:
            second.close()
    assert target_names(sample_dir) == before


def test_inventory_screen_snapshot(sample_project: Project, snap_compare) -> None:
    assert snap_compare(TrnTuiApp(sample_project), terminal_size=SIZE)


def test_target_list_snapshot(sample_project: Project, snap_compare) -> None:
    async def show_targets(pilot) -> None:
        app = pilot.app
        await settle(pilot)  # the first screen is composed after the app is ready
        nav = app.screen.query_one("#nav", OptionList)
        ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
        await pilot.press(*["down"] * ids.index("targets"))
        await settle(pilot)

    assert snap_compare(TrnTuiApp(sample_project), terminal_size=SIZE, run_before=show_targets)


async def test_the_first_frame_shows_the_inventory_while_the_estimate_computes(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from trntui.store import estimate_context

    release = threading.Event()
    real_read_context = estimate_context.read_context

    def held_read_context(*args, **kwargs):
        assert release.wait(60), "the test never released the estimate"
        return real_read_context(*args, **kwargs)

    monkeypatch.setattr(estimate_context, "read_context", held_read_context)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bar = app.screen.query_one("EstimateBar")
        assert isinstance(app.screen, InventoryScreen) and app.analysis is None
        assert "Estimate: computing..." in str(bar.render())
        assert "$" not in str(bar.render()), "no total before there is one"
        for key, mode in [("2", "runs"), ("3", "prices"), ("4", "scenarios")]:
            await pilot.press(key)  # every screen opens while the estimate is computing
            await pilot.pause()
            assert app.current_mode == mode and app.analysis is None
            assert "Estimate: computing..." in str(app.screen.query_one("EstimateBar").render())
        release.set()
        await settle(pilot)
        assert app.analysis is not None
        assert "Trn3/GPU" in str(app.screen.query_one("EstimateBar").render())


async def test_a_section_form_is_built_when_first_shown_with_the_values_of_then(
    sample_project: Project,
) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert [form.id for form in screen.query(FieldForm)] == ["form-project"]
        # A hand edit, reloaded while the Model form is not built yet, is what it then shows.
        path = sample_project.path
        text = path.read_text(encoding="utf-8")
        before = f"{sample_project.inventory.model.parameters_billion:g}"
        assert before != "13"
        old = f"parameters_billion = {before}"
        assert old in text
        path.write_text(text.replace(old, "parameters_billion = 13"), encoding="utf-8")
        await pilot.press("ctrl+r")
        await settle(pilot)
        await open_section(pilot, "model")
        field = screen.query_one("#section-model #field-parameters_billion", Input)
        assert field.value == "13"
        assert sorted(form.id for form in screen.query(FieldForm)) == ["form-model", "form-project"]
        # Undo of the reload reaches the form built since (once the person agrees to lose
        # the hand edit).
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert field.value == before


async def test_undoing_a_reload_asks_before_it_overwrites_the_hand_edit(
    sample_project: Project,
) -> None:
    """ctrl+r took a hand edit in; ctrl+z then wrote the session's inventory back over it
    without a word. Now it asks; 'n' keeps the file and the session as reloaded."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        path = sample_project.path
        text = path.read_text(encoding="utf-8")
        budget = sample_project.inventory.goal.budget_usd
        old = f"budget_usd = {budget}"
        assert old in text
        edited = text.replace(old, "budget_usd = 175.0")
        path.write_text(edited, encoding="utf-8")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.session.inventory.goal.budget_usd == 175.0
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        assert "changes made to it outside this session are lost" in app.screen.question
        await pilot.press("n")
        await settle(pilot)
        assert app.session.inventory.goal.budget_usd == 175.0
        assert path.read_text(encoding="utf-8") == edited
        assert app.session.history and app.session.history[-1].label == "reload"


def test_opening_the_app_loads_no_polars_until_the_estimate_needs_it() -> None:
    import subprocess
    import sys

    probe = "import sys, trntui.ui.app; print('polars' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def overrides_and_loaded(root: Path, module: str) -> str:
    """Open the project at ``root`` in a fresh process as the app does before its first frame
    (the App made, not run): how many overrides its session holds, and whether ``module`` was
    imported by then."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from trntui.store.project import Project\n"
        "from trntui.ui.app import TrnTuiApp\n"
        f"with Project.open({str(root)!r}) as project:\n"
        "    app = TrnTuiApp(project)\n"
        f"    print(len(app.session.overrides), {module!r} in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_opening_a_project_with_a_working_scenario_loads_no_polars(sample_dir: Path) -> None:
    """The session reads the working scenario's overrides when the project opens, before the
    first frame: that read must not load the estimate's formula (Polars took 0.32 s of it)."""
    (sample_dir / "working_scenario.toml").write_text(
        'schema_version = 1\n\n[[override]]\ninput = "steady_throughput"\n'
        'target = "Trainium3 trial"\nvalue = 2.5\nwho = "ana"\nwhy = "vendor figure"\n'
    )
    assert overrides_and_loaded(sample_dir, "polars") == "1 False"


def test_opening_a_project_without_overrides_loads_no_estimate_inputs(sample_dir: Path) -> None:
    """Without a working scenario the session has no override to check before the first
    frame, so the estimate's inputs (their specs and checks) load with the estimate, after it:
    10 ms of the first frame (``benchmarks/bench_first_frame.py``)."""
    assert not (sample_dir / "working_scenario.toml").exists()
    assert overrides_and_loaded(sample_dir, "trntui.core.estimate.inputs") == "0 False"


async def test_a_target_picks_its_run_set_and_one_that_does_not_exist_is_flagged(
    sample_project: Project,
) -> None:
    from textual.widgets import Select, Static

    from trntui.store.runs import run_sets

    sets = [info.name for info in run_sets(sample_project.root)]
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_section(pilot, "targets")
        table = app.screen.query_one("#section-targets DataTable", DataTable)
        assert "Run set" in [str(column.label) for column in table.columns.values()]
        await pilot.press("e")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        picker = form.query_one("#field-run_set", Select)
        offered = [value for _, value in picker._options if value is not Select.NULL]
        assert offered == sets, "the run sets as imported, nothing to mistype"
        labels = [str(label) for label, _ in picker._options]
        assert any("runs)" in label for label in labels), labels
        await pilot.press("escape")
        await settle(pilot)
        # A hand edit with a typo: Checks names it instead of "Nothing missing".
        target = app.session.inventory.targets[0]
        typo = dataclasses.replace(target, run_set=f"{target.run_set}x")
        inventory = dataclasses.replace(
            app.session.inventory, targets=(typo, *app.session.inventory.targets[1:])
        )
        assert app.session.edit_inventory(inventory, label="edit target") is None
        await settle(pilot)
        await open_section(pilot, "checks")
        text = str(app.screen.query_one("#checks-body", Static).content)
        assert f"no run set '{target.run_set}x'" in text


async def test_undo_names_the_field_as_the_form_labels_it(sample_project: Project) -> None:
    from trntui.core.fields import specs_of
    from trntui.core.inventory import ModelInfo

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await focus_field(pilot, app, "model", "parameters_billion")
        await type_into(pilot, "13")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+z")
        await settle(pilot)
        shown = [str(n.message) for n in app._notifications]
        label = specs_of(ModelInfo)["parameters_billion"].label
        assert shown[-1] == f"Undid: {ModelInfo.TITLE} > {label}", shown


async def test_a_notification_hides_neither_the_estimate_bar_nor_the_status_line(
    sample_project: Project,
) -> None:
    from textual.widgets._toast import Toast

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.notify("Deleted 'x'. Press ctrl+z to undo.", title="Deleted")
        await wait_until(pilot, lambda: app.screen.query(Toast), "the toast shows")
        toast = app.screen.query(Toast).first()
        bottom = min(app.screen.query_one(name).region.y for name in ("EstimateBar", "StatusLine"))
        assert toast.region.height > 0
        assert toast.region.bottom <= bottom, (toast.region, bottom)
        assert toast.region.y >= 1, "the header stays readable"


async def test_a_long_value_reads_from_its_start_once_the_field_is_left(
    sample_project: Project,
) -> None:
    """Typing at the end of a long value scrolls the field; leaving it (tab) shows the start
    again, in the inventory and in a dialog's form."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        field = await focus_field(pilot, app, "model", "name")
        assert len(field.value) > field.content_region.width, "the sample's name is long"
        await pilot.press("end")
        await settle(pilot)
        assert field.scroll_x > 0, "while typing at the end the field shows the end"
        await pilot.press("tab")
        await settle(pilot)
        assert app.focused is not field
        assert (field.cursor_position, field.scroll_x) == (0, 0)
        await open_section(pilot, "targets")
        await pilot.press("enter")  # the table has focus: edit the first target
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        notes = form.query_one("#field-notes", Input)
        notes.value = "a long note " * 10
        notes.focus()
        await pilot.press("end")
        await settle(pilot)
        assert notes.scroll_x > 0
        await pilot.press("shift+tab")
        await settle(pilot)
        assert (notes.cursor_position, notes.scroll_x) == (0, 0)


async def test_the_first_frame_builds_only_what_it_shows(sample_project: Project) -> None:
    """At start the Inventory builds the Project form alone (no other form, list or checks,
    no error lines); a list is built, filled, when first shown, and a field's error line when
    it first has an error."""
    from trntui.ui.screens.inventory import ChecksPane, ItemTable

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert [form.id for form in screen.query(FieldForm)] == ["form-project"]
        assert not screen.query(ItemTable) and not screen.query(ChecksPane)
        assert not screen.query(".field-error")
        await open_section(pilot, "targets")
        table = screen.query_one("#section-targets DataTable", DataTable)
        assert table.row_count == len(app.session.inventory.targets) > 0
        field = await focus_field(pilot, app, "model", "parameters_billion")
        row = screen.query_one("#section-model #row-parameters_billion", FieldRow)
        await type_into(pilot, "lots")
        await settle(pilot)
        assert row.error is not None and row.has_class("-invalid")
        assert screen.query_one("#section-model .field-error").display
        await type_into(pilot, "70")
        await settle(pilot)
        assert row.error is None and not row.has_class("-invalid")
        assert field.value == "70"


def burst(app: TrnTuiApp, *keys: str) -> None:
    """Send ``keys`` in one go, as a fast typist or a laggy SSH link delivers them: none is
    handled before the next arrives (``pilot.press`` waits for each)."""
    from textual import events

    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app.post_message(event)


async def test_ctrl_s_in_a_burst_keeps_what_the_field_shows(sample_dir: Path) -> None:
    """ctrl+s (a priority binding) ran ahead of the keys typed just before it and kept the
    target's name from a few characters back (a review saw "B" stored)."""
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, "targets")
            table = app.screen.query_one("#section-targets DataTable", DataTable)
            table.move_cursor(row=0)
            await pilot.press("e")
            await settle(pilot)
            assert isinstance(app.screen, ItemFormScreen)
            app.screen.query_one("#field-name", Input).focus()
            await settle(pilot)
            name = "Trainium3 trial burst"
            burst(app, "end", "ctrl+u", *name, "ctrl+s")
            await wait_until(pilot, lambda: not isinstance(app.screen, ItemFormScreen), "kept")
            await settle(pilot)
            assert target_names(sample_dir)[0] == name


async def test_quitting_in_a_burst_after_fixing_a_field_does_not_list_the_fixed_error(
    sample_dir: Path,
) -> None:
    """Work to finish 0 (refused), then 'backspace 6 1 4 4 ctrl+q' in one burst: the quit
    dialog listed the error already fixed, while 6144 had been saved."""
    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await focus_field(pilot, app, "goal", "work_amount")
            await type_into(pilot, "0")
            await settle(pilot)
            assert app.session.invalid, "0 is refused"
            burst(app, "backspace", "6", "1", "4", "4", "ctrl+q")
            for _ in range(100):
                await pilot.pause(0.05)
                if not app.is_running or isinstance(app.screen, ConfirmScreen):
                    break
            question = app.screen.question if isinstance(app.screen, ConfirmScreen) else ""
            assert not app.is_running, f"asked instead of quitting: {question}"
    assert read_inventory(sample_dir).inventory.goal.work_amount == 6144


async def test_controls_pasted_into_a_field_are_never_stored(sample_dir: Path) -> None:
    """Issue 30, item 3: a paste holding an OSC sequence, C0/C1 controls and a right-to-left
    override is kept as the text around them (a line break as a space); the multi-line paste
    keeps every line and says so."""
    from textual import events

    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            field = await focus_field(pilot, app, "project", "owner")
            await pilot.press("home", "ctrl+k")
            field.post_message(events.Paste("ml\x1b]52;c;UFdORUQ=\x07 \u202eteam\x9b\nplatform"))
            await settle(pilot)
            assert field.value == "ml]52;c;UFdORUQ= team platform"
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: read_inventory(sample_dir).inventory.project.owner == field.value,
                "the pasted owner saved",
            )
            assert any("Pasted 2 lines as one" in str(n.message) for n in app._notifications)
    stored = (sample_dir / "trntui.toml").read_text()
    assert "\\u001b" not in stored and "\\u202e" not in stored and "\\u009b" not in stored


async def test_reload_takes_the_lock_the_holder_has_given_up(sample_dir: Path) -> None:
    """Issue 30, item 15: an app started while a CLI write held the lock stayed read-only
    all session, and ctrl+r did not try again. Now ctrl+r takes the free lock, the header and
    the fields say so, and an edit is saved."""
    first = Project.open(sample_dir)
    second = Project.open(sample_dir, allow_read_only=True)
    try:
        app = TrnTuiApp(second)
        async with app.run_test(size=SIZE) as pilot:
            await open_section(pilot, "model")  # its fields drawn read-only
            from trntui.ui.widgets.area_bar import AreaBar

            assert "[read-only] " in app.screen.query_one(AreaBar).render().plain
            await pilot.press("escape", "ctrl+r")
            await settle(pilot)
            assert app.session.read_only and "still read-only" in app.status[0]
            first.close()
            await pilot.press("ctrl+r")
            await settle(pilot)
            assert not app.session.read_only
            assert "editing now" in app.status[0]
            assert not app.sub_title.startswith("[read-only]")
            from trntui.ui.widgets.area_bar import AreaBar

            assert "[read-only]" not in app.screen.query_one(AreaBar).render().plain
            field = await focus_field(pilot, app, "model", "parameters_billion")
            assert not field.disabled
            await type_into(pilot, "13")
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: read_inventory(sample_dir).inventory.model.parameters_billion == 13.0,
                "the edit saved",
            )
    finally:
        first.close()
        second.close()


def test_checks_send_the_launch_time_to_the_field_that_sets_it() -> None:
    """Logs without a job wrapper's clock (the sample's Trainium3 trial, the v5.0 B200 logs)
    leave "Launch + teardown outside logs" unknown. Checks sent it to "(runs: Runs, 2)", where
    nothing sets it: the way forward is Inventory > Software stack, "Launch outside logs"."""
    from trntui.ui.screens.inventory import missing_by_place

    text = missing_by_place(["Launch + teardown outside logs", "Useful throughput"])
    assert text == (
        "Launch + teardown outside logs (Inventory > Software stack: Launch outside logs); "
        "Useful throughput (runs: Runs, 2)"
    )


async def test_every_unit_of_the_target_form_shows_whole_at_80x24(
    sample_project: Project,
) -> None:
    """The New target form at 80x24 showed the spot interruptions' unit as "per": the unit
    column held 13 cells and "per instance-day" wrapped onto a line the row does not have."""
    from textual.widgets import Label

    from trntui.core.fields import specs_of
    from trntui.core.inventory import TrainingTarget

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_new_target_form(pilot)
        units = [spec.unit for spec in specs_of(TrainingTarget).values() if spec.unit]
        assert "per instance-day" in units
        labels = {str(label.content): label for label in form.query(".field-unit").results(Label)}
        for unit in units:
            label = labels[unit]
            assert label.content_region.width >= len(unit), (unit, label.content_region)
