"""The live estimate and the Scenarios screen, driven by keys on a copy of the sample project.

Expected figures are never copied from the code under test: a change is checked against the
rule it follows (data moved between zones is charged in both directions at the quoted rate;
a faster throughput cannot cost more), or against another reading of the same screen.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, Static, TabbedContent

from tests import SIZE
from tests.ui_support import open_section, settle, wait_until
from trntui.core.estimate import Override
from trntui.core.inventory import TrainingTarget
from trntui.core.quotes import SideService
from trntui.core.report import analyze
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import Project
from trntui.store.quotes import load_quote_book
from trntui.store.scenarios import list_scenarios, load_scenario, save_scenario
from trntui.store.working_scenario import load_working_scenario
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.scenarios import DiffScreen, OverrideScreen, ScenariosScreen
from trntui.ui.widgets.estimate_bar import EstimateBar, estimate_line
from trntui.ui.widgets.tornado import TornadoChart

MONEY = re.compile(r"\$([0-9,]+\.[0-9]{2})")

pytestmark = pytest.mark.usefixtures("instant_saves")


def trainium_target(project: Project) -> TrainingTarget:
    return next(t for t in project.inventory.targets if t.accelerator_family == "Trainium3")


def plain(renderable: object) -> str:
    console = Console(width=78, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def bar_text(app: TrnTuiApp) -> str:
    """The estimate bar of the screen on top, or of the screen under a modal form."""
    for screen in reversed(app.screen_stack):
        bars = screen.query(EstimateBar)
        if bars:
            return str(bars.first().content)
    raise AssertionError("no estimate bar on screen")


def totals_in(text: str, names: list[str]) -> dict[str, float]:
    """The dollar figure printed right after each target's name."""
    found = {}
    for name in names:
        match = re.search(re.escape(name) + r" \$([0-9,]+\.[0-9]{2})", text)
        assert match, f"no total for {name!r} in {text!r}"
        found[name] = float(match.group(1).replace(",", ""))
    return found


async def open_tab(pilot, tab: str, *, by_key: bool = False) -> None:
    """Show a tab of the Scenarios screen: with the ] key only (``by_key``), or directly (each
    tab on the way costs about 0.5 s, and only the tornado snapshot is about the ] key)."""
    await pilot.press("4")
    await settle(pilot)
    tabs = pilot.app.screen.query_one(TabbedContent)
    if not by_key:
        tabs.active = tab
        await settle(pilot)
        assert tabs.active == tab
        return
    for _ in range(5):
        if tabs.active == tab:
            return
        await pilot.press("right_square_bracket")
        await settle(pilot)
    raise AssertionError(f"tab {tab!r} not reached with ]")


async def open_override_form(pilot, app: TrnTuiApp, target: str) -> OverrideScreen:
    """The override form, opened as a user does: Inputs tab, the target's throughput row, a."""
    await open_tab(pilot, "inputs-tab")
    table = app.screen.query_one("#inputs", DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(f"{target}\tsteady_throughput"))
    await pilot.press("a")
    await settle(pilot)
    form = app.screen
    assert isinstance(form, OverrideScreen)
    return form


async def set_data_moved(pilot, app: TrnTuiApp, value: float) -> None:
    await pilot.press("1")
    await settle(pilot)
    await open_section(pilot, "side_costs")
    field = app.screen.query_one("#section-side_costs #field-data_moved_gb", Input)
    field.focus()
    await pilot.press("home", "ctrl+k", *f"{value:g}", "enter")
    await wait_until(
        pilot, lambda: app.session.inventory.side_costs.data_moved_gb == value, "the edit applied"
    )
    await settle(pilot)  # and the recompute it started has finished (a loaded machine is slow)


