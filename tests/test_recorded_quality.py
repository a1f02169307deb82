"""Quality results measured outside a log: stored with their source, used only when the log
holds no evaluation, and never turning a missed target into a verified one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loggen import NxdSpec, write_nxd
from trntui.cli import main
from trntui.core.errors import InputFileError, UserError
from trntui.core.run_facts import QualityTarget, RecordedQuality, run_facts
from trntui.importers import import_file
from trntui.store.project import init_project
from trntui.store.quality import load_recorded_quality, quality_path, record_quality
from trntui.store.run_import import import_paths

TARGET = QualityTarget("eval_loss", 0.925, higher_is_better=False)
SPEC = NxdSpec(total_steps=120, stall_at=None, crash_at=None, save_interval=50)


@pytest.fixture
def nxd_log(tmp_path: Path) -> Path:
    path = tmp_path / "trn.log"
    write_nxd(path, SPEC)
    return path


def test_log_without_evaluation_is_unverified_not_failed(nxd_log: Path) -> None:
    facts = run_facts(import_file(nxd_log), TARGET, SPEC.total_steps)
    assert facts.status == "succeeded"
    assert facts.quality_reached is None
    assert facts.counts_as_completed
    assert facts.launch_to_result_s is None


def test_recorded_result_meeting_the_target_verifies_the_run(nxd_log: Path) -> None:
    run = import_file(nxd_log)
    plain = run_facts(run, TARGET, SPEC.total_steps)
    recorded = RecordedQuality(0.92, "eval job 17", evaluation_s=120.0)
    facts = run_facts(run, TARGET, SPEC.total_steps, recorded)
    assert facts.quality_reached is True
    assert facts.quality_value == 0.92
    assert plain.total_s is not None
    assert facts.launch_to_result_s == pytest.approx(plain.total_s + 120.0)
    assert any("eval job 17" in note for note in facts.notes)


def test_recorded_result_missing_the_target_makes_the_run_not_count(nxd_log: Path) -> None:
    facts = run_facts(
        import_file(nxd_log), TARGET, SPEC.total_steps, RecordedQuality(0.95, "eval job 18")
    )
    assert facts.quality_reached is False
    assert not facts.counts_as_completed
    assert facts.effective_throughput == 0.0


def test_unknown_evaluation_time_leaves_the_result_time_unknown(nxd_log: Path) -> None:
    facts = run_facts(
        import_file(nxd_log), TARGET, SPEC.total_steps, RecordedQuality(0.9, "eval job 19")
    )
    assert facts.quality_reached is True
    assert facts.launch_to_result_s is None


def test_cli_records_and_removes_a_result(
    tmp_path: Path, nxd_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = init_project(tmp_path / "proj")
    (outcome,) = import_paths(root, [nxd_log], set_name="trn")
    assert outcome.run_id is not None
    assert main(["quality", str(root), outcome.run_id, "0.921", "--source", "eval job 20",
                 "--evaluation-minutes", "3"]) == 0  # fmt: skip
    stored = load_recorded_quality(root)[outcome.run_id]
    assert stored == RecordedQuality(0.921, "eval job 20", 180.0)
    assert main(["quality", str(root), outcome.run_id, "--remove"]) == 0
    assert load_recorded_quality(root) == {}


def test_cli_refuses_a_result_without_a_source(tmp_path: Path, nxd_log: Path) -> None:
    root = init_project(tmp_path / "proj")
    (outcome,) = import_paths(root, [nxd_log], set_name="trn")
    assert outcome.run_id is not None
    assert main(["quality", str(root), outcome.run_id, "0.9"]) == 2
    assert main(["quality", str(root), "nope", "0.9", "--source", "x"]) == 2
    assert not quality_path(root).exists()


RUN = "0123456789abcdef"


def test_hand_edited_bad_value_names_file_line_and_key(tmp_path: Path) -> None:
    root = init_project(tmp_path / "proj")
    record_quality(root, RUN, RecordedQuality(0.9, "eval"))
    path = quality_path(root)
    path.write_text(path.read_text().replace("value = 0.9", 'value = "good"'))
    with pytest.raises(InputFileError) as caught:
        load_recorded_quality(root)
    assert caught.value.key == "result[0].value"
    assert caught.value.line == path.read_text().splitlines().index('value = "good"') + 1


def test_outside_evaluation_time_is_billed_as_evaluation(nxd_log: Path) -> None:
    run = import_file(nxd_log)
    plain = run_facts(run, TARGET, SPEC.total_steps)
    facts = run_facts(run, TARGET, SPEC.total_steps, RecordedQuality(0.92, "eval", 150.0))
    assert (facts.phases.eval_s or 0.0) == pytest.approx((plain.phases.eval_s or 0.0) + 150.0)


@pytest.mark.parametrize(
    "argv",
    [
        ["nan", "--source", "x"],
        ["inf", "--source", "x"],
        ["0.9", "--source", "x", "--evaluation-minutes", "nan"],
        ["0.9", "--source", "x", "--evaluation-minutes", "-1"],
    ],
)
def test_cli_refuses_a_value_that_is_not_a_finite_number(
    tmp_path: Path, nxd_log: Path, argv: list[str]
) -> None:
    """A nan written to quality.toml made every later command (even --remove) fail."""
    root = init_project(tmp_path / "proj")
    (outcome,) = import_paths(root, [nxd_log], set_name="trn")
    assert outcome.run_id is not None
    with pytest.raises(SystemExit) as exited:
        main(["quality", str(root), outcome.run_id, *argv])
    assert exited.value.code == 2
    assert not quality_path(root).exists()


def test_the_store_refuses_what_it_could_not_read_back(tmp_path: Path) -> None:
    root = init_project(tmp_path / "proj")
    record_quality(root, RUN, RecordedQuality(0.9, "eval"))
    before = quality_path(root).read_bytes()
    for bad in (RecordedQuality(float("nan"), "x"), RecordedQuality(0.9, "x", float("inf"))):
        with pytest.raises(UserError):
            record_quality(root, RUN, bad)
    assert quality_path(root).read_bytes() == before
    assert load_recorded_quality(root) == {RUN: RecordedQuality(0.9, "eval")}


@pytest.mark.parametrize(
    ("edit", "index", "key"),
    [
        ("evaluation_minutes = nan", 0, "evaluation_minutes"),
        ('run_id = "../../etc"', 0, "run_id"),
        (f'run_id = "{RUN}"', 1, "run_id"),  # the same run twice: which value holds?
    ],
)
def test_hand_edits_that_cannot_be_trusted_name_their_line(
    tmp_path: Path, edit: str, index: int, key: str
) -> None:
    root = init_project(tmp_path / "proj")
    other = "fedcba9876543210"
    record_quality(root, RUN, RecordedQuality(0.9, "eval"))
    record_quality(root, other, RecordedQuality(0.8, "eval"))
    path = quality_path(root)
    lines = path.read_text().splitlines()
    starts = [n for n, line in enumerate(lines) if line == "[[result]]"]
    if edit.startswith("run_id"):
        at = lines.index(f'run_id = "{[RUN, other][index]}"')
    else:
        at = starts[index] + 1
        lines.insert(at, "")
    lines[at] = edit
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError) as caught:
        load_recorded_quality(root)
    assert caught.value.key == f"result[{index}].{key}"
    assert caught.value.line == at + 1
