"""Issue 26, item 6: status texts say what happened. An undo names the change it took back;
an incomplete target says how many more inputs it lacks, and Inventory > Checks lists them
(it said "Nothing missing." while every target was incomplete); "Corrected" names the field;
the Scale tab and the estimate bar count the same overrides."""

from __future__ import annotations

import dataclasses

from textual.widgets import Input, Static, TabbedContent

from tests import SIZE
from tests.ui_support import open_section, settle, wait_until
from trntui.core.estimate import Override
from trntui.core.inventory import TrainingTarget
from trntui.store.project import Project
from trntui.ui.app import TrnTuiApp
from trntui.ui.widgets.estimate_bar import EstimateBar


def bar(app: TrnTuiApp) -> str:
    return str(app.screen.query_one(EstimateBar).content)


def with_target(project: Project) -> None:
    target = TrainingTarget("GPU", "p5.48xlarge", 1, "us-east-1", "on-demand")
    inventory = dataclasses.replace(project.inventory, targets=(target,))
    project.save_inventory(inventory)
    project.inventory = inventory


async def test_undoing_an_override_names_it_and_its_target(sample_project: Project) -> None:
    trainium = sample_project.inventory.targets[0].name
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        added = Override("launch_s", 600.0, trainium, "alice", "a slow queue")
        assert app.session.set_overrides((added,), label="override of launch") is None
        await settle(pilot)
        await pilot.press("ctrl+z")
        await settle(pilot)
        said = app.session.signals.status.value[0]
        assert said == (
            f"Undid: adding the Launch + teardown outside logs override on {trainium} (600)"
            " (now no override in the working scenario)"
        )
        assert [str(n.message) for n in app._notifications][-1] == said


async def test_an_incomplete_target_spells_out_what_it_lacks_and_checks_lists_it(
    new_session: Project,
) -> None:
    with_target(new_session)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session.analysis is not None, "an estimate")
        lacking = app.session.analysis.estimate.targets[0].incomplete_inputs  # type: ignore[union-attr]
        assert len(lacking) > 2 and "S3 Standard rate" in lacking
        shown = " ".join(bar(app).split())
        assert f"incomplete: {lacking[0]} and {len(lacking) - 1} more inputs" in shown
        await open_section(pilot, "checks")
        checks = str(app.screen.query_one("#checks-body", Static).render())
        assert "Nothing missing." not in checks
        listed = " ".join(checks.split())
        assert "GPU: incomplete, lacks " in listed
        for label in lacking:
            assert label in listed, label
        assert "S3 Standard rate" in listed.split("(Prices, 3)")[0], "a price says where"


async def test_corrected_names_the_field_and_what_happens_next(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_section(pilot, "model")
        field = app.screen.query_one("#section-model #field-parameters_billion", Input)
        saved = field.value
        field.focus()
        await settle(pilot)
        await pilot.press("end", "x")
        await settle(pilot)
        assert app.session.signals.status.value[1] == "error"
        await pilot.press("backspace")
        await settle(pilot)
        said = app.session.signals.status.value[0]
        assert said.startswith("Corrected: Parameters")
        assert f"is {saved} again, as saved (nothing to save)" in said


async def test_scale_and_the_bar_count_the_same_overrides(sample_project: Project) -> None:
    trainium, gpu = (t.name for t in sample_project.inventory.targets)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        overrides = (
            Override("launch_s", 600.0, trainium, "alice", "a slow queue"),
            Override("launch_s", 300.0, gpu, "alice", "a faster queue"),
        )
        assert app.session.set_overrides(overrides, label="two overrides") is None
        await settle(pilot)
        assert "2 overrides" in bar(app)
        await pilot.press("4")
        await settle(pilot)
        app.screen.query_one(TabbedContent).active = "scale"
        await settle(pilot)
        body = app.screen.query_one("#scale-body", Static)
        await wait_until(pilot, lambda: "Scale:" in str(body.content), "the Scale tab")
        text = " ".join(str(body.content).split())
        assert "1 of the working scenario's 2 overrides apply to this target" in text
