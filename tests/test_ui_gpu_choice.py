"""Issue 26: which GPU target Trainium3 is compared with. Trn3 vs GPU always took the first GPU
target of the inventory; ``t`` on that tab now walks the GPU targets, the choice is kept in the
working scenario (``gpu_target``: undone with ctrl+z, there after a restart), and the report the
tab writes, ``trntui estimate`` and ``trntui report`` compare the same two targets."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from tests import SIZE
from tests.test_ui_scenarios import open_tab
from tests.ui_support import settle, wait_until
from trntui.cli import main
from trntui.core.estimate import Override
from trntui.core.inventory import TrainingTarget
from trntui.store.project import Project
from trntui.store.scenarios import load_scenario
from trntui.store.working_scenario import (
    WORKING_SCENARIO_FILE,
    WorkingScenario,
    read_working_scenario,
)
from trntui.ui.app import TrnTuiApp
from trntui.ui.session import Session

FIRST_GPU = "GPU baseline (1 x p5.48xlarge)"
B200 = "B200 p6"


@pytest.fixture
def three_targets(sample_dir: Path) -> Path:
    """The sample with a second GPU target after the p5 baseline (no quote, no runs yet)."""
    with Project.open(sample_dir) as project:
        b200 = TrainingTarget(name=B200, instance_type="p6-b200.48xlarge", region="us-east-1")
        inventory = project.inventory
        project.save_inventory(dataclasses.replace(inventory, targets=(*inventory.targets, b200)))
    return sample_dir


def compared(app: TrnTuiApp) -> str | None:
    analysis = app.session.analysis
    assert analysis is not None
    gpu = analysis.comparison.gpu
    return None if gpu is None else gpu.name


def tab_text(app: TrnTuiApp) -> str:
    return str(app.screen.query_one("#compare-body", Static).content)


def footer_keys(app: TrnTuiApp) -> set[str]:
    return {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}


async def test_t_on_trn3_vs_gpu_picks_the_gpu_target_kept_undone_and_reported(
    three_targets: Path,
) -> None:
    with Project.open(three_targets) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await open_tab(pilot, "compare")
            assert compared(app) == FIRST_GPU
            first_line = tab_text(app).splitlines()[0]
            assert first_line == (f"Against {FIRST_GPU} (the first GPU target; t: next of 2)"), (
                first_line
            )
            assert "next_target" in footer_keys(app), "t is offered in the footer on this tab"

            await pilot.press("t")
            await wait_until(pilot, lambda: compared(app) == B200, "the B200 compared")
            assert (
                tab_text(app).splitlines()[0].startswith(f"Against {B200} (chosen; t: next of 2)")
            )
            assert f"Not compared here: {FIRST_GPU}" in tab_text(app)
            status = str(app.screen.query_one("StatusLine", Static).content)
            assert status.startswith(f"Trn3 vs GPU: Trainium3 against {B200} (2 of 2"), status
            assert read_working_scenario(project.root).gpu_target == B200
            reasons = app.session.analysis.comparison.reasons  # type: ignore[union-attr]
            assert any(reason.startswith(f"{B200}:") for reason in reasons), reasons

            # r on this tab writes the report of the comparison shown: the B200's
            await pilot.press("r")
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            report = (project.root / "estimate.md").read_text()
            assert f"Trainium3 trial against {B200} (the GPU target: chosen)." in report

            await pilot.press("ctrl+z")
            await wait_until(pilot, lambda: compared(app) == FIRST_GPU, "the p5 compared again")
            status = str(app.screen.query_one("StatusLine", Static).content)
            assert status == f"Undid: comparing with {B200} (now the first GPU target)", status
            assert read_working_scenario(project.root).gpu_target is None

            await pilot.press("t")
            await wait_until(pilot, lambda: compared(app) == B200, "the B200 compared again")
            await pilot.press("ctrl+q")

    # a restart compares the same two
    with Project.open(three_targets) as project:
        session = Session(project)
        assert session.gpu_target == B200
        computed = session.compute(session.inventory, session.overrides, session.gpu_target)
        assert computed.analysis is not None and computed.analysis.comparison.gpu is not None
        assert computed.analysis.comparison.gpu.name == B200


async def test_with_one_gpu_target_t_is_not_offered_on_trn3_vs_gpu(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "compare")
        assert tab_text(app).splitlines()[0] == (
            f"Against {FIRST_GPU} (the first GPU target; the only GPU target)"
        )
        assert "next_target" not in footer_keys(app)
        await pilot.press("ctrl+q")


def test_the_cli_compares_the_gpu_target_the_app_chose(three_targets: Path, capsys) -> None:
    def estimate_json(*extra: str) -> dict:
        assert main(["estimate", str(three_targets), "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)["comparison"]

    assert estimate_json()["gpu_target"] == FIRST_GPU
    with Project.open(three_targets) as project:
        assert Session(project).compare_with(B200) is None
    kept = tomllib.loads((three_targets / WORKING_SCENARIO_FILE).read_text())
    assert kept["gpu_target"] == B200
    chosen = estimate_json()
    assert (chosen["gpu_target"], chosen["gpu_choice"]) == (B200, "chosen")
    assert estimate_json("--gpu-target", FIRST_GPU)["gpu_target"] == FIRST_GPU

    assert main(["estimate", str(three_targets)]) == 0
    out = capsys.readouterr().out
    assert f"Trainium3 compared with '{B200}'" in out
    assert f"Compared: Trainium3 trial against {B200} (the GPU target: chosen)" in out

    assert main(["report", str(three_targets), "--format", "json", "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["gpu_target"] == B200

    assert main(["estimate", str(three_targets), "--gpu-target", "Trainium3 trial"]) == 2
    err = capsys.readouterr().err
    assert "is not a GPU target of the project" in err and repr(B200) in err, err


def test_a_chosen_gpu_target_renamed_since_says_so_and_compares_the_first(
    three_targets: Path, capsys
) -> None:
    (three_targets / WORKING_SCENARIO_FILE).write_text(
        'schema_version = 1\ngpu_target = "B200 renamed"\n'
    )
    assert main(["estimate", str(three_targets), "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)["comparison"]
    assert comparison["gpu_target"] == FIRST_GPU
    assert comparison["gpu_choice"] == (
        "the first GPU target ('B200 renamed', the one chosen, is not a target now)"
    )


def test_an_opened_snapshot_whose_gpu_target_is_gone_says_which_is_compared(
    three_targets: Path, capsys
) -> None:
    """A snapshot chose the B200, since removed from the project: opened, it says so and
    names the target the project compares with instead (as ``u`` would use), not
    "(chosen)" beside a name the project no longer has."""
    from trntui.ui.screens.scenarios import scenario_text

    with Project.open(three_targets) as project:
        assert Session(project).compare_with(B200) is None
    assert main(["scenario", "save", str(three_targets), "on-b200"]) == 0
    with Project.open(three_targets) as project:
        inventory = project.inventory
        kept = tuple(t for t in inventory.targets if t.name != B200)
        project.save_inventory(dataclasses.replace(inventory, targets=kept))
    (three_targets / WORKING_SCENARIO_FILE).write_text("schema_version = 1\n")
    assert main(["scenario", "save", str(three_targets), "now"]) == 0
    capsys.readouterr()
    snapshot = load_scenario(three_targets, "on-b200")
    opened = str(scenario_text(snapshot, load_scenario(three_targets, "now").estimate(), ()))
    gone = f"the first GPU target ('{B200}', the one chosen, is not a target now)"
    assert f"Trn3 vs GPU: against {FIRST_GPU} now ({gone})" in opened, opened
    assert "(chosen)" not in opened, opened
    # Against an estimate that still has it (the snapshot's own), it is the one chosen.
    assert f"against {B200} (chosen)" in str(scenario_text(snapshot, snapshot.estimate(), ()))


def test_a_gpu_target_that_is_no_name_is_refused_with_its_line(three_targets: Path) -> None:
    from trntui.core.errors import InputFileError

    (three_targets / WORKING_SCENARIO_FILE).write_text("schema_version = 1\ngpu_target = 3\n")
    with pytest.raises(InputFileError) as refused:
        read_working_scenario(three_targets)
    assert refused.value.line == 2 and "gpu_target" in str(refused.value)


async def test_the_bar_names_the_gpu_target_of_its_ratio_when_there_are_several(
    sample_dir: Path,
) -> None:
    """With one GPU target the bar says ``Trn3/GPU``; with two, the ratio names the one it is
    against, and follows ``t``."""
    from trntui.ui.widgets.estimate_bar import estimate_line

    with Project.open(sample_dir) as project:
        inventory = project.inventory
        baseline = next(t for t in inventory.targets if t.name == FIRST_GPU)
        second = dataclasses.replace(baseline, name="p5 again")
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "Trn3/GPU " in estimate_line(app.session.analysis, width=200).plain
            project_inventory = dataclasses.replace(inventory, targets=(*inventory.targets, second))
            assert app.session.edit_inventory(project_inventory, label="add target") is None
            await wait_until(
                pilot,
                lambda: len(app.session.analysis.estimate.targets) == 3,  # type: ignore[union-attr]
                "the second GPU target estimated",
            )
            line = estimate_line(app.session.analysis, width=200).plain
            assert f"Trn3/{FIRST_GPU} " in line, line
            await open_tab(pilot, "compare")
            await pilot.press("t")
            await wait_until(pilot, lambda: compared(app) == "p5 again", "the second compared")
            line = estimate_line(app.session.analysis, width=200).plain
            assert "Trn3/p5 again " in line and "Trn3/GPU " not in line, line


def test_a_snapshot_keeps_the_gpu_target_compared_when_it_was_saved(
    three_targets: Path, capsys
) -> None:
    """A snapshot saved while Trainium3 was compared with the B200 reads back as compared
    with the B200 (``scenario show``, ``report --scenario``), whatever the working scenario
    chooses later; ``--gpu-target`` on save names another, and a name that is no GPU target
    is refused with nothing written."""
    with Project.open(three_targets) as project:
        assert Session(project).compare_with(B200) is None
    assert main(["scenario", "save", str(three_targets), "on-b200"]) == 0
    assert f"Trainium3 compared with '{B200}'" in capsys.readouterr().out
    saved = tomllib.loads((three_targets / "scenarios" / "on-b200.toml").read_text())
    assert saved["gpu_target"] == B200

    with Project.open(three_targets) as project:
        assert Session(project).compare_with(FIRST_GPU) is None
    assert main(["scenario", "show", str(three_targets), "on-b200", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["comparison"]
    assert (shown["gpu_target"], shown["gpu_choice"]) == (B200, "chosen")
    report = ["report", str(three_targets), "--scenario", "on-b200", "--format", "json"]
    assert main([*report, "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["gpu_target"] == B200
    assert main(["estimate", str(three_targets), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["gpu_target"] == FIRST_GPU

    assert main(["scenario", "save", str(three_targets), "on-p5", "--gpu-target", FIRST_GPU]) == 0
    capsys.readouterr()
    assert load_scenario(three_targets, "on-p5").gpu_target == FIRST_GPU
    facts = three_targets / "runs" / "facts.parquet"
    facts.unlink()  # derived by the next command that reads the runs: not by a refused one
    assert main(["scenario", "save", str(three_targets), "bad", "--gpu-target", "nope"]) == 2
    assert "is not a GPU target of the project" in capsys.readouterr().err
    assert not (three_targets / "scenarios" / "bad.toml").exists() and not facts.exists()

    assert main(["scenario", "diff", str(three_targets), "on-b200", "on-p5"]) == 0
    said = f"Trainium3 compared with {B200} in A, with {FIRST_GPU} in B"
    assert said in capsys.readouterr().out.splitlines()
    assert main(["scenario", "diff", str(three_targets), "on-b200", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpu_target"] == {"a": B200, "b": FIRST_GPU}
    assert main(["scenario", "diff", str(three_targets), "on-p5"]) == 0
    assert "Trainium3 compared with" not in capsys.readouterr().out.split("\n", 1)[1]
    with Project.open(three_targets) as project:  # no choice: the first, as on-p5 chose
        assert Session(project).use_working_scenario((), None, label="no choice") is None
    assert main(["scenario", "diff", str(three_targets), "on-p5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gpu_target"] == {"a": FIRST_GPU, "b": FIRST_GPU}


def test_a_snapshot_without_a_gpu_target_compares_the_first_and_an_empty_one_is_refused(
    three_targets: Path, capsys
) -> None:
    """Snapshots saved before the choice was kept hold no ``gpu_target``: they compare the
    first GPU target, as they did. An empty name is refused with its line."""
    from trntui.core.errors import InputFileError

    with Project.open(three_targets) as project:
        assert Session(project).compare_with(B200) is None
    assert main(["scenario", "save", str(three_targets), "older"]) == 0
    capsys.readouterr()
    path = three_targets / "scenarios" / "older.toml"
    lines = path.read_text().splitlines(keepends=True)
    line = next(n for n, text in enumerate(lines, 1) if text.startswith("gpu_target ="))
    path.write_text("".join(text for n, text in enumerate(lines, 1) if n != line))
    assert load_scenario(three_targets, "older").gpu_target is None
    assert main(["scenario", "show", str(three_targets), "older", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["gpu_target"] == FIRST_GPU

    lines[line - 1] = 'gpu_target = " "\n'
    path.write_text("".join(lines))
    with pytest.raises(InputFileError) as refused:
        load_scenario(three_targets, "older")
    assert refused.value.line == line and "gpu_target" in str(refused.value)


async def test_u_takes_a_snapshots_gpu_target_with_its_overrides_and_one_undo(
    three_targets: Path,
) -> None:
    with Project.open(three_targets) as project:
        session = Session(project)
        assert session.compare_with(B200) is None
        trainium = next(t for t in project.inventory.targets if t.accelerator_family != "GPU")
        faster = Override("steady_throughput", 3.0, trainium.name, who="ana", why="the target")
        assert session.set_overrides([faster], label="faster") is None
    assert main(["scenario", "save", str(three_targets), "on-b200"]) == 0
    with Project.open(three_targets) as project:
        Session(project).use_working_scenario((), None, label="reset")
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.session.gpu_target is None and app.session.overrides == ()
            await open_tab(pilot, "snapshots-tab")
            table = app.screen.query_one("#snapshots", DataTable)
            table.focus()
            table.move_cursor(row=table.get_row_index("on-b200"))
            await pilot.press("o")
            await settle(pilot)
            opened = str(app.screen.query_one("#snapshot-body", Static).content)
            assert f"Trn3 vs GPU: against {B200} (chosen)" in opened, opened
            await pilot.press("c")  # against the estimate on screen now
            await settle(pilot)
            totals = str(app.screen.query_one("#totals", Static).content)
            said = f"Trainium3 compared with {B200} in A, with {FIRST_GPU} in B"
            assert said in totals, totals
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("u")
            await wait_until(pilot, lambda: compared(app) == B200, "the snapshot's GPU target")
            assert app.session.overrides == (faster,)
            assert read_working_scenario(project.root) == WorkingScenario((faster,), B200)
            assert f"against {B200}" in app.status[0], app.status

            await pilot.press("ctrl+z")
            await wait_until(pilot, lambda: compared(app) == FIRST_GPU, "the first again")
            assert app.session.overrides == () and app.session.gpu_target is None
            assert read_working_scenario(project.root) == WorkingScenario()
            assert "Trainium3 compared with the first GPU target" in app.status[0], app.status
