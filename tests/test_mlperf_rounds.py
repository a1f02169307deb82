"""Run facts of MLPerf logs from other rounds and submitters (``tests/data/mlperf-rounds``).

Expectations come from the files read independently here: the size in the submission's
``systems/<system>.json``, the log's own training rate (``tracked_stats`` throughput, or block
work over block time), and the counts its evaluations state.
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
from pathlib import Path

import pytest

from tests import DATA
from trntui.core.backtest import backtest
from trntui.core.estimate import observation_row, observations_frame
from trntui.core.run_facts import run_facts
from trntui.importers import import_file

ROUNDS = DATA / "mlperf-rounds"
LOGS = sorted(ROUNDS.rglob("result_*.txt"))


def records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        match = re.search(r":::MLLOG (\{.*?\})\s*$", line)
        if match:
            with contextlib.suppress(ValueError):
                out.append(json.loads(match.group(1)))
    return out


def system_file(path: Path) -> dict:
    system = path.parent.parent.name
    return json.loads((path.parents[3] / "systems" / f"{system}.json").read_text())


def own_rate(path: Path) -> float | None:
    """The median tracked training throughput; for GPT-3, which prints none per block, the
    tokens of blocks 2..n over their time."""
    raw = records(path)
    rates = [
        r["value"]["throughput"]
        for r in raw
        if r["key"] == "tracked_stats" and "throughput" in (r.get("value") or {})
    ]
    if rates:
        return statistics.median(rates)
    blocks, opened = [], None
    for r in raw:
        if r["key"] == "block_start":
            opened = (r["time_ms"], r["metadata"].get("epoch_count"))
        elif r["key"] == "block_stop" and opened is not None:
            blocks.append((r["time_ms"] - opened[0], opened[1]))
            opened = None
    blocks = [b for b in blocks[1:] if b[1]]
    return sum(c for _, c in blocks) / (sum(t for t, _ in blocks) / 1000) if blocks else None


@pytest.mark.parametrize("path", LOGS, ids=lambda p: "/".join(p.parts[-3:-1]))
def test_size_from_the_submission_and_no_phantom_restart(path: Path) -> None:
    run = import_file(path)
    system = system_file(path)
    size = run.metadata.system
    assert size is not None
    assert (size.nodes, size.accelerators_per_node) == (
        int(system["number_of_nodes"]),
        int(system["accelerators_per_node"]),
    )
    facts = run_facts(run)
    assert facts.restarts == 0
    assert not facts.redone_steps  # 0, or unknown for a log with no progress counter


# Logs whose tracked throughput is the training rate of each block or epoch.
PER_INTERVAL = ("unet3d", "ssd", "llama2_70b_lora", "llama31_8b", "gpt3")


@pytest.mark.parametrize(
    "path", [p for p in LOGS if p.parent.name in PER_INTERVAL], ids=lambda p: p.parent.name
)
def test_steady_rate_agrees_with_the_logs_own_training_rate(path: Path) -> None:
    rate = own_rate(path)
    assert rate is not None
    facts = run_facts(import_file(path))
    unit = "tokens/s" if path.parent.name == "gpt3" else "samples/s"
    assert facts.throughput_unit == unit
    assert facts.steady_throughput == pytest.approx(rate, rel=0.10)


@pytest.mark.parametrize(
    "path", [p for p in LOGS if p.parent.name in ("gnn", "dlrm_dcnv2")], ids=lambda p: p.parent.name
)
def test_whole_run_rates_include_evaluation_the_steady_rate_does_not(path: Path) -> None:
    """These logs print one throughput over the whole run, evaluations (every 0.05 epoch)
    included; the steady rate leaves evaluation out, so it is higher, and the model built on
    it still reproduces the measured time (back-test)."""
    run = import_file(path)
    facts = run_facts(run)
    whole = own_rate(path)
    raw = records(path)
    evals = [r["time_ms"] for r in raw if r["key"] in ("eval_start", "eval_stop")]
    eval_s = sum(b - a for a, b in zip(evals[::2], evals[1::2], strict=False)) / 1000
    start = next(r["time_ms"] for r in raw if r["key"] == "run_start")
    stop = next(r["time_ms"] for r in raw if r["key"] == "run_stop")
    share = eval_s / ((stop - start) / 1000)
    assert facts.steady_throughput > whole
    assert facts.steady_throughput == pytest.approx(whole / (1 - share), rel=0.10)
    check = backtest(observations_frame([observation_row("r", "s", facts, run.metadata)]), "s")
    assert check is not None and not check.flagged


def test_unet3d_from_v3_1_counts_samples_in_its_epoch_keys() -> None:
    path = next(p for p in LOGS if p.parent.name == "unet3d" and "v3.1" in p.parts)
    raw = records(path)
    last_eval = max(r["metadata"]["epoch_num"] for r in raw if r["key"] == "eval_accuracy")
    run = import_file(path)
    assert run.timeline["samples"].max() == last_eval
    assert run.timeline["epoch"].drop_nulls().is_empty()


def test_a_train_samples_that_is_not_an_epoch_is_not_used_to_count_samples() -> None:
    path = next(p for p in LOGS if p.parent.name == "ssd")
    run = import_file(path)
    assert run.timeline["samples"].drop_nulls().is_empty()
    assert any("samples per epoch left unknown" in note for note in run.metadata.notes)


def test_two_metrics_per_evaluation_keep_the_first_one() -> None:
    path = next(p for p in LOGS if p.parent.name == "stable_diffusion")
    raw = [r for r in records(path) if r["key"] == "eval_accuracy"]
    first = raw[0]["metadata"]["metric"]
    expected = [r["value"] for r in raw if r["metadata"].get("metric") == first]
    metrics = (
        import_file(path)
        .timeline.filter(import_file(path).timeline["kind"] == "eval")["metric"]
        .to_list()
    )
    assert sorted(metrics) == sorted(expected)