async def test_editing_data_moved_updates_the_bar_and_the_scenarios_screen(
    sample_project: Project,
) -> None:
    inventory = sample_project.inventory
    names = [t.name for t in inventory.targets]
    book = load_quote_book(sample_project.root)
    before_gb = inventory.side_costs.data_moved_gb or 0.0
    added_gb = 250.0
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = totals_in(bar_text(app), names)
        await set_data_moved(pilot, app, before_gb + added_gb)
        assert app.session.inventory.side_costs.data_moved_gb == before_gb + added_gb
        after = totals_in(bar_text(app), names)
        for target in inventory.targets:
            rate = book.rate(SideService.INTER_AZ_TRANSFER, target.region)
            assert rate is not None
            # Inter-AZ transfer is billed on both sides of the crossing (AWS, per direction).
            expected = added_gb * 2 * rate.first_tier_usd_per_unit
            assert after[target.name] - before[target.name] == pytest.approx(expected, abs=0.011)
        await pilot.press("escape", "4")
        await settle(pilot)
        assert isinstance(app.screen, ScenariosScreen)
        table = plain(app.screen.query_one("#estimate-table", Static).content)
        total_row = next(line for line in table.splitlines() if line.strip().startswith("Total"))
        shown = [float(m.replace(",", "")) for m in MONEY.findall(total_row)]
        assert shown == [after[name] for name in names]
        assert totals_in(bar_text(app), names) == after


async def test_invalid_override_shows_its_error_and_keeps_the_last_estimate(
    sample_project: Project,
) -> None:
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "inputs-tab")
        table = app.screen.query_one("#inputs", DataTable)
        row = table.get_row_index(f"{trainium.name}\tsteady_throughput")
        table.focus()
        table.move_cursor(row=row)
        before_bar = bar_text(app)
        before = app.analysis
        await pilot.press("a")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, OverrideScreen)
        form.query_one("#value", Input).value = "-5"
        form.query_one("#why", Input).value = "what if"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form, "an invalid value must keep the form open"
        assert "must be above 0" in str(form.query_one("#error", Static).content)
        assert app.session.overrides == ()
        assert app.analysis is before
        assert bar_text(app) == before_bar

        observed = before.estimate.target(trainium.name).input("steady_throughput").value
        form.query_one("#value", Input).value = f"{observed * 2:g}"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ScenariosScreen)
        assert [o.input for o in app.session.overrides] == ["steady_throughput"]
        old = before.estimate.target(trainium.name).total_usd
        new = app.analysis.estimate.target(trainium.name).total_usd
        assert new < old, "twice the useful throughput cannot cost more"
        assert "1 override" in bar_text(app)
        assert app.status[0].startswith("Override: Useful throughput")

        await pilot.press("x")
        await settle(pilot)
        assert app.session.overrides == ()
        assert app.analysis.estimate.target(trainium.name).total_usd == pytest.approx(old)
        assert app.status[0].startswith("Dropped the override of")
        assert app.status[0].endswith("no override in the working scenario"), "none in force"
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert [o.input for o in app.session.overrides] == ["steady_throughput"]
        assert app.analysis.estimate.target(trainium.name).total_usd == pytest.approx(new)
        undid = f"Undid: dropping the Useful throughput override on {trainium.name} ("
        assert app.status[0].startswith(undid), app.status[0]
        assert app.status[0].endswith("(now 1 override in the working scenario)")


