"""The README's walkthrough "From `trntui init` to a report, in the app", driven headless at
80x24: a project made as ``trntui init`` makes it, three targets, real MLPerf logs imported
through the Import dialog, quotes and side rates typed in the Prices dialogs, and an estimate
whose every total is known. No command line and no file edited by hand on the way: every
change goes through a screen, as a user at 80x24 makes it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Input, Select, Static

from tests import MLPERF_DATA, SAMPLE, SIZE
from tests.ui_support import open_section, settle, wait_until
from trntui.store.project import Project, init_project
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.widgets.estimate_bar import EstimateBar

pytestmark = pytest.mark.usefixtures("instant_saves")

H100 = MLPERF_DATA / "v4.0" / "Oracle"
"""One 8 x H100 machine (BM.GPU.H100.8), the p5.48xlarge class: llama2_70b_lora, MLPerf v4.0."""
B200 = MLPERF_DATA / "v5.0" / "NVIDIA"
"""One 8 x B200 machine (nyx_n1), the p6-b200.48xlarge class: llama2_70b_lora, MLPerf v5.0."""
TRN3 = SAMPLE / "logs" / "trn3-example"
"""The sample's Trainium3 trial logs (example data, neuronx-distributed format)."""

TARGETS = (
    ("Trainium3", "trn3.48xlarge", "trn3-trial", "16"),
    ("GPU baseline p5", "p5.48xlarge", "p5-h100", ""),
    ("B200 p6", "p6-b200.48xlarge", "p6-b200", ""),
)
QUOTES = {
    "trn3.48xlarge": "40",
    "p5.48xlarge": "55.04",
    "p6-b200.48xlarge": "113.93",
    "c7i.8xlarge": "1.428",
}
RATES = ("0.023", "0.08", "0.50", "0.03", "0.01")
"""S3 Standard, EBS gp3, Logs ingestion, Logs storage, Inter-AZ: the order `r` offers them."""


