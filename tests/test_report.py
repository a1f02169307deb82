"""The budget report: Markdown, JSON and CSV checked for their content."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest

from tests.test_estimate import (
    GPU,
    TOTAL_USD,
    TRN,
    book,
    context,
    gpu_runs,
    inventory,
    run,
    trn_runs,
)
from trntui.core.estimate import Override
from trntui.core.inventory import ProjectInfo
from trntui.core.report import analyze, render_csv, render_json, render_markdown, report_document

GENERATED = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def document(ctx=None, overrides=(), stale=()):
    ctx = ctx or context()
    analysis = analyze(ctx, overrides)
    return report_document(ctx, analysis, stale=stale, generated_at=GENERATED)


def test_markdown_reads_on_its_own():
    text = render_markdown(document())
    assert text.startswith("# Training cost estimate: t\n")
    assert (
        f"| {TRN} | 2 x trn3.48xlarge (us-east-1, on-demand) | ${TOTAL_USD:,.2f} | no band: it "
        "would rest on 2 counted runs" in text
    )
    assert "generated 2026-11-29T12:00:00+00:00" in text
    assert "cost = instance price x billed time (per stage, summed)" in text
    assert "| Training (steady useful work) | 1 | 2 | $20.00 |" in text
    assert "| Failures and retries | $6.00 |" in text
    assert (
        "| Useful throughput | 2 | samples/s | measured | trn | median of 2 counted runs, on 2 x "
        "16 = 32 (16 per trn3.48xlarge stated on the target) |" in text
    )
    assert "1 to 3 over 2 runs" in text
    assert "| trn3.48xlarge/us-east-1/on-demand/manual | 10 | manual: test price" in text
    assert "c7i.8xlarge/us-east-1/on-demand/manual" in text  # the data preparation quote too
    assert "| Useful throughput | 1 | 3 |" in text  # sensitivity row
    assert "Break-even useful throughput for Trainium3 trial" in text
    assert "**Decision: try another option.**" in text
    assert "| rewrite attention |  | to-confirm | 10 |  |" in text
    assert "not included in the totals" in text


def test_markdown_incomplete_and_not_merged():
    text = render_markdown(document(context(quotes=book(trn_price=None))))
    assert "## Trainium3 trial: unknown" in text
    assert "**incomplete: Instance price**" in text
    assert "**Not merged into one ratio**" in text
    assert f"- {TRN}: incomplete: Instance price" in text
    assert "| Instance time | unknown |" in text
    assert "| Failures and retries | unknown |" in text
    assert "| Data transfer | $1.00 |" in text


def test_markdown_protocol_mismatch_side_by_side():
    gpu = [run("gpu", metric="eval_accuracy", protocol={"quality_metric": "eval_accuracy"})] * 2
    trn = [{**r, "protocol_json": '{"quality_metric": "eval_loss"}'} for r in trn_runs()]
    text = render_markdown(document(context(runs=trn + gpu)))
    assert "quality metric differs" in text
    assert "| Quality metric (logs) | eval_loss | eval_accuracy |" in text
    assert "cost ratio" not in text


def test_markdown_caveats_stale_example_and_assumptions():
    ctx = context(inv=inventory(project=ProjectInfo(name="x", owner="alice", example=True)))
    bob = Override("steady_throughput", 3.0, TRN, who="bob", why="new kernels")
    text = render_markdown(document(ctx, [bob], stale=("quote changed",)))
    assert "**EXAMPLE DATA**" in text
    assert "> - quote changed" in text
    assert "Assumption: Trainium3 trial: Useful throughput set to 3 by bob (new kernels)" in text


def test_unverified_quality_is_a_caveat():
    unverified = [{**r, "quality_reached": None} for r in trn_runs()]
    doc = document(context(runs=[*unverified, *gpu_runs()]))
    assert f"{TRN}: quality not verified in 2 of 2 counted runs" in " ".join(doc["caveats"])


def test_json_report_keeps_unknowns_null():
    doc = json.loads(render_json(document(context(quotes=book(trn_price=None)))))
    trn = doc["targets"][0]
    assert trn["name"] == TRN
    assert trn["total_usd"] is None
    assert trn["instance_usd"] is None
    assert trn["transfer_usd"] == pytest.approx(1.0)
    assert trn["inputs"]["usd_per_hour"]["provenance"] == "unknown"
    assert doc["comparison"]["comparable"] is False
    assert trn["band"]["p50_usd"] is None and "incomplete" in trn["band"]["reason"]
    assert doc["goal"]["work_amount"] == 7200.0


def test_csv_rows():
    rows = list(csv.DictReader(io.StringIO(render_csv(document()))))
    by = {(r["section"], r["target"], r["item"]): r for r in rows}
    total = by[("total", TRN, "total_usd")]
    assert float(total["value"]) == pytest.approx(TOTAL_USD)
    assert total["unit"] == "USD"
    throughput = by[("input", TRN, "steady_throughput")]
    assert (throughput["unit"], throughput["provenance"], throughput["source"]) == (
        "samples/s",
        "measured",
        "trn",
    )
    assert float(by[("stage_instance_hours", TRN, "training_h")]["value"]) == pytest.approx(2.0)
    assert by[("comparison", "", "comparable")]["value"] == "True"
    assert by[("risk", "", "rewrite attention")]["unit"] == "days"
    assert by[("term", GPU, "retries_usd")]["value"] == "0.0"


def test_csv_unknown_is_empty_not_zero():
    rows = list(csv.DictReader(io.StringIO(render_csv(document(context(quotes=book(None)))))))
    total = next(r for r in rows if r["section"] == "total" and r["target"] == TRN
                 and r["item"] == "total_usd")  # fmt: skip
    assert total["value"] == ""
    assert "Instance price" in total["detail"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "unknown"),
        (0.0048213, "$0.0048"),
        (0.0129327, "$0.013"),
        (0.00918276, "$0.0092"),
        (0.5, "$0.50"),
        (2.5, "$2.50"),
        (1234.567, "$1,234.57"),
        (0.0, "$0.00"),
    ],
)
def test_a_cost_per_unit_shows_the_digits_that_matter(value: float | None, shown: str) -> None:
    from trntui.core.format import usd_per_unit

    assert usd_per_unit(value) == shown


def test_one_formatting_rule_for_money_numbers_and_durations() -> None:
    from trntui.core.format import UNKNOWN, duration, number, usd
    from trntui.ui import format as ui_format

    assert (usd(1234.5), usd(0.12345, 4), usd(None)) == ("$1,234.50", "$0.1235", UNKNOWN)
    assert (number(12345.678), number(0.5, 6), number(None)) == ("1.235e+04", "0.5", UNKNOWN)
    assert (duration(5400), duration(150), duration(42), duration(None)) == (
        "1.50 h",
        "2.5 min",
        "42 s",
        UNKNOWN,
    )
    assert ui_format.duration is duration


def test_reports_for_people_hold_no_control_characters_and_no_formulas(tmp_path) -> None:
    """Issue 30, items 3 and 4, on the whole path: a target named as a spreadsheet formula, a
    project name and owner holding OSC sequences and a right-to-left override, reported to a
    file by ``trntui report`` (``-o FILE`` wrote the raw bytes, ``-o -`` escaped them)."""
    from tests import copy_sample
    from trntui.cli import main

    project = copy_sample(tmp_path / "proj")
    toml = project / "trntui.toml"
    text = toml.read_text()
    formula = "=2+5+cmd|' /C calc'!A0"
    text = text.replace('name = "Trainium3 trial"', f'name = "{formula}"')
    text = text.replace(
        'owner = "ml-platform team (example)"', 'owner = "a\\u001b]52;c;QQ==\\u0007"'
    )
    text = text.replace('name = "Llama-2-70B LoRA:', 'name = "\\u202eLlama-2-70B LoRA:')
    toml.write_text(text)
    for kind in ("md", "csv"):
        out = tmp_path / f"report.{kind}"
        assert main(["report", str(project), "--format", kind, "-o", str(out)]) == 0
        written = out.read_text()
        assert "\x1b" not in written and "\x07" not in written and "\u202e" not in written
        assert "\\u202eLlama-2-70B LoRA" in written or kind == "csv"
    cells = [cell for row in csv.reader(io.StringIO(written)) for cell in row]
    assert f"'{formula}" in cells
    assert not [cell for cell in cells if cell.startswith(("=", "+", "@"))]
    assert not [cell for cell in cells if cell.startswith("-") and not _is_number(cell)]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_failures_and_retries_stand_right_after_the_instance_time() -> None:
    """The stages above the terms bill the retries with the rest of the instance-hours: the
    two terms those stages cost are shown together, wherever terms are listed."""
    from trntui.core.report import shown_terms

    for blocks in (False, True):
        terms = list(shown_terms(blocks))
        assert terms[:2] == ["instance_usd", "retries_usd"]
        assert ("idle_usd" in terms) is blocks