async def test_save_a_snapshot_reopen_it_and_see_it_go_stale(sample_project: Project) -> None:
    names = [t.name for t in sample_project.inventory.targets]
    already = {info.name for info in list_scenarios(sample_project.root)}
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        saved_totals = totals_in(bar_text(app), names)
        await open_tab(pilot, "snapshots-tab")
        await pilot.press("s")
        await settle(pilot)
        form = app.screen
        form.query_one("#name", Input).value = "base-line"
        form.query_one("#note", Input).value = "as measured"
        form.query_one("#note", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not form, "enter in the form saves and closes it"
        assert {info.name for info in list_scenarios(sample_project.root)} == already | {
            "base-line"
        }
        stored = load_scenario(sample_project.root, "base-line")
        assert stored.note == "as measured"
        assert {n: round(t, 2) for n, t in stored.saved_totals.items()} == saved_totals

        table = app.screen.query_one("#snapshots", DataTable)
        assert table.row_count == len(already) + 1
        table.move_cursor(row=table.get_row_index("base-line"))
        await pilot.press("o")
        await settle(pilot)
        body = str(app.screen.query_one("#snapshot-body", Static).content)
        assert "base-line" in body and "as measured" in body
        assert "STALE" not in body

        inventory = app.session.inventory
        side = dataclasses.replace(
            inventory.side_costs, data_moved_gb=(inventory.side_costs.data_moved_gb or 0) + 100
        )
        app.session.edit_inventory(dataclasses.replace(inventory, side_costs=side), label="test")
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        body = str(app.screen.query_one("#snapshot-body", Static).content)
        assert "STALE" in body
        assert "Data moved" in body

        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        console = Console(width=76, record=True, color_system=None)
        console.print(app.screen.query_one("#diff", Static).content)
        items = {line.strip() for line in console.export_text().splitlines()}
        assert {"Data moved between zones", "Data transfer", "Total"} <= items


def test_scenarios_screen_snapshot_with_the_tornado_chart(
    sample_project: Project, snap_compare
) -> None:
    async def show_tornado(pilot) -> None:
        await settle(pilot)
        await open_tab(pilot, "sensitivity", by_key=True)
        assert pilot.app.screen.query_one(TornadoChart)._sensitivity.bars

    assert snap_compare(TrnTuiApp(sample_project), terminal_size=SIZE, run_before=show_tornado)


async def test_deleting_a_quote_makes_that_target_incomplete_until_undone(
    sample_project: Project,
) -> None:
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = bar_text(app)
        assert f"{trainium.name} $" in before
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#quotes", DataTable)
        row = next(
            i for i in range(table.row_count) if table.get_row_at(i)[0] == trainium.instance_type
        )
        table.focus()
        table.move_cursor(row=row)
        await pilot.press("d")
        await settle(pilot)
        assert f"{trainium.name} incomplete" in bar_text(app)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert bar_text(app) == before


async def test_a_failed_recompute_keeps_the_last_estimate_and_says_why(
    sample_project: Project,
) -> None:
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    app.save_delay_s = 3600.0  # the status must show the failure before the save replaces it
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        price = app.analysis.estimate.target(trainium.name).input("usd_per_hour").value
        override = Override("usd_per_hour", price * 2, trainium.name, who="t", why="test")
        assert app.session.set_overrides([override], label="test") is None
        await settle(pilot)
        shown = app.analysis
        renamed = [
            dataclasses.replace(t, name="renamed") if t.name == trainium.name else t
            for t in app.session.inventory.targets
        ]
        assert (
            app.session.edit_inventory(
                dataclasses.replace(app.session.inventory, targets=tuple(renamed)), label="rename"
            )
            is None
        )
        await settle(pilot)
        assert app.analysis is shown, "the last valid estimate stays on screen"
        message, level = app.status
        assert level == "error" and trainium.name in message
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.status[0].startswith("Saved"), app.status
        assert bar_text(app).startswith("not updated"), "the bar keeps saying so after saving"
        await pilot.press("4")
        await settle(pilot)
        notice = str(app.screen.query_one("#estimate-problem", Static).content)
        assert trainium.name in notice
        last_total = shown.estimate.target(trainium.name).total_usd
        table = plain(app.screen.query_one("#estimate-table", Static).content)
        assert f"${last_total:,.2f}" in table


async def test_overrides_are_the_working_scenario_and_survive_quit_and_restart(
    sample_project: Project,
) -> None:
    """Issue 26, item 4: an override set in the form is kept in the project (no question at
    ctrl+q, nothing lost), and the next start shows it as the working scenario."""
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_override_form(pilot, app, trainium.name)
        form.query_one("#value", Input).value = "3"
        form.query_one("#why", Input).value = "the recipe's target"
        form.query_one("#who", Input).value = "ana"
        await pilot.press("ctrl+s")
        await settle(pilot)
        (override,) = app.session.overrides
        total = app.analysis.estimate.target(trainium.name).total_usd
        assert load_working_scenario(sample_project.root) == (override,), "saved at once"
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert not app.is_running, "nothing would be lost: quit at once"
    again = TrnTuiApp(sample_project)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.session.overrides == (override,)
        assert again.analysis.estimate.target(trainium.name).total_usd == total
        assert "1 override" in bar_text(again)
        wide = estimate_line(again.analysis, width=120, example=True, lines=2)
        assert "working scenario: 1 override" in wide.plain, "named where there is room"
        await open_tab(pilot, "inputs-tab")
        detail = str(again.screen.query_one("#input-detail", Static).content)
        assert "Working scenario: 1 override, kept in the project; a adds an override" in detail
        await pilot.press("x")  # the highlighted row is not overridden: the first row is
        table = again.screen.query_one("#inputs", DataTable)
        table.move_cursor(row=table.get_row_index(f"{trainium.name}\tsteady_throughput"))
        await pilot.press("x")
        await settle(pilot)
        assert again.session.overrides == () and load_working_scenario(sample_project.root) == ()
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert load_working_scenario(sample_project.root) == (override,), "the undo is saved"


async def test_u_on_a_listed_snapshot_makes_its_overrides_the_working_scenario(
    sample_project: Project,
) -> None:
    """Issue 26, item 4: u silently did nothing before o; now it takes the highlighted
    snapshot's overrides, saved as the working scenario, and ctrl+z takes them back."""
    trainium = trainium_target(sample_project)
    faster = Override("steady_throughput", 3.0, trainium.name, who="ana", why="the target")
    context = derive_and_store_context(sample_project.root, sample_project.inventory)
    save_scenario(sample_project.root, "faster", context, (faster,), note="what if")
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "snapshots-tab")
        table = app.screen.query_one("#snapshots", DataTable)
        table.focus()
        table.move_cursor(row=table.get_row_index("faster"))
        await settle(pilot)
        assert app.screen.opened is None, "not opened: only highlighted"
        await pilot.press("u")
        await settle(pilot)
        assert app.session.overrides == (faster,)
        assert load_working_scenario(sample_project.root) == (faster,)
        assert "Working scenario" in app.status[0] and "'faster'" in app.status[0]
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.session.overrides == () and load_working_scenario(sample_project.root) == ()


