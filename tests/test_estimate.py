"""The estimate: every term hand-computed for a small case, provenance, "incomplete", bad edits.

The builders at the top are shared by the other estimate test modules.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, date, datetime

import pytest

from trntui.core.estimate import (
    ASSUMPTION,
    DERIVED,
    MEASURED,
    QUOTED,
    UNKNOWN,
    EstimateContext,
    InvalidInputError,
    Override,
    data_prep_instance_type,
    estimate,
    observations_frame,
)
from trntui.core.inventory import (
    DataPreparation,
    Distribution,
    Inventory,
    MigrationRisk,
    ModelInfo,
    ProjectInfo,
    SideCosts,
    TrainingGoal,
    TrainingTarget,
)
from trntui.core.quotes import PriceQuote, QuoteBook, RateTier, ServiceRate, SideService

TODAY = date(2026, 11, 29)
RETRIEVED = datetime(2026, 11, 20, tzinfo=UTC)
TRN = "Trainium3 trial"
GPU = "GPU baseline"


def quote(instance_type: str, usd_per_hour: float, region: str = "us-east-1") -> PriceQuote:
    return PriceQuote(
        instance_type=instance_type,
        region=region,
        purchase_option="on-demand",
        usd_per_hour=usd_per_hour,
        retrieved_at=RETRIEVED,
        manual=True,
        source_note=f"test price for {instance_type}",
        pinned=True,
    )


def rate(service: SideService, usd: float, region: str = "us-east-1") -> ServiceRate:
    return ServiceRate(service, region, (RateTier(0.0, None, usd),), RETRIEVED, manual=True,
                       source_note="test rate")  # fmt: skip


RATES = (
    rate(SideService.S3_STANDARD_STORAGE, 0.023),
    rate(SideService.EBS_GP3_STORAGE, 0.08),
    rate(SideService.INTER_AZ_TRANSFER, 0.01),
    rate(SideService.CLOUDWATCH_LOGS_INGESTION, 0.50),
    rate(SideService.CLOUDWATCH_LOGS_STORAGE, 0.03),
)


def book(trn_price: float | None = 10.0, gpu_price: float = 40.0) -> QuoteBook:
    quotes = [quote("p5.48xlarge", gpu_price), quote("c7i.8xlarge", 1.428)]
    if trn_price is not None:
        quotes.append(quote("trn3.48xlarge", trn_price))
    return QuoteBook(quotes=tuple(quotes), rates=RATES)


def run(
    set_name: str,
    *,
    throughput: float | None = 2.0,
    startup_s: float | None = 600.0,
    overhead: float | None = 0.2,
    retry: float | None = 0.05,
    counted: bool = True,
    total_s: float | None = 5000.0,
    unit: str = "samples/s",
    metric: str | None = "eval_loss",
    benchmark: str | None = None,
    run_id: str | None = None,
    launch_s: float | None = 0.0,
    size: tuple[int, int] | None = None,
    protocol: dict[str, str] | None = None,
) -> dict:
    """One run's observation; its system size defaults to what the builder's targets use
    (``trn``: 2 x 16 chips, others 1 x 8 GPUs) and its job clock shows ``launch_s`` outside
    the log."""
    nodes, per_node = size if size is not None else (2, 16) if set_name == "trn" else (1, 8)
    return {
        "launch_s": launch_s,
        "nodes": nodes,
        "accelerators_per_node": per_node,
        "accelerators": nodes * per_node,
        "size_source": "test",
        "protocol_json": json.dumps(protocol) if protocol else None,
        "run_id": run_id or f"{set_name}-{throughput}-{startup_s}-{counted}-{total_s}",
        "set_name": set_name,
        "status": "succeeded" if counted else "aborted",
        "counted": counted,
        "quality_reached": counted,
        "quality_metric": metric,
        "benchmark": benchmark,
        "throughput_unit": unit,
        "steady_throughput": throughput,
        "startup_s": startup_s,
        "training_s": 3600.0,
        "overhead_ratio": overhead,
        "retry_ratio": retry,
        "total_s": total_s,
        "restarts": 0,
        "redone_steps": 0,
    }


def inventory(**changes) -> Inventory:
    base = Inventory(
        project=ProjectInfo(name="t", owner="alice"),
        model=ModelInfo(version="v1"),
        goal=TrainingGoal(
            work_amount=7200.0,
            work_unit="samples",
            quality_metric="eval_loss",
            quality_threshold=0.9,
            quality_direction="lower is better",
        ),
        data_prep=DataPreparation(runs_on="c7i.8xlarge (CPU)", instance_count=1, hours=3.0),
        side_costs=SideCosts(
            dataset_gb=100.0,
            checkpoint_gb=10.0,
            checkpoints_kept=5,
            months_stored=2.0,
            ebs_gb_per_instance=500.0,
            data_moved_gb=50.0,
            log_gb=2.0,
        ),
        risks=(
            MigrationRisk(title="rewrite attention", status="to-confirm", effort_days=10.0),
            MigrationRisk(title="loader", status="resolved", effort_days=2.0),
        ),
        targets=(
            TrainingTarget(
                TRN,
                "trn3.48xlarge",
                2,
                "us-east-1",
                "on-demand",
                run_set="trn",
                accelerators_per_instance=16,
            ),
            TrainingTarget(GPU, "p5.48xlarge", 1, "us-east-1", "on-demand", run_set="gpu"),
        ),
    )
    return dataclasses.replace(base, **changes)


def trn_runs() -> list[dict]:
    return [
        run("trn", throughput=1.0, startup_s=300.0, overhead=0.1, retry=0.0),
        run("trn", throughput=3.0, startup_s=900.0, overhead=0.3, retry=0.1),
        run("trn", throughput=None, startup_s=None, counted=False, total_s=1800.0),
    ]


def gpu_runs() -> list[dict]:
    return [
        run("gpu", throughput=4.0, startup_s=120.0, overhead=0.1, retry=0.0),
        run("gpu", throughput=4.0, startup_s=120.0, overhead=0.1, retry=0.0, total_s=4000.0),
    ]


def context(inv: Inventory | None = None, quotes: QuoteBook | None = None, runs=None):
    rows = trn_runs() + gpu_runs() if runs is None else runs
    return EstimateContext(
        inventory=inv or inventory(),
        book=quotes or book(),
        observations=observations_frame(rows),
        today=TODAY,
    )


# Hand computation of the Trainium3 target (2 instances at $10/h, 7200 samples):
# medians of the two counted runs: throughput 2 samples/s, startup 600 s, overhead 0.2, retry 0.05
TRAINING_H = 7200 / 2.0 / 3600  # 1.0 h
STARTUP_H = 600 / 3600
OVERHEAD_H = TRAINING_H * 0.2
RETRY_H = TRAINING_H * 0.05 + (1 / 3) / (2 / 3) * 1800 / 3600  # 1 failed run in 3 of 0.5 h
WALL_H = STARTUP_H + TRAINING_H + OVERHEAD_H + RETRY_H
INSTANCE_USD = (STARTUP_H + TRAINING_H + OVERHEAD_H) * 2 * 10.0
RETRIES_USD = RETRY_H * 2 * 10.0
STORAGE_USD = (100 + 10 * 5) * 2 * 0.023 + 500 * 2 * (WALL_H / 730) * 0.08
TRANSFER_USD = 50 * 2 * 0.01
LOGS_USD = 2 * 0.50 + 2 * 2 * 0.03
DATA_PREP_USD = 3.0 * 1 * 1.428
TOTAL_USD = INSTANCE_USD + RETRIES_USD + STORAGE_USD + TRANSFER_USD + LOGS_USD + DATA_PREP_USD


def test_every_term_of_a_small_case_matches_the_hand_computation():
    result = estimate(context()).target(TRN)
    assert result.complete
    assert result.incomplete_inputs == ()
    stages = {stage.key: stage for stage in result.stages}
    assert stages["training_h"].hours == pytest.approx(1.0)
    assert stages["startup_h"].hours == pytest.approx(STARTUP_H)
    assert stages["overhead_h"].hours == pytest.approx(0.2)
    assert stages["retry_h"].hours == pytest.approx(0.3)
    assert stages["training_h"].instance_hours == pytest.approx(2.0)
    assert stages["training_h"].usd == pytest.approx(20.0)
    assert result.instance_hours == pytest.approx(2 * WALL_H)
    assert result.instance_usd == pytest.approx(INSTANCE_USD)
    assert result.retries_usd == pytest.approx(6.0)
    assert result.storage_usd == pytest.approx(STORAGE_USD)
    assert result.transfer_usd == pytest.approx(1.0)
    assert result.logs_usd == pytest.approx(1.12)
    assert result.data_prep_usd == pytest.approx(4.284)
    assert result.total_usd == pytest.approx(TOTAL_USD)
    assert result.usd_per_unit == pytest.approx(TOTAL_USD / 7200)
    assert result.headline() == f"${TOTAL_USD:,.2f}"


def test_planned_checkpoints_the_logs_do_not_show_are_an_assumption_or_unknown():
    # 7200 samples at a global batch of 8: 900 steps; a save every 100 steps: 9 saves.
    plan = Distribution(global_batch_size=8, checkpoint_interval_steps=100)
    unstated = estimate(context(inventory(distribution=plan))).target(TRN)
    assert unstated.total_usd is None
    assert unstated.incomplete_inputs == ("Checkpoint saves not in the logs",)
    assert "checkpoint_save_minutes" in unstated.input("checkpoint_s").provenance.source

    stated = estimate(
        context(inventory(distribution=dataclasses.replace(plan, checkpoint_save_minutes=2.0)))
    ).target(TRN)
    saves_h = 9 * 2.0 / 60
    checkpoint = stated.input("checkpoint_s")
    assert checkpoint.value == pytest.approx(9 * 120.0)
    assert checkpoint.provenance.kind == ASSUMPTION
    assert checkpoint.provenance.source == "alice"
    assert "9 saves" in checkpoint.provenance.detail
    stages = {stage.key: stage for stage in stated.stages}
    assert stages["overhead_h"].hours == pytest.approx(OVERHEAD_H + saves_h)
    ebs_usd = 500 * 2 * (saves_h / 730) * 0.08
    assert stated.total_usd == pytest.approx(TOTAL_USD + saves_h * 2 * 10.0 + ebs_usd)

    shown = [{**row, "checkpoint_measured": True} for row in trn_runs()] + gpu_runs()
    measured = estimate(context(inventory(distribution=plan), runs=shown)).target(TRN)
    assert measured.input("checkpoint_s").value == 0.0
    assert measured.input("checkpoint_s").provenance.kind == MEASURED
    assert measured.total_usd == pytest.approx(TOTAL_USD), "the saves are in the overhead ratio"


def test_overriding_the_work_rescales_the_planned_checkpoint_saves():
    plan = Distribution(
        global_batch_size=8, checkpoint_interval_steps=100, checkpoint_save_minutes=2.0
    )
    ctx = context(inventory(distribution=plan))
    doubled = estimate(ctx, [Override("work_amount", 14400.0, None, who="bob", why="x2")])
    checkpoint = doubled.target(TRN).input("checkpoint_s")
    assert checkpoint.value == pytest.approx(2 * 9 * 120.0)
    assert checkpoint.provenance.kind == DERIVED
    assert "scaled to the overridden work" in checkpoint.provenance.detail
    # The same work stated in the inventory counts the same saves.
    goal = dataclasses.replace(inventory().goal, work_amount=14400.0)
    stated = estimate(context(inventory(distribution=plan, goal=goal))).target(TRN)
    assert stated.input("checkpoint_s").value == pytest.approx(checkpoint.value)
    assert doubled.target(TRN).total_usd == pytest.approx(stated.total_usd)


def test_gpu_target_single_instance():
    result = estimate(context()).target(GPU)
    training_h = 7200 / 4.0 / 3600  # 0.5 h
    billed = 120 / 3600 + training_h * 1.1
    assert result.instance_usd == pytest.approx(billed * 40.0)
    assert result.retries_usd == pytest.approx(0.0)


def test_provenance_of_inputs():
    result = estimate(context()).target(TRN)
    throughput = result.input("steady_throughput")
    assert throughput.provenance.kind == MEASURED
    assert throughput.provenance.source == "trn"
    assert (throughput.low, throughput.high, throughput.runs) == (1.0, 3.0, 2)
    price = result.input("usd_per_hour")
    assert price.provenance.kind == QUOTED
    assert price.provenance.source == "trn3.48xlarge/us-east-1/on-demand/manual"
    assert "2026-11-20" in price.provenance.detail
    work = result.input("work_amount")
    assert work.provenance.kind == ASSUMPTION
    assert work.provenance.source == "alice"
    failed = result.input("failed_fraction")
    assert failed.provenance.kind == MEASURED
    assert failed.value == pytest.approx(1 / 3)


def test_a_quantity_past_the_first_tier_gets_a_derived_average_rate():
    tiered = ServiceRate(
        SideService.S3_STANDARD_STORAGE,
        "us-east-1",
        (RateTier(0.0, 50.0, 0.023), RateTier(50.0, None, 0.022)),
        RETRIEVED,
        manual=True,
        source_note="tiered test rate",
    )
    quotes = book()
    rates = tuple(r for r in quotes.rates if r.service != SideService.S3_STANDARD_STORAGE)
    quotes = dataclasses.replace(quotes, rates=(*rates, tiered))
    result = estimate(context(quotes=quotes)).target(TRN)
    s3 = result.input("s3_usd_per_gb_month")
    # 150 GB stored: 50 GB at 0.023 and 100 GB at 0.022
    assert s3.value == pytest.approx((50 * 0.023 + 100 * 0.022) / 150)
    assert s3.provenance.kind == DERIVED
    assert "s3-standard-storage/us-east-1/manual" in s3.provenance.source
    assert result.storage_usd == pytest.approx(STORAGE_USD - 100 * 2 * 0.001)


def test_unknown_price_makes_the_estimate_incomplete_without_a_number():
    result = estimate(context(quotes=book(trn_price=None))).target(TRN)
    assert result.total_usd is None
    assert result.instance_usd is None
    assert result.retries_usd is None
    assert result.incomplete_inputs == ("Instance price",)
    assert result.headline() == "incomplete: Instance price"
    price = result.input("usd_per_hour")
    assert price.provenance.kind == UNKNOWN
    assert "not in the price list yet" in price.provenance.source
    # terms that do not need the price are still known
    assert result.transfer_usd == pytest.approx(TRANSFER_USD)
    assert result.data_prep_usd == pytest.approx(DATA_PREP_USD)


def test_unset_side_quantity_leaves_only_its_terms_unknown():
    inv = inventory(side_costs=SideCosts(dataset_gb=100.0))
    result = estimate(context(inv=inv)).target(TRN)
    assert result.total_usd is None
    assert result.storage_usd is None
    assert result.transfer_usd is None
    assert result.instance_usd == pytest.approx(INSTANCE_USD)
    assert "Data moved between zones" in result.incomplete_inputs
    assert "Data moved between zones" in result.term_unknowns("transfer_usd")
    assert result.term_unknowns("instance_usd") == ()


def test_target_without_run_set_has_unknown_measurements():
    inv = inventory()
    targets = (dataclasses.replace(inv.targets[0], run_set=None), inv.targets[1])
    result = estimate(context(inv=dataclasses.replace(inv, targets=targets))).target(TRN)
    assert result.total_usd is None
    throughput = result.input("steady_throughput")
    assert throughput.provenance.kind == UNKNOWN
    assert "no run set" in throughput.provenance.source


def test_run_set_with_no_counted_run_is_unknown():
    runs = [run("trn", counted=False), *gpu_runs()]
    result = estimate(context(runs=runs)).target(TRN)
    assert result.total_usd is None
    assert "quality target" in result.input("steady_throughput").provenance.source


def test_throughput_in_another_unit_than_the_goal_is_not_converted():
    runs = [run("trn", unit="steps/s"), *gpu_runs()]
    result = estimate(context(runs=runs)).target(TRN)
    assert result.input("steady_throughput").value is None
    assert "no conversion" in result.input("steady_throughput").provenance.source


def test_throughput_without_a_stated_unit_is_unknown():
    runs = [{**run("trn"), "throughput_unit": None}, *gpu_runs()]
    result = estimate(context(runs=runs)).target(TRN)
    assert (
        "does not state its throughput unit" in result.input("steady_throughput").provenance.source
    )


def test_data_prep_off_aws_needs_an_hourly_cost():
    inv = inventory(
        data_prep=DataPreparation(runs_on="on-prem cluster", instance_count=1, hours=3.0)
    )
    result = estimate(context(inv=inv)).target(TRN)
    assert result.data_prep_usd is None
    assert result.term_unknowns("data_prep_usd") == ("Data preparation instance price",)
    assert "not an EC2 instance type" in result.input("data_prep_usd_per_hour").provenance.source
    fixed = Override("data_prep_usd_per_hour", 2.0, TRN, who="ops", why="internal rate")
    assert estimate(context(inv=inv), [fixed]).target(TRN).data_prep_usd == pytest.approx(6.0)


def test_override_is_an_assumption_with_who_and_why():
    override = Override("steady_throughput", 4.0, TRN, who="bob", why="SDK 2.x kernels")
    result = estimate(context(), [override]).target(TRN)
    assert result.stages[1].hours == pytest.approx(0.5)
    provenance = result.input("steady_throughput").provenance
    assert (provenance.kind, provenance.source, provenance.detail) == (
        ASSUMPTION,
        "bob",
        "SDK 2.x kernels",
    )
    # the GPU target keeps its own measurement
    assert estimate(context(), [override]).target(GPU).input("steady_throughput").value == 4.0


def test_override_fills_an_unknown_price():
    override = Override("usd_per_hour", 10.0, TRN, who="sales", why="private offer")
    result = estimate(context(quotes=book(trn_price=None)), [override]).target(TRN)
    assert result.total_usd == pytest.approx(TOTAL_USD)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (Override("steady_throughput", 0.0, TRN), "must be above 0"),
        (Override("data_prep_hours", -1.0), "cannot be negative"),
        (Override("startup_s", -5.0, TRN), "cannot be negative"),
        (Override("steady_throughput", 2.0, TRN, unit="furlongs/s"), "unknown unit"),
        (Override("flux", 1.0), "unknown input"),
        (Override("usd_per_hour", 1.0, "nope"), "no target named"),
        (Override("usd_per_hour", 1.0), "per target"),
        (Override("failed_fraction", 1.0, TRN), "below 1"),
        (Override("instance_count", 1.5, TRN), "whole number"),
        (Override("work_amount", float("nan")), "finite"),
    ],
)
def test_invalid_edits_raise_a_typed_error(override, message):
    with pytest.raises(InvalidInputError, match=message):
        estimate(context(), [override])


def test_risks_are_a_separate_list_in_days():
    result = estimate(context())
    assert [r.title for r in result.risks] == ["rewrite attention", "loader"]
    assert result.risk_effort_days == 10.0
    assert not any("risk" in stage.label.lower() for stage in result.target(TRN).stages)


def test_data_prep_instance_is_read_from_free_text():
    assert data_prep_instance_type("c7i.8xlarge (CPU)") == "c7i.8xlarge"
    assert data_prep_instance_type("on-prem cluster") is None
    assert data_prep_instance_type("one m5.large.") == "m5.large"
    assert data_prep_instance_type(None) is None


def test_observation_row_turns_phases_into_ratios_of_training_time():
    from trntui.core.estimate import observation_row
    from trntui.core.run_facts import PhaseSplit, RunFacts

    phases = PhaseSplit(
        init_compile_s=300.0,
        warmup_s=60.0,
        training_s=3000.0,
        checkpoint_s=120.0,
        eval_s=None,  # the log cannot tell: already inside training_s
        stall_s=120.0,
        recovery_s=200.0,
        redone_s=100.0,
    )
    facts = RunFacts(
        status="succeeded", counts_as_completed=True, init_s=300.0, run_s=3600.0,
        launch_to_result_s=3800.0, total_s=3900.0, phases=phases, median_step_time_s=1.0,
        warmup_end_s=None, warmup_steps=None, steady_start_s=None, steady_end_s=None,
        steady_throughput=12.5, throughput_unit="samples/s", steady_tokens_per_s=None,
        effective_throughput=None, stalls=(), restarts=1, redone_steps=100, completed_steps=None,
        planned_steps=None, quality_metric="loss", quality_value=None, quality_target=None,
        quality_reached=True,
    )  # fmt: skip
    row = observation_row("r1", "trn", facts)
    assert row["overhead_ratio"] == pytest.approx((60 + 120 + 120) / 3000)
    assert row["retry_ratio"] == pytest.approx((200 + 100) / 3000)
    assert row["startup_s"] == 300.0
    assert row["total_s"] == 3900.0
    assert row["counted"] is True
    no_clock = dataclasses.replace(facts, phases=dataclasses.replace(phases, training_s=None))
    assert observation_row("r2", "trn", no_clock)["overhead_ratio"] is None


def test_rare_restarts_are_priced_at_their_mean_not_hidden_by_the_median():
    # Three counted runs, one of which lost 60 % of its training time to a crash: the
    # expected retry cost per run is the mean, 0.2; the median (0) would price it at nothing.
    runs = [
        run("trn", retry=0.0, run_id="a"),
        run("trn", retry=0.0, run_id="b"),
        run("trn", retry=0.6, run_id="c"),
        *gpu_runs(),
    ]
    retry = estimate(context(runs=runs)).target(TRN).input("retry_ratio")
    assert retry.value == pytest.approx(0.2)
    assert retry.provenance.detail.startswith("mean of 3")
    assert (retry.low, retry.high) == (0.0, 0.6)


def test_a_target_of_another_size_than_its_run_set_is_incomplete_naming_both():
    # The GPU runs were measured on 8 nodes x 8 GPUs; the target is one p5.48xlarge.
    runs = [run("trn", throughput=t) for t in (1.0, 2.0, 3.0)]
    runs += [run("gpu", throughput=t, size=(8, 8)) for t in (5.0, 6.0)]
    result = estimate(context(runs=runs)).target(GPU)
    throughput = result.input("steady_throughput")
    assert throughput.value is None
    why = throughput.provenance.source
    assert "measured on 8 x 8 = 64" in why and "1 x p5.48xlarge (8 NVIDIA H100 each) = 8" in why
    assert result.total_usd is None
    assert "Useful throughput" in result.incomplete_inputs
    # The same runs tie to a target of their own size.
    inv = inventory()
    eight = tuple(
        dataclasses.replace(t, instance_count=8) if t.name == GPU else t for t in inv.targets
    )
    tied = estimate(context(inv=dataclasses.replace(inv, targets=eight), runs=runs)).target(GPU)
    assert tied.input("steady_throughput").value == pytest.approx(5.5)
    assert "on 8 x 8 = 64" in tied.input("steady_throughput").provenance.detail


def test_an_unknown_size_is_stated_not_assumed():
    # A run set whose logs print no size, and a Trainium3 type whose chip count nobody stated.
    runs = [run("trn", size=None) for _ in range(2)]
    for row in runs:
        row.update(nodes=None, accelerators_per_node=None, accelerators=None)
    runs += [run("gpu", throughput=t) for t in (5.0, 6.0)]
    why = estimate(context(runs=runs)).target(TRN).input("steady_throughput").provenance.source
    assert "is not known" in why and "trntui size" in why
    inv = inventory()
    unstated = tuple(
        dataclasses.replace(t, accelerators_per_instance=None) if t.name == TRN else t
        for t in inv.targets
    )
    result = estimate(context(inv=dataclasses.replace(inv, targets=unstated))).target(TRN)
    why = result.input("steady_throughput").provenance.source
    assert "accelerators per trn3.48xlarge are not known" in why
    assert result.total_usd is None


def test_overriding_the_instance_count_voids_the_measured_throughput():
    scaled = Override("instance_count", 4.0, target=TRN, who="bob", why="faster")
    result = estimate(context(), (scaled,)).target(TRN)
    assert result.input("steady_throughput").value is None
    assert result.total_usd is None
    both = (scaled, Override("steady_throughput", 7.0, target=TRN, who="bob", why="90 % scaling"))
    complete = estimate(context(), both).target(TRN)
    assert complete.total_usd is not None
    assert complete.input("steady_throughput").value == 7.0


def test_launch_time_outside_the_logs_is_billed_per_attempt():
    """The job clock shows 300 s outside the logs per run: every attempt pays it, the failed
    one included (hand computation on the same runs as TOTAL_USD)."""
    runs = [dict(r, launch_s=300.0) for r in trn_runs()] + gpu_runs()
    result = estimate(context(runs=runs)).target(TRN)
    launch = result.input("launch_s")
    assert launch.value == 300.0 and launch.provenance.kind == MEASURED
    startup_h = STARTUP_H + 300 / 3600
    retry_h = TRAINING_H * 0.05 + (1 / 3) / (2 / 3) * (1800 + 300) / 3600
    wall_h = startup_h + TRAINING_H + OVERHEAD_H + retry_h
    instance = (startup_h + TRAINING_H + OVERHEAD_H) * 2 * 10.0
    retries = retry_h * 2 * 10.0
    storage = (100 + 10 * 5) * 2 * 0.023 + 500 * 2 * (wall_h / 730) * 0.08
    expected = instance + retries + storage + TRANSFER_USD + LOGS_USD + DATA_PREP_USD
    assert result.total_usd == pytest.approx(expected)


def test_launch_time_the_logs_cannot_show_is_stated_never_zero():
    runs = [dict(r, launch_s=None) for r in trn_runs()] + gpu_runs()
    result = estimate(context(runs=runs)).target(TRN)
    assert result.input("launch_s").value is None
    assert "software.launch_minutes" in result.input("launch_s").provenance.source
    assert result.total_usd is None
    inv = inventory()
    stated = dataclasses.replace(
        inv, software=dataclasses.replace(inv.software, launch_minutes=5.0)
    )
    priced = estimate(context(inv=stated, runs=runs)).target(TRN)
    assert priced.input("launch_s").value == 300.0
    assert priced.input("launch_s").provenance.kind == ASSUMPTION
    assert priced.total_usd == pytest.approx(
        estimate(context(runs=[dict(r, launch_s=300.0) for r in trn_runs()] + gpu_runs()))
        .target(TRN)
        .total_usd
    )


def test_a_side_cost_of_zero_quantity_costs_zero_without_a_rate():
    """No stored data, no transfer, no logs and no data preparation need no rates: the total
    is the instance time alone, by hand."""
    inv = inventory(
        side_costs=SideCosts(
            dataset_gb=0.0,
            checkpoint_gb=0.0,
            checkpoints_kept=0,
            months_stored=0.0,
            ebs_gb_per_instance=0.0,
            data_moved_gb=0.0,
            log_gb=0.0,
        ),
        data_prep=DataPreparation(runs_on="on-prem cluster", hours=0.0),
    )
    no_rates = QuoteBook(quotes=book().quotes, rates=())
    result = estimate(context(inv=inv, quotes=no_rates)).target(TRN)
    for key in ("s3_usd_per_gb_month", "transfer_usd_per_gb", "data_prep_usd_per_hour"):
        assert result.input(key).value is None  # the rates stay unknown ...
    assert result.incomplete_inputs == ()  # ... but nothing needs them
    assert result.total_usd == pytest.approx(INSTANCE_USD + RETRIES_USD)
    some_data = dataclasses.replace(inv, side_costs=dataclasses.replace(inv.side_costs, log_gb=1.0))
    incomplete = estimate(context(inv=some_data, quotes=no_rates)).target(TRN)
    assert incomplete.total_usd is None
    assert "CloudWatch Logs ingestion rate" in incomplete.incomplete_inputs
