"""The Scale tab on the Scenarios screen: each instance count of a target whose run set has a
scaling family (the real HPE H200 sets at 1, 2 and 4 nodes), at 80x24."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest
from textual.widgets import Static, TabbedContent

from tests import MLPERF_DATA
from tests.test_estimate import quote
from trntui.core.inventory import TrainingTarget
from trntui.store.project import Project
from trntui.store.quotes import add_quotes
from trntui.store.run_import import import_paths
from trntui.ui.app import TrnTuiApp

SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "llama2-70b-lora"
HPE = MLPERF_DATA / "v5.0/HPE/results"
SIZE = (80, 24)


@pytest.fixture
def scaled(tmp_path: Path) -> Path:
    root = tmp_path / "llama2-70b-lora"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    for nodes in (1, 2, 4):
        folder = HPE / f"HPE-Cray-XD670-H200-SXM5-141GB_n{nodes}_24.09/llama2_70b_lora"
        import_paths(root, [folder], set_name=f"hpe-n{nodes}")
    add_quotes(root, [quote("p5en.48xlarge", 63.0)])
    with Project.open(root) as project:
        inv = project.inventory
        target = TrainingTarget("H200 scaled", "p5en.48xlarge", 3, run_set="hpe-n1")
        project.save_inventory(dataclasses.replace(inv, targets=(target,)))
    return root


async def show_scale(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.press("4")
    await pilot.app.workers.wait_for_complete()
    pilot.app.screen.query_one(TabbedContent).active = "scale"
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_scale_tab_marks_measured_and_interpolated_counts(scaled: Path) -> None:
    with Project.open(scaled) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await show_scale(pilot)
            text = str(app.screen.query_one("#scale-body", Static).content)
    assert "Scale: H200 scaled" in text
    assert "Family H200 x 8 per node at 1/2/4 nodes" in text
    rows = dict(re.findall(r"(?m)^[> ] +(\d+)  (\w+)", text))
    assert (rows["1"], rows["2"], rows["3"], rows["4"]) == (
        "measured",
        "measured",
        "interpolated",
        "measured",
    )
    assert rows["8"] == "unknown"
    assert "Recommended:" in text


def test_scale_tab_snapshot(scaled: Path, snap_compare) -> None:
    with Project.open(scaled) as project:
        assert snap_compare(TrnTuiApp(project), terminal_size=SIZE, run_before=show_scale)