async def test_the_bar_keeps_every_total_and_the_ratio_at_80_columns(
    sample_project: Project,
) -> None:
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        price = app.analysis.estimate.target(trainium.name).input("usd_per_hour").value
        faster = Override("usd_per_hour", price * 0.9, trainium.name, who="t", why="x")
        assert app.session.set_overrides([faster], label="test") is None
        await settle(pilot)
        full = estimate_line(app.analysis)
        assert full.cell_len > 78, "the case must need shortening"
        fitted = estimate_line(app.analysis, width=78)
        assert fitted.cell_len <= 78
        shown = fitted.plain
        ratio = app.analysis.comparison.cost_ratio
        assert ratio is not None and f"Trn3/GPU {ratio:.2f}" in shown
        for target in app.analysis.estimate.targets:
            assert target.headline() in shown
        on_screen = bar_text(app).splitlines()
        assert all(len(line) <= 78 for line in on_screen)
        assert estimate_line(app.analysis, width=78, example=True, lines=3).plain == "\n".join(
            on_screen
        )


def test_the_bar_fits_with_a_recompute_problem_and_no_prices(sample_project: Project) -> None:
    """The bar's text alone (the app computes its estimate the same way): no screen needed."""
    analysis = analyze(derive_and_store_context(sample_project.root, sample_project.inventory))
    fitted = estimate_line(analysis, problem="a recompute failed", width=78)
    assert fitted.cell_len <= 78
    ratio = analysis.comparison.cost_ratio
    assert ratio is not None and f"Trn3/GPU {ratio:.2f}" in fitted.plain
    assert fitted.plain.startswith("not updated")


def test_the_bar_gives_each_band_with_its_n_and_method(sample_project: Project) -> None:
    analysis = analyze(derive_and_store_context(sample_project.root, sample_project.inventory))
    shown = estimate_line(analysis, width=78, example=True, lines=3).plain
    assert len(shown.splitlines()) == 2, "a shorter band rather than a third line"
    for band in analysis.bands:
        low, high = round(band.p10_usd), round(band.p90_usd)
        assert f"(P10-90 ${low}-${high} t n={band.runs})" in shown
    wide = estimate_line(analysis, width=200, example=True, lines=3).plain
    assert all(band.text().split(" (")[0] in wide for band in analysis.bands)


