"""Scaling families on the real HPE H200 sets (1, 2 and 4 nodes of one system).

Efficiencies are computed here from the logs themselves (median run_stop - run_start over
the runs of each set), never from trntui's output.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from tests import MLPERF_DATA
from trntui.commands import scale as scale_commands
from trntui.core.inventory import Distribution, TrainingGoal, TrainingTarget
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import Project, init_project
from trntui.store.quotes import add_quotes, add_rates
from trntui.store.run_import import import_paths

HPE = MLPERF_DATA / "v5.0/HPE/results"
SETS = {n: HPE / f"HPE-Cray-XD670-H200-SXM5-141GB_n{n}_24.09/llama2_70b_lora" for n in (1, 2, 4)}


def median_minutes(folder: Path) -> float:
    times = []
    for path in folder.glob("result_*.txt"):
        start = stop = None
        for line in path.read_text().splitlines():
            match = re.search(r":::MLLOG (\{.*\})\s*$", line)
            if not match:
                continue
            event = json.loads(match.group(1))
            if event["key"] == "run_start":
                start = event["time_ms"]
            elif event["key"] == "run_stop" and stop is None:
                stop = event["time_ms"]
        times.append((stop - start) / 60000)
    return statistics.median(times)


@pytest.fixture(scope="module")
def hpe(tmp_path_factory) -> Path:
    from tests.test_estimate import book, quote

    root = init_project(tmp_path_factory.mktemp("scale") / "proj")
    for nodes, folder in SETS.items():
        import_paths(root, [folder], set_name=f"hpe-n{nodes}")
    prices = book()
    add_quotes(root, [*prices.quotes, quote("p5en.48xlarge", 60.0)])
    add_rates(root, list(prices.rates))
    return root


GOAL = TrainingGoal(
    work_amount=3072.0,
    work_unit="samples",
    quality_metric="eval_accuracy",
    quality_threshold=0.925,
    quality_direction="lower is better",
)


def context_with(root: Path, count: int, per_doubling: float | None = None, **goal):
    from tests.test_estimate import inventory

    inv = dataclasses.replace(inventory(), goal=GOAL)
    target = TrainingTarget("H200", "p5en.48xlarge", count, run_set="hpe-n1")
    return dataclasses.replace(
        derive_and_store_context(root, inv),
        inventory=dataclasses.replace(
            inv,
            targets=(target,),
            goal=dataclasses.replace(inv.goal, **goal) if goal else inv.goal,
            distribution=Distribution(scaling_efficiency_per_doubling=per_doubling),
            software=dataclasses.replace(inv.software, launch_minutes=3.0),
        ),
    )


def test_the_three_hpe_sets_form_one_family_with_the_logs_times(hpe: Path) -> None:
    (family,) = derive_and_store_context(hpe).families()
    assert [p.nodes for p in family.points] == [1, 2, 4]
    minutes = {n: median_minutes(folder) for n, folder in SETS.items()}
    for point in family.points:
        assert point.time_s / 60 == pytest.approx(minutes[point.nodes], abs=1e-6)


def test_a_count_between_measured_sizes_is_interpolated_outside_unknown(hpe: Path) -> None:
    from trntui.core.estimate import estimate

    (family,) = derive_and_store_context(hpe).families()
    rates = {p.nodes: p.throughput for p in family.points}
    three = estimate(context_with(hpe, 3)).target("H200").input("steady_throughput")
    assert three.provenance.kind == "derived"
    assert "interpolated between measured 2 and 4 nodes" in three.provenance.detail
    # log-log between the neighbours 2 and 4: 3 nodes lie log2(3/2) of the way.
    share = math.log(3 / 2) / math.log(4 / 2)
    expected = rates[2] * (rates[4] / rates[2]) ** share
    assert three.value == pytest.approx(expected, rel=1e-9)
    eight = estimate(context_with(hpe, 8)).target("H200").input("steady_throughput")
    assert eight.value is None and "not measured above 4 nodes" in eight.provenance.source
    assumed = estimate(context_with(hpe, 8, 0.9)).target("H200").input("steady_throughput")
    assert assumed.provenance.kind == "assumption"
    assert assumed.value == pytest.approx(rates[4] * 2 * 0.9)
    two = estimate(context_with(hpe, 2)).target("H200").input("steady_throughput")
    assert two.provenance.kind == "measured" and two.value == pytest.approx(rates[2])


def test_scale_json_recommends_the_cheapest_count_that_meets_the_limit(
    hpe: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Project.open(hpe) as project:
        inv = context_with(hpe, 1, work_amount=300_000.0, max_wall_clock_days=0.6).inventory
        project.save_inventory(inv)
    parser = argparse.ArgumentParser()
    scale_commands.register(parser.add_subparsers())
    args = parser.parse_args(["scale", str(hpe), "--target", "H200", "--json"])
    assert args.func(args) == 0
    plan = json.loads(capsys.readouterr().out)
    points = {p["instance_count"]: p for p in plan["points"]}
    assert [points[n]["source"] for n in (1, 2, 3, 4, 8)] == [
        "measured",
        "measured",
        "interpolated",
        "measured",
        "unknown",
    ]
    assert points[8]["total_usd"] is None and points[8]["meets_deadline"] is None
    for point in points.values():
        if point["wall_clock_days"] is not None:
            assert point["meets_deadline"] == (point["wall_clock_days"] <= 0.6)
    fitting = [p for p in points.values() if p["meets_deadline"] and p["total_usd"] is not None]
    assert fitting, "some count must meet 0.6 days"
    cheapest = min(fitting, key=lambda p: (p["total_usd"], p["instance_count"]))
    assert plan["recommended"] == cheapest["instance_count"]
    assert points[1]["meets_deadline"] is False  # one node needs more than 0.6 days
    # One efficiency, the totals': time to the verified result x instances at 1 node over the
    # same at the count.
    one = points[1]["time_to_result_s"]
    for n, point in points.items():
        if point["time_to_result_s"] is not None:
            assert point["efficiency"] == pytest.approx(one / (n * point["time_to_result_s"]))
    sizes = {size["nodes"]: size["efficiency"] for size in plan["family"]["sizes"]}
    assert sizes == {n: points[n]["efficiency"] for n in (1, 2, 4)}
    assert points[4]["wall_clock"].endswith(" min") and " h " in points[4]["wall_clock"]
    assert plan["points"][0]["within_budget"] is None
    # The family's sensitivity: each priced count's total over the runs' observed spread.
    for point in points.values():
        if point["total_usd"] is not None:
            low, high = point["total_range_usd"]
            assert low <= point["total_usd"] <= high


def test_a_named_family_replaces_the_automatic_grouping(hpe: Path, tmp_path: Path) -> None:
    import shutil

    from trntui.store.set_sizes import name_family

    root = tmp_path / "copy"
    shutil.copytree(hpe, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    with Project.open(root):
        name_family(root, ["hpe-n1", "hpe-n4"], "two sizes only")
    found = {f.name: f.sets for f in derive_and_store_context(root).families()}
    assert found["two sizes only"] == ("hpe-n1", "hpe-n4")
    assert all("hpe-n2" not in sets for sets in found.values())  # alone: no family


def test_the_budget_line_excludes_counts_that_cost_more(hpe: Path) -> None:
    from trntui.core.scale_plan import scale_plan

    free = scale_plan(context_with(hpe, 1, work_amount=300_000.0, max_wall_clock_days=0.6), "H200")
    fitting = [p for p in free.points if p.meets_deadline and p.total_usd is not None]
    cheapest = min(fitting, key=lambda p: (p.total_usd, p.instance_count))
    # A budget just under the cheapest count that is on time: the next cheapest must be chosen,
    # or none when no other count is on time.
    budget = cheapest.total_usd - 0.01
    plan = scale_plan(
        context_with(hpe, 1, work_amount=300_000.0, max_wall_clock_days=0.6, budget_usd=budget),
        "H200",
    )
    for point in plan.points:
        if point.total_usd is not None:
            assert point.within_budget == (point.total_usd <= budget)
    # Counts on time cost more the more instances they take: nothing on time is left.
    assert plan.recommended is None
    assert f"${budget:,.2f}" in plan.reason and f"${cheapest.total_usd:,.2f}" in plan.reason
    enough = scale_plan(
        context_with(
            hpe, 1, work_amount=300_000.0, max_wall_clock_days=0.6,
            budget_usd=cheapest.total_usd + 0.01,
        ),
        "H200",
    )  # fmt: skip
    assert enough.recommended.instance_count == cheapest.instance_count
    assert plan.budget_usd == budget


def test_capacity_blocks_beyond_256_instances_cannot_be_bought(hpe: Path) -> None:
    from trntui.core.manual_quote import manual_quote
    from trntui.core.quotes import QuoteBook
    from trntui.core.scale_plan import scale_plan

    ctx = context_with(hpe, 1, 0.9)
    target = dataclasses.replace(ctx.inventory.targets[0], purchase_option="capacity-block")
    block = manual_quote(
        instance_type="p5en.48xlarge", region="us-east-1", purchase_option="capacity-block",
        usd_per_hour=None, upfront_usd=2_400.0, retrieved_at=ctx.book.quotes[0].retrieved_at,
        source_note="block offer", block_days=1, block_instances=2, pinned=True,
    )  # fmt: skip
    ctx = dataclasses.replace(
        ctx,
        inventory=dataclasses.replace(ctx.inventory, targets=(target,)),
        book=QuoteBook(quotes=(*ctx.book.quotes, block), rates=ctx.book.rates),
    )
    within, over = scale_plan(ctx, "H200", counts=(4, 300)).points
    # 4 nodes measured: 4 instances pay whole days at $1,200 per instance-day.
    assert within.total_usd is not None and within.total_usd >= 4 * 1_200.0
    assert over.total_usd is None and "at most 256 instances" in over.detail


def test_scale_text_writes_unknown_as_everywhere_else() -> None:
    """An unknown wall clock, total, deadline or budget reads "unknown" (``core/format.py``),
    not "?"; known figures keep their columns."""
    from trntui.core.scale_plan import ScalePlan, ScalePoint

    known = ScalePoint(4, "measured", "", 2 * 86_400.0, 1_234.5, True, False)
    unknown = ScalePoint(8, "unknown", "no throughput", None, None, None, None)
    plan = ScalePlan("H200", None, (known, unknown), known, "cheapest", None, None)
    rows = scale_commands.plan_text(plan).splitlines()
    known_row = next(row for row in rows if row.startswith("      4"))
    unknown_row = next(row for row in rows if row.startswith("      8"))
    assert "2.00 days" in known_row and "$1,234.50" in known_row
    assert known_row.split()[-2:] == ["yes", "NO"]
    assert "?" not in unknown_row
    assert unknown_row.split()[2:] == ["unknown"] * 5
    assert len(unknown_row.rstrip()) == len(known_row.rstrip()) + len("unknown") - len("NO")


def test_an_unknown_total_names_the_inputs_that_keep_it_unknown(hpe: Path) -> None:
    """With the throughput measured and only the side-cost rates missing, the reason is the
    missing rates, not the throughput's provenance."""
    from trntui.core.estimate import estimate
    from trntui.core.quotes import QuoteBook
    from trntui.core.scale_plan import scale_plan, unknown_reasons

    ctx = context_with(hpe, 1)
    ctx = dataclasses.replace(ctx, book=QuoteBook(quotes=ctx.book.quotes, rates=()))
    item = estimate(ctx).target("H200")
    assert item.total_usd is None and not item.input("steady_throughput").is_unknown
    missing = item.incomplete_inputs
    (point,) = scale_plan(ctx, "H200", counts=(1,)).points
    assert point.total_usd is None and point.unknown_because is not None
    assert missing[0] in point.unknown_because
    assert item.input("steady_throughput").provenance.detail not in point.unknown_because
    assert unknown_reasons((point,)) == [f"1: {point.unknown_because}"]


