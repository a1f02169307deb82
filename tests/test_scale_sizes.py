"""Scale prices a measured count with every input of the run set measured there: a target
measured at N instances and Scale's row N of a target of the same family measured at another
count cost the same (the shared GB200 1/2/18 and H200 1/2/4 families, real MLPerf logs).

The work each size needed to reach the quality target is read here from the logs' own
``run_stop`` lines (``samples_count``), never from trntui.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from tests import MLPERF_DATA
from tests.test_estimate import book, inventory, quote
from tests.test_scaling import GOAL
from trntui.core.estimate import DERIVED, MEASURED, estimate
from trntui.core.inventory import TrainingTarget
from trntui.core.scale_plan import scale_plan
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import init_project
from trntui.store.quotes import add_quotes, add_rates
from trntui.store.run_import import import_paths

RESULTS = {
    "h200": (
        "p5en.48xlarge",
        None,
        {
            n: MLPERF_DATA / f"v5.0/HPE/results/HPE-Cray-XD670-H200-SXM5-141GB_n{n}_24.09"
            for n in (1, 2, 4)
        },
    ),
    "gb200": (
        "p6e-gb200.36xlarge",
        4,
        {n: MLPERF_DATA / f"v5.0/Oracle/results/{n}xBM.GPU.GB200.4" for n in (1, 2, 18)},
    ),
}


def samples_to_target(folder: Path) -> float:
    """Median over the set's runs of the samples its run_stop line says it had trained."""
    counts = []
    for path in folder.glob("result_*.txt"):
        for line in path.read_text().splitlines():
            match = re.search(r":::MLLOG (\{.*\})\s*$", line)
            if match and json.loads(match.group(1))["key"] == "run_stop":
                counts.append(json.loads(match.group(1))["metadata"]["samples_count"])
                break
    return statistics.median(counts)


@pytest.fixture(scope="module")
def families(tmp_path_factory) -> Path:
    root = init_project(tmp_path_factory.mktemp("sizes") / "proj")
    for name, (_, _, sets) in RESULTS.items():
        for nodes, folder in sets.items():
            import_paths(root, [folder / "llama2_70b_lora"], set_name=f"{name}-n{nodes}")
    prices = book()
    add_quotes(
        root, [*prices.quotes, quote("p5en.48xlarge", 60.0), quote(RESULTS["gb200"][0], 40.0)]
    )
    add_rates(root, list(prices.rates))
    return root


def context_for(root: Path, name: str):
    """Every count of the family measured by its own target (``<name> at N``)."""
    instance_type, per_instance, sets = RESULTS[name]
    targets = tuple(
        TrainingTarget(
            f"{name} at {n}",
            instance_type,
            n,
            run_set=f"{name}-n{n}",
            accelerators_per_instance=per_instance,
        )
        for n in sets
    )
    inv = inventory()
    # The GB200 logs print no job clock this trntui reads: the time outside them is stated.
    software = dataclasses.replace(inv.software, launch_minutes=3.0)
    inv = dataclasses.replace(inv, goal=GOAL, targets=targets, software=software)
    return dataclasses.replace(derive_and_store_context(root, inv), inventory=inv)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_a_measured_count_costs_what_a_target_measured_there_costs(families, name) -> None:
    context = context_for(families, name)
    sets = RESULTS[name][2]
    measured = {t.target.instance_count: t for t in estimate(context).targets}
    for asked in context.inventory.targets:
        plan = scale_plan(context, asked.name, counts=tuple(sets))
        for point in plan.points:
            there = measured[point.instance_count]
            assert there.total_usd is not None
            assert point.source == "measured"
            assert point.total_usd == pytest.approx(there.total_usd, rel=1e-12), (
                asked.name,
                point.instance_count,
            )
            assert point.time_to_result_s == pytest.approx(there.wall_hours * 3600, rel=1e-12)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_the_work_at_each_size_is_what_its_runs_needed(families, name) -> None:
    """The goal's 3,072 samples are read at the smallest size; a size whose runs needed more
    samples to reach the quality target (a larger global batch) needs that many more."""
    context = context_for(families, name)
    sets = RESULTS[name][2]
    needed = {n: samples_to_target(folder / "llama2_70b_lora") for n, folder in sets.items()}
    smallest = min(sets)
    for item in estimate(context).targets:
        n = item.target.instance_count
        work = item.input("work_amount")
        assert work.value == pytest.approx(GOAL.work_amount * needed[n] / needed[smallest])
        if needed[n] != needed[smallest]:
            assert work.provenance.kind == DERIVED
            assert f"read at {smallest} node" in work.provenance.detail
        for key in ("startup_s", "overhead_ratio", "steady_throughput"):
            assert item.input(key).provenance.kind == MEASURED
            assert item.input(key).provenance.source == f"{name}-n{n}"


def test_a_count_between_two_measured_ones_interpolates_every_input(families) -> None:
    context = context_for(families, "h200")
    plan = scale_plan(context, "h200 at 1", counts=(2, 3, 4))
    two, three, four = plan.points
    assert three.source == "interpolated"
    assert "interpolated between measured 2 and 4 nodes" in three.detail
    assert two.time_to_result_s > three.time_to_result_s > four.time_to_result_s
    at = {t.target.instance_count: t for t in estimate(context).targets}
    inv = context.inventory
    three_nodes = dataclasses.replace(inv.targets[0], name="h200 at 3", instance_count=3)
    moved = dataclasses.replace(context, inventory=dataclasses.replace(inv, targets=(three_nodes,)))
    (item,) = estimate(moved).targets
    share = (math.log(3) - math.log(2)) / (math.log(4) - math.log(2))
    for key in ("startup_s", "overhead_ratio", "work_amount"):
        low, high = at[2].input(key).value, at[4].input(key).value
        value = item.input(key)
        assert value.provenance.kind == DERIVED
        if key == "work_amount":  # interpolated in log, as the throughput
            expected = math.exp(math.log(low) + share * (math.log(high) - math.log(low)))
        else:
            expected = low + share * (high - low)
        assert value.value == pytest.approx(expected, rel=1e-9)
    assert item.total_usd == pytest.approx(three.total_usd, rel=1e-12)


def test_two_sizes_that_need_different_work_are_not_the_same_result(families) -> None:
    """The goal read at the family's larger size (its runs needed more samples to reach the
    quality target) is other work than the goal at the smallest size: the gate says so, with
    both amounts and where each came from, and a ratio of the two is refused."""
    from trntui.core.comparison import protocol, protocol_differences

    context = context_for(families, "h200")
    sets = RESULTS["h200"][2]
    needed = {n: samples_to_target(folder / "llama2_70b_lora") for n, folder in sets.items()}
    assert needed[1] != needed[4], "the case needs two sizes that needed different work"
    result = estimate(context)
    small, large = (protocol(context, result.target(f"h200 at {n}")) for n in (1, 4))
    reasons = protocol_differences(large, small)
    (work,) = [r for r in reasons if r.startswith("work to finish differs")]
    scaled = GOAL.work_amount * needed[4] / needed[1]
    assert f"h200 at 4 {scaled:,.6g} samples (derived from the goal and scaling family" in work
    assert f"h200 at 1 {GOAL.work_amount:,.6g} samples (the inventory goal, set by" in work