async def test_a_screen_key_remapped_in_keymap_toml_is_the_one_that_works(
    sample_project: Project, tmp_path, monkeypatch
) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('"scenarios.save" = "f9"\n"screen.prices" = "f3"\n', encoding="utf-8")
    monkeypatch.setattr("trntui.ui.keys.keymap_path", lambda: keymap)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "snapshots-tab")
        screen = app.screen
        await pilot.press("s")
        await settle(pilot)
        assert app.screen is screen, "the old key no longer saves"
        await pilot.press("f9")
        await settle(pilot)
        assert app.screen is not screen and app.screen.query_one("#name", Input)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        assert type(app.screen).__name__ == "PricesScreen"


def test_every_binding_has_an_id_a_keymap_can_name(tmp_path) -> None:
    from trntui.ui.keys import declared_bindings, load_user_keymap

    declared = declared_bindings()
    assert len(declared) > 30
    assert [b.key for b in declared if not b.id] == []
    ids = {b.id for b in declared}
    assert {"scenarios.save", "runs.import", "confirm.yes", "screen.runs"} - ids == {"screen.runs"}
    keymap = tmp_path / "keymap.toml"
    keymap.write_text("".join(f'"{i}" = "f12"\n' for i in [*ids, "screen.runs", "no.such"]))
    loaded, warning = load_user_keymap(keymap)
    assert set(loaded) == ids | {"screen.runs"}
    assert warning is not None and "no.such" in warning


async def test_four_targets_keep_every_total_the_ratio_and_what_is_missing_at_80x24(
    sample_project: Project,
) -> None:
    inventory = sample_project.inventory
    trainium = trainium_target(sample_project)
    gpu = next(t for t in inventory.targets if t is not trainium)
    more = (
        dataclasses.replace(trainium, name="Trainium3 x2 reserved capacity", instance_count=2),
        dataclasses.replace(gpu, name="GPU baseline in another region", region="eu-north-1"),
    )
    sample_project.save_inventory(
        dataclasses.replace(inventory, targets=(*inventory.targets, *more))
    )
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        bar = app.screen.query_one(EstimateBar)
        lines = str(bar.content).splitlines()
        assert len(lines) in (2, 3) and bar.size.height == len(lines)
        assert all(len(line) <= SIZE[0] - 2 for line in lines)
        shown = " ".join(lines)
        assert shown.startswith("EXAMPLE · "), "example data is marked where its numbers are"
        estimates = app.analysis.estimate.targets
        assert len(estimates) == 4
        for target in estimates:
            if target.complete:
                assert target.headline() in shown
            else:
                assert f"incomplete: {target.incomplete_inputs[0]}" in shown
        # No run measured 2 Trainium3 instances; no price is quoted in eu-north-1.
        assert [t.complete for t in estimates] == [True, True, False, False]
        ratio = app.analysis.comparison.cost_ratio
        assert ratio is not None and f"Trn3/GPU {ratio:.2f}" in shown


def test_the_estimate_table_shows_every_figure_whole_and_uses_the_width_it_has(
    sample_project: Project,
) -> None:
    from trntui.core.format import usd
    from trntui.ui.screens.scenarios import EstimateTable

    inventory = sample_project.inventory
    trainium = trainium_target(sample_project)
    copies = tuple(
        dataclasses.replace(t, name=f"{t.name} copy {n}") for n in (1,) for t in inventory.targets
    )
    context = derive_and_store_context(
        sample_project.root,
        dataclasses.replace(inventory, targets=(*inventory.targets, *copies)),
    )
    result = analyze(context).estimate
    assert len(result.targets) == 4

    def shown(width: int) -> str:
        console = Console(width=width, record=True, color_system=None)
        console.print(EstimateTable(result))
        return console.export_text()

    narrow, wide = shown(78), shown(118)
    assert all(len(line.rstrip()) <= 78 for line in narrow.splitlines())
    for text in (narrow, wide):
        for item in result.targets:
            assert usd(item.total_usd) in text
            for stage in item.stages:
                assert usd(stage.usd) in text
    stage = result.target(trainium.name).stages[0]
    hours_and_cost = f"{stage.instance_hours:,.3g} h {usd(stage.usd)}"
    assert hours_and_cost in wide, "with room, each stage shows its hours and its cost"
    assert hours_and_cost not in narrow, "without, the cost (hours are in their own row)"
    lines = narrow.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith("Instances"))
    last = next(i for i, line in enumerate(lines) if line.strip().startswith("Per "))
    figures = lines[first : last + 1]
    assert "…" not in "".join(line[30:] for line in figures), "no figure is cut"