def copy_results(source: Path, dest: Path, count: int) -> Path:
    """The submission's folders (``results/<system>/<benchmark>``, ``systems/``) with only its
    first ``count`` result logs: the system file and ``scaling.json`` come along."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("result_*.txt"))
    for log in sorted(source.rglob("result_*.txt"))[:count]:
        target = dest / log.relative_to(source)
        shutil.copyfile(log, target)
    return dest


async def type_in(pilot, field: Input, text: str, then: str = "tab") -> None:
    """Focus the field, put ``text`` in it as typing does (its Changed message, its checks),
    then tab out (or press ``then``). Typing key by key is what test_ui_app's field tests
    drive; here it would only make the walk slower."""
    field.focus()
    await pilot.pause()
    field.value = text
    await pilot.press(then)


async def fill_section(pilot, app: TrnTuiApp, section: str, **values: str) -> None:
    await open_section(pilot, section)
    for key, value in values.items():
        await type_in(pilot, app.screen.query_one(f"#section-{section} #field-{key}", Input), value)
    await settle(pilot)


async def form(pilot, app: TrnTuiApp, key: str) -> ItemFormScreen:
    await pilot.press(key)
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ItemFormScreen), f"{key} opened {screen!r}"
    return screen


def bar(app: TrnTuiApp) -> str:
    return app.screen.query_one(EstimateBar).content


def shown(app: TrnTuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


async def test_from_init_to_a_complete_estimate_of_three_targets_at_80x24(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    copy_results(H100, logs / "oracle-h100", 3)
    copy_results(B200, logs / "nvidia-b200", 3)
    shutil.copytree(TRN3, logs / "trn3")
    root = init_project(tmp_path / "proj")  # what `trntui init` calls
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "no training target yet" in bar(app)

            # 1: the inventory, section by section
            await fill_section(
                pilot,
                app,
                "model",
                name="Llama-2-70B LoRA",
                version="Llama-2-70b-hf",
                parameters_billion="70",
                sequence_length="8192",
            )
            await fill_section(pilot, app, "goal", work_amount="3072", quality_threshold="0.925")
            app.screen.query_one("#section-goal #field-work_unit", Select).value = "samples"
            direction = app.screen.query_one("#section-goal #field-quality_direction", Select)
            direction.value = "lower is better"
            await fill_section(
                pilot, app, "goal", quality_metric="eval_accuracy"
            )  # commits the two choices with a typed field
            await fill_section(pilot, app, "software", launch_minutes="5")
            await fill_section(
                pilot, app, "data_prep", runs_on="c7i.8xlarge", instance_count="1", hours="0.5"
            )
            await fill_section(
                pilot,
                app,
                "side_costs",
                dataset_gb="0.1",
                checkpoint_gb="1",
                checkpoints_kept="2",
                months_stored="1",
                ebs_gb_per_instance="500",
                data_moved_gb="0",
                log_gb="1",
            )
            goal = app.session.inventory.goal
            assert (goal.work_amount, goal.work_unit, goal.quality_direction) == (
                3072.0,
                "samples",
                "lower is better",
            )

            # 2: import the three run sets with i, each under its own name
            await pilot.press("escape", "2")
            await settle(pilot)
            for folder, set_name in (
                ("trn3", "trn3-trial"),
                ("oracle-h100", "p5-h100"),
                ("nvidia-b200", "p6-b200"),
            ):
                await pilot.press("i")
                await settle(pilot)
                dialog = app.screen
                assert isinstance(dialog, ImportRunsScreen)
                await type_in(pilot, dialog.query_one("#paths", Input), str(logs / folder))
                await type_in(pilot, dialog.query_one("#set", Input), set_name, "enter")
                await settle(pilot)
                message = shown(app, "#message")
                assert f"into set '{set_name}'" in message, message
                await pilot.press("ctrl+s")
                await settle(pilot)
                assert not isinstance(app.screen, ImportRunsScreen)
            runs = app.screen.query_one("#runs", DataTable)
            sets = [str(runs.get_row_at(i)[0]) for i in range(runs.row_count)]
            assert sets.count("trn3-trial") == 3 and sets.count("p5-h100") == 3, sets
            assert sets.count("p6-b200") == 3, sets

            # the Trainium3 logs print no system size: / filters to the set, z states it
            await pilot.press("slash", *"trn3", "enter")
            await settle(pilot)
            size = await form(pilot, app, "z")
            await type_in(pilot, size.query_one("#field-nodes", Input), "1")
            await type_in(pilot, size.query_one("#field-accelerators_per_node", Input), "16")
            await type_in(pilot, size.query_one("#field-source", Input), "job script: 1 x trn3")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert "1 x 16 (stated)" in shown(app, "#set-summary")

            # 3: three targets on Inventory > Training targets, each with its run set
            await pilot.press("1")
            await settle(pilot)
            await open_section(pilot, "targets")
            for name, instance_type, run_set, per_instance in TARGETS:
                target = await form(pilot, app, "a")
                await type_in(pilot, target.query_one("#field-name", Input), name)
                await type_in(pilot, target.query_one("#field-instance_type", Input), instance_type)
                target.query_one("#field-run_set", Select).value = run_set
                if per_instance:
                    field = target.query_one("#field-accelerators_per_instance", Input)
                    await type_in(pilot, field, per_instance)
                await pilot.press("ctrl+s")
                await settle(pilot)
            table = app.screen.query_one("#section-targets DataTable", DataTable)
            assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == [
                name for name, *_ in TARGETS
            ]
            await wait_until(pilot, lambda: "Instance price" in bar(app), "prices are missing")

            # 4: Prices: a quote for each instance type (a), a rate for each side service (r)
            await pilot.press("escape", "3")
            await settle(pilot)
            for instance_type, price in QUOTES.items():
                quote = await form(pilot, app, "a")
                await type_in(pilot, quote.query_one("#field-instance_type", Input), instance_type)
                await type_in(pilot, quote.query_one("#field-usd_per_hour", Input), price)
                source = quote.query_one("#field-source_note", Input)
                await type_in(pilot, source, "AWS pricing page, us-east-1")
                await pilot.press("ctrl+s")
                await settle(pilot)
                assert f"Added manual quote for {instance_type}" in shown(app, "StatusLine")
            for price in RATES:
                rate = await form(pilot, app, "r")
                await type_in(pilot, rate.query_one("#field-usd_per_unit", Input), price)
                source = rate.query_one("#field-source_note", Input)
                await type_in(pilot, source, "AWS pricing page, us-east-1")
                await pilot.press("ctrl+s")
                await settle(pilot)
            rates = app.screen.query_one("#rates", DataTable)
            assert all(str(rates.get_row_at(i)[2]) != "unknown" for i in range(rates.row_count)), (
                "every side rate entered"
            )
            # p on each target's row pins its quote: the prices are vouched for (verified)
            targets = app.screen.query_one("#targets", DataTable)
            targets.focus()
            for row, (name, instance_type, *_) in enumerate(TARGETS):
                targets.move_cursor(row=row)
                await pilot.press("p")
                await settle(pilot)
                status = shown(app, "StatusLine")
                assert status.startswith(f"Pinned: {instance_type} on-demand in us-east-1"), status
                assert f"for {name}" in status, status
                assert str(targets.get_row_at(row)[4]).startswith("pinned manual")

            # 5: Scenarios: every target's total is known, on the bar and on the Estimate tab
            await pilot.press("4")
            await wait_until(pilot, lambda: "incomplete" not in bar(app), "every target complete")
            estimate = app.session.analysis.estimate
            assert all(item.total_usd is not None for item in estimate.targets)
            line = bar(app)
            for name, *_ in TARGETS:
                assert re.search(re.escape(name) + r" \$[0-9,]+\.[0-9]{2}", line), line
            console = Console(width=78, record=True, color_system=None)
            console.print(app.screen.query_one("#estimate-table", Static).content)
            table_text = console.export_text()
            total_row = next(r for r in table_text.splitlines() if r.strip().startswith("Total"))
            assert len(re.findall(r"\$[0-9,]+\.[0-9]{2}", total_row)) == 3, total_row

            # 6: Trn3 vs GPU compares Trainium3 with the first GPU target; t the next (B200)
            for _ in range(3):
                await pilot.press("right_square_bracket")
                await settle(pilot)
            assert shown(app, "#compare-body").startswith(f"Against {TARGETS[1][0]} ")
            await pilot.press("t")
            await wait_until(
                pilot,
                lambda: shown(app, "#compare-body").startswith(f"Against {TARGETS[2][0]} "),
                "the B200 compared",
            )
            comparison = app.session.analysis.comparison
            assert comparison.gpu is not None and comparison.gpu.name == TARGETS[2][0]

            # 7: r writes the report, Markdown by default, next to trntui.toml
            await pilot.press("r")
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            report = (root / "estimate.md").read_text()
            for total in re.findall(r"\$[0-9,]+\.[0-9]{2}", total_row):
                assert total in report, total
            for name, *_ in TARGETS:
                assert name in report
            assert f"{TARGETS[0][0]} against {TARGETS[2][0]} (the GPU target: chosen)" in report
            await pilot.press("ctrl+q")