def test_a_measured_count_without_a_family_gets_the_range_of_its_runs(sample_dir: Path) -> None:
    """The sample's Trainium3 set (one size, no family): the range is the total at the runs'
    lowest and highest throughput, as the sensitivity analysis varies it."""
    from trntui.core.estimate import estimate
    from trntui.core.scale_plan import scale_plan
    from trntui.core.sensitivity import sensitivity

    ctx = derive_and_store_context(sample_dir)
    target = next(t for t in ctx.inventory.targets if t.run_set == "trn3-example")
    plan = scale_plan(ctx, target.name, counts=(target.instance_count,))
    assert plan.family is None
    (point,) = plan.points
    result = estimate(ctx)
    bars = next(s for s in sensitivity(result) if s.target == target.name).bars
    bar = next(b for b in bars if b.key == "steady_throughput")
    assert point.total_range_usd == pytest.approx(
        (min(bar.total_at_low, bar.total_at_high), max(bar.total_at_low, bar.total_at_high))
    )
    low, high = point.total_range_usd
    assert low < point.total_usd < high


def test_scenario_overrides_apply_at_every_count_but_the_count(sample_dir: Path) -> None:
    """The Scale tab priced the project without the overrides in force, so its total at the
    target's count disagreed with the estimate bar (a review: $28.21 against $26.19)."""
    from trntui.core.estimate import Override, estimate
    from trntui.core.scale_plan import scale_plan

    ctx = derive_and_store_context(sample_dir)
    target = next(t for t in ctx.inventory.targets if t.run_set == "trn3-example")
    faster = Override("steady_throughput", 3.0, target.name, who="me", why="what if")
    more = Override("instance_count", 4, target.name, who="me", why="ignored here")
    other = next(t for t in ctx.inventory.targets if t.name != target.name)
    elsewhere = Override("usd_per_hour", 1.0, other.name, who="me", why="not this")
    overrides = [faster, more, elsewhere]
    other = target.instance_count + 1
    plan = scale_plan(ctx, target.name, counts=(target.instance_count, other), overrides=overrides)
    point, elsewhere = plan.points
    # The throughput was stated for the target's count: elsewhere it is not used.
    assert elsewhere.total_usd == scale_plan(ctx, target.name, counts=(other,)).points[0].total_usd
    expected = estimate(ctx, [faster]).target(target.name).total_usd
    assert expected != estimate(ctx).target(target.name).total_usd
    assert point.total_usd == pytest.approx(expected)
    assert plan.overrides == 1


def test_no_known_total_is_said_once(hpe: Path) -> None:
    """The Scale tab read "Recommended: none: none: no count has a known total"."""
    from trntui.core.quotes import QuoteBook
    from trntui.core.scale_plan import scale_plan
    from trntui.ui.widgets.scale_view import scale_text

    ctx = context_with(hpe, 1)
    ctx = dataclasses.replace(ctx, book=QuoteBook(quotes=ctx.book.quotes, rates=()))
    plan = scale_plan(ctx, "H200", counts=(1, 2))
    assert plan.recommended is None
    assert "Recommended: none: no count has a known total\n" in scale_text(plan, 1).plain
    cli = scale_commands.plan_text(plan)
    assert "Recommended: none (no count has a known total)" in cli, cli