async def test_at_120x40_the_extra_width_shows_more_of_the_estimate(
    sample_project: Project,
) -> None:
    inventory = sample_project.inventory
    copies = tuple(dataclasses.replace(t, name=f"{t.name} copy") for t in inventory.targets)
    sample_project.save_inventory(
        dataclasses.replace(inventory, targets=(*inventory.targets, *copies))
    )

    async def estimate_tab(size: tuple[int, int]) -> tuple[int, str]:
        app = TrnTuiApp(sample_project)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await open_tab(pilot, "estimate")
            bar_lines = app.screen.query_one(EstimateBar).size.height
            table = app.screen.query_one("#estimate-table", Static)
            width = table.content_region.width
            console = Console(width=width, record=True, color_system=None)
            console.print(table.content)
            return bar_lines, console.export_text()

    small_bar, small = await estimate_tab(SIZE)
    wide_bar, wide = await estimate_tab((120, 40))
    assert wide_bar < small_bar, "the bar takes fewer lines when it has the width"
    stage_cell = re.compile(r"\d h \$\d")
    assert stage_cell.search(wide), "with the width, stages show hours and cost"
    assert not stage_cell.search(small), "at 80 columns, four targets show the cost only"


async def test_a_damaged_snapshot_is_listed_with_its_problem_not_a_crash(
    sample_project: Project,
) -> None:
    """A hand edit that made saved_at text ended the app with a traceback when Snapshots
    opened; now the snapshot is listed as unreadable, with the file and line, and opening it
    says why."""
    path = sample_project.root / "scenarios" / "as-measured.toml"
    text = path.read_text()
    path.write_text(re.sub(r"(?m)^saved_at = .*$", 'saved_at = "whenever"', text))
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "snapshots-tab")
        table = app.screen.query_one("#snapshots", DataTable)
        row = table.get_row("as-measured")
        assert "unreadable" in str(row[-1])
        table.move_cursor(row=table.get_row_index("as-measured"))
        await pilot.press("o")
        await settle(pilot)
        assert app.is_running
        status = app.status[0]
        assert "as-measured.toml" in status and "saved_at" in status


async def test_choosing_another_target_in_the_override_form_starts_it_empty(
    sample_project: Project,
) -> None:
    """Issue 26, item 7: the form carried the value and reason typed for one target into a
    newly chosen one (one ctrl+s gave Trainium3 the GPU's figure), and took an empty Who as
    "unnamed"."""
    from textual.widgets import Select

    trainium = trainium_target(sample_project)
    gpu = next(t for t in sample_project.inventory.targets if t is not trainium)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_override_form(pilot, app, gpu.name)
        form.query_one("#value", Input).value = "4.5"
        form.query_one("#why", Input).value = "what the GPU vendor quoted"
        form.query_one("#target", Select).value = trainium.name
        await settle(pilot)
        assert form.query_one("#value", Input).value == ""
        assert form.query_one("#why", Input).value == ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form and app.session.overrides == ()
        form.query_one("#value", Input).value = "3"
        form.query_one("#why", Input).value = "the Trainium3 recipe's target"
        form.query_one("#who", Input).value = ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form and app.session.overrides == ()
        assert "say who states it" in str(form.query_one("#error", Static).content)
        form.query_one("#who", Input).value = "ana"
        await pilot.press("ctrl+s")
        await settle(pilot)
        (override,) = app.session.overrides
        assert (override.target, override.value, override.who) == (trainium.name, 3.0, "ana")


async def test_the_comparison_gives_the_cost_per_unit_of_the_goal(sample_project: Project) -> None:
    """Trn3 vs GPU printed "$0.0069/unit" while the goal's unit is samples (the Estimate tab
    already said "Per sample"): a value without its unit."""
    assert sample_project.inventory.goal.work_unit == "samples"
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "compare")
        body = str(app.screen.query_one("#compare-body", Static).content)
        costs = [line for line in body.splitlines() if re.search(r": \$[0-9,.]+, \$", line)]
        assert len(costs) == 2, body
        assert all(re.search(r"\$[0-9.]+/sample\b", line) for line in costs), costs


