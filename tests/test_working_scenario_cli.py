"""Issue 26, item 4: the CLI reads the working scenario the app keeps, says so, and agrees
with the app's figures."""

from __future__ import annotations

import json
from pathlib import Path

from trntui.cli import main
from trntui.core.estimate import Override
from trntui.store.project import Project
from trntui.store.scenarios import load_scenario
from trntui.ui.session import Session

TRN = "Trainium3 trial"


def _set_in_the_app(root: Path, *overrides: Override) -> float:
    """Set ``overrides`` through the app's session; the Trainium3 total the app computes."""
    with Project.open(root) as project:
        session = Session(project)
        assert session.set_overrides(overrides, label="test") is None
        computed = session.compute(session.inventory, session.overrides)
        assert computed.analysis is not None
        total = computed.analysis.estimate.target(TRN).total_usd
        assert total is not None
        return total


def _json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_estimate_uses_and_names_the_working_scenario_as_the_app_does(
    sample_dir: Path, capsys
) -> None:
    before = _json(capsys, "estimate", str(sample_dir), "--json")
    assert before["working_scenario"] == {"file": "working_scenario.toml", "overrides": 0}
    slower = Override("steady_throughput", 1.0, TRN, who="ana", why="a slower kernel")
    app_total = _set_in_the_app(sample_dir, slower)

    after = _json(capsys, "estimate", str(sample_dir), "--json")
    assert after["working_scenario"]["overrides"] == 1
    (listed,) = after["overrides"]
    assert (listed["input"], listed["target"], listed["value"]) == (slower.input, TRN, 1.0)
    totals = {t["name"]: t["total_usd"] for t in after["targets"]}
    assert totals[TRN] == app_total, "the CLI and the app agree"
    old = {t["name"]: t["total_usd"] for t in before["targets"]}[TRN]
    assert app_total != old

    assert main(["estimate", str(sample_dir)]) == 0
    out = capsys.readouterr().out
    assert "Working scenario: 1 override from working_scenario.toml" in out


def test_scenario_save_and_diff_start_from_the_working_scenario(sample_dir: Path, capsys) -> None:
    slower = Override("steady_throughput", 1.0, TRN, who="ana", why="a slower kernel")
    _set_in_the_app(sample_dir, slower)
    assert main(["scenario", "save", str(sample_dir), "kept"]) == 0
    assert "Working scenario: 1 override" in capsys.readouterr().out
    assert load_scenario(sample_dir, "kept").overrides == (slower,)

    assert main(["scenario", "diff", str(sample_dir), "kept"]) == 0
    out = capsys.readouterr().out
    assert "Working scenario: 1 override" in out
    assert "No difference between 'kept' and 'project now (working scenario)'" in out

    faster = "Trainium3 trial:steady_throughput=3"
    args = ["scenario", "save", str(sample_dir), "more", "--set", faster, "--why", "what if"]
    assert main(args) == 0
    (override,) = load_scenario(sample_dir, "more").overrides
    assert override.value == 3.0, "--set replaces the working override of the same input"


def test_estimate_and_report_give_no_ratio_for_a_different_work_to_finish(
    sample_dir: Path, capsys
) -> None:
    """The work to finish overridden for Trainium3 only (6,000 samples, the GPU the goal's
    3,072): the CLI gave "Trainium3 / GPU cost to the same result: 1.12"."""
    assert _json(capsys, "estimate", str(sample_dir), "--json")["comparison"]["comparable"]
    _set_in_the_app(sample_dir, Override("work_amount", 6000.0, TRN, who="ana", why="longer"))
    why = (
        f"work to finish differs: {TRN} 6,000 samples (an override by ana), GPU baseline "
        "(1 x p5.48xlarge) 3,072 samples (the inventory goal, set by ml-platform team (example))"
    )
    compared = _json(capsys, "estimate", str(sample_dir), "--json")["comparison"]
    assert compared["comparable"] is False
    assert compared["cost_ratio"] is None and compared["saving_per_training_usd"] is None
    assert compared["reasons"] == [why]
    assert compared["payback_trainings"] is None

    assert main(["estimate", str(sample_dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # its lines wrap at 80 columns
    assert f"No Trainium3/GPU ratio: {why}" in out
    assert "cost to the same result" not in out

    assert main(["report", str(sample_dir), "--format", "md", "-o", "-"]) == 0
    report = capsys.readouterr().out
    assert "**Not merged into one ratio**" in report and f"- {why}" in report
    assert "cost ratio" not in report