async def test_the_comparison_names_the_targets_it_leaves_out(sample_project: Project) -> None:
    """With a third target (a p6-b200 beside the p5 baseline), Trn3 vs GPU compared Trainium3
    with the first GPU target only and said nothing of the other: a user took the B200 for
    compared, or looked for it."""
    b200 = TrainingTarget(name="B200 p6", instance_type="p6-b200.48xlarge", region="us-east-1")
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        inventory = app.session.inventory
        grown = dataclasses.replace(inventory, targets=(*inventory.targets, b200))
        assert app.session.edit_inventory(grown, label="add target") is None
        await open_tab(pilot, "compare")
        await wait_until(
            pilot,
            lambda: "B200 p6" in str(app.screen.query_one("#compare-body", Static).content),
            "the B200 target named on Trn3 vs GPU",
        )
        body = str(app.screen.query_one("#compare-body", Static).content)
        assert "Not compared here: B200 p6" in body, body


async def test_a_different_work_to_finish_is_not_comparable_on_the_tab_and_the_bar(
    sample_project: Project,
) -> None:
    """A user review: Trainium3's work overridden to 6,000 samples, the GPU's the goal's 3,072,
    and Trn3 vs GPU, headed "the same quality result", gave a ratio of 1.12 and "Trainium3
    saves nothing per training"; the bar showed "Trn3/GPU 1.12". Nothing warned."""
    goal = sample_project.inventory.goal
    assert (goal.work_amount, goal.work_unit) == (3072.0, "samples")
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Trn3/GPU" in bar_text(app), "the sample as it is has a ratio"
        longer = Override("work_amount", 6000.0, trainium.name, who="ana", why="longer")
        assert app.session.set_overrides([longer], label="test") is None
        await open_tab(pilot, "compare")
        await wait_until(
            pilot,
            lambda: (
                "work to finish differs"
                in str(app.screen.query_one("#compare-body", Static).content)
            ),
            "the comparison recomputed with the override",
        )
        body = " ".join(str(app.screen.query_one("#compare-body", Static).content).split())
        assert "Cost to reach the same quality result" not in body
        assert "Cost of each result, side by side (no ratio: see why below)" in body
        assert "Trainium3 / GPU:" not in body and "saves nothing per training" not in body
        assert (
            f"work to finish differs: {trainium.name} 6,000 samples (an override by ana), "
            "GPU baseline (1 x p5.48xlarge) 3,072 samples (the inventory goal" in body
        )
        assert "Break-even throughput: not computed" in body
        shown = bar_text(app)
        assert "ratio n/a" in shown and "Trn3/GPU" not in shown
        wide = estimate_line(app.analysis, width=200, example=True).plain
        assert "ratio n/a (work to finish differs)" in wide


def test_a_snapshot_comparison_shows_labels_and_reasons_whole_and_every_unit() -> None:
    """At 80 columns the comparison's table cut ``Trainium3 tr``, ``Checkpoint saves not in
    th`` next to ``90  175.8`` (no unit), and an override's reason."""
    from trntui.store.scenarios import OVERRIDE, DiffRow
    from trntui.ui.screens.scenarios.rendering import diff_table

    target = "Trainium3 trial (1 x trn3.48xlarge)"
    reason = "sample project: if BF16 attention (migration risk 1) costs about 12 % of throughput"
    rows = (
        DiffRow(target, OVERRIDE + "Useful throughput", None, 2.3, "", reason, a_absent=True),
        DiffRow(target, "Checkpoint saves not in the logs", 90.0, 175.8, "assumed", "measured"),
        DiffRow(target, "total_usd", 28.21, 30.47),
    )
    console = Console(width=76, record=True, color_system=None)
    console.print(diff_table(rows, "samples"))
    text = console.export_text()
    assert all(len(line) <= 76 for line in text.splitlines())
    lines = [line.strip() for line in text.splitlines()]
    assert target in lines
    assert "Checkpoint saves not in the logs" in lines
    flat = " ".join(text.split())
    assert "90 s -> 175.8 s +85.8 s +95.3%" in flat, text
    assert "absent -> 2.3 samples/s" in flat, text
    assert f"B: {reason}" in flat, text
    assert "A: assumed" in flat and "B: measured" in flat, text
    assert "$28.21 -> $30.47 +$2.26 +8.0%" in flat, text


async def test_the_sample_snapshots_compare_readably_at_80x24(sample_project: Project) -> None:
    """``4``, Snapshots, ``m`` on as-measured, down, ``c``: the target, the override's label
    and its reason whole, the throughput with its unit."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "snapshots-tab")
        await pilot.press("m", "down", "c")
        await settle(pilot)
        assert isinstance(app.screen, DiffScreen)
        screen = [strip.text for strip in app.screen._compositor.render_strips()]
        flat = " ".join(" ".join(line.strip(" │") for line in screen).split())
        assert "Trainium3 trial override: Useful throughput" in flat, "\n".join(screen)
        assert "absent -> 2.3 samples/s" in flat, "\n".join(screen)
        assert "costs about 12 % of throughput" in flat, "\n".join(screen)


def error_line(form) -> str:
    return str(form.query_one(".error", Static).render())


async def test_the_snapshot_forms_error_follows_the_name_as_it_is_typed(
    sample_project: Project,
) -> None:
    """ "Not saved: '' is not a usable scenario name" stayed while a name was typed; a taken
    name's warning stayed once another was typed."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tab(pilot, "snapshots-tab")
        await pilot.press("s")
        await settle(pilot)
        form = app.screen
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert error_line(form) == "Not saved: a name is required"
        await pilot.press("/")
        await settle(pilot)
        assert "'/' is not a usable scenario name" in error_line(form), "checked again as typed"
        await pilot.press("backspace", "n", "e", "w")
        await settle(pilot)
        assert error_line(form) == ""
        form.query_one("#name", Input).value = "as-measured"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "'as-measured' exists" in error_line(form)
        await pilot.press("end", "2")
        await settle(pilot)
        assert error_line(form) == "", "as-measured2 is free"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is not form
        assert "as-measured2" in {info.name for info in list_scenarios(sample_project.root)}


async def test_the_override_forms_error_follows_what_is_typed(sample_project: Project) -> None:
    trainium = trainium_target(sample_project)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_override_form(pilot, app, trainium.name)
        form.query_one("#value", Input).value = ""
        form.query_one("#why", Input).value = ""
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "give a value" in error_line(form)
        form.query_one("#value", Input).focus()
        await pilot.press("3")
        await settle(pilot)
        assert "say who states it and why" in error_line(form), "the next thing missing"
        form.query_one("#why", Input).value = "the recipe's target"
        await settle(pilot)
        assert error_line(form) == ""
        assert app.screen is form, "an edit only checks: ctrl+s keeps"


def test_two_long_target_names_cut_alike_keep_their_own_columns() -> None:
    """Two names that read the same once cut are told apart by ``distinct_labels``, which
    gives its labels by name in sorted order: the second target's label headed the first
    column. Each column keeps its own target's label."""
    from trntui.ui.screens.scenarios.rendering import header_labels

    head, tail = "Trainium3 trial on the long shared", "words of this team project and its runs"
    names = [f"{head} zz-second {tail}", f"{head} aa-first {tail}"]  # alike but in the middle
    labels = header_labels(names, [14, 14], Console(width=80))
    assert "zz-second" in labels[0] and "aa-first" in labels[1], labels


def test_the_bars_short_reason_keeps_a_target_name_that_holds_a_colon() -> None:
    """The bar shortens a reason by dropping the target's name in front of it; it split at the
    first ": ", so a target named "GPU: p5" left "p5: no run ..." as the reason."""
    from types import SimpleNamespace

    from trntui.ui.widgets.estimate_bar import _short_reason

    targets = [SimpleNamespace(name="GPU: p5"), SimpleNamespace(name="Trainium3 trial")]
    said = _short_reason("GPU: p5: no run reached the quality target", targets)
    assert said == "no run reached the quality target"
    assert _short_reason("work to finish differs: a, b", targets) == "work to finish differs"
