"""Trainium3 vs GPU: the protocol gate, the break-even and the decision note."""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import date, datetime, time, timedelta

import pytest

from tests.test_estimate import (
    GPU,
    TRN,
    book,
    context,
    gpu_runs,
    inventory,
    run,
    trn_runs,
)
from trntui.core.comparison import CONTINUE, PAUSE, RUN_TRIAL, TRY_ANOTHER, compare
from trntui.core.estimate import Override, estimate
from trntui.core.inventory import MigrationRisk, ModelInfo

# Hand computation for the default test case: cost that scales with training hours, per
# training hour of the Trainium3 target: instances (1 + overhead 0.2) x 2 x $10, retries
# 0.05 x 2 x $10, EBS 500 GB x 2 x $0.08 / 730 h x (1 + 0.2 + 0.05).
PER_TRAINING_HOUR = 1.2 * 2 * 10 + 0.05 * 2 * 10 + 500 * 2 * 0.08 / 730 * 1.25
B = PER_TRAINING_HOUR * 7200 / 3600  # total = A + B / throughput


def compared(ctx=None, overrides=()):
    ctx = ctx or context()
    return compare(ctx, estimate(ctx, overrides))


def test_comparable_results_give_a_ratio_and_break_even():
    result = compared()
    assert result.comparable, result.reasons
    trn, gpu = result.trainium.total_usd, result.gpu.total_usd
    assert result.cost_ratio == pytest.approx(trn / gpu)
    assert result.saving_usd == pytest.approx(gpu - trn)
    a = trn - B / 2.0
    assert result.break_even.required_throughput == pytest.approx(B / (gpu - a))
    assert result.break_even.observed_throughput == 2.0
    assert result.break_even.unit == "samples/s"


def test_break_even_throughput_makes_the_totals_equal():
    first = compared()
    required = first.break_even.required_throughput
    at_even = compared(overrides=[Override("steady_throughput", required, TRN, who="t", why="t")])
    assert at_even.trainium.total_usd == pytest.approx(at_even.gpu.total_usd)


def test_gate_refuses_a_different_quality_metric():
    trn = [{**r, "protocol_json": '{"quality_metric": "eval_loss"}'} for r in trn_runs()]
    gpu = [run("gpu", metric="eval_accuracy", protocol={"quality_metric": "eval_accuracy"})] * 2
    result = compared(context(runs=trn + gpu))
    assert not result.comparable
    assert result.cost_ratio is None and result.break_even is None
    assert any("quality metric differs" in reason for reason in result.reasons)
    # both results are still there, side by side
    assert result.trainium.total_usd is not None and result.gpu.total_usd is not None


def test_gate_refuses_a_different_benchmark():
    runs = [{**r, "protocol_json": '{"benchmark": "llama2_70b_lora"}'} for r in trn_runs()]
    runs += [{**r, "protocol_json": '{"benchmark": "gpt3"}'} for r in gpu_runs()]
    result = compared(context(runs=runs))
    assert not result.comparable
    assert any("benchmark differs" in reason for reason in result.reasons)


def test_a_fact_one_side_states_is_not_confirmed_and_keeps_the_trial_from_continuing():
    facts = {"global_batch_size": "8", "sequence_length": "8192"}
    runs = [{**r, "protocol_json": json.dumps(facts)} for r in trn_runs()]
    runs += [{**r, "protocol_json": '{"global_batch_size": "8"}'} for r in gpu_runs()]
    ctx = context(inv=inventory(risks=()), runs=runs)
    result = compared(ctx)
    assert result.comparable  # nothing differs
    checks = {c.fact: c.status for c in result.fact_checks}
    assert checks == {"global_batch_size": "confirmed", "sequence_length": "not confirmed"}
    assert not result.protocol_confirmed
    assert result.decision.action != "continue the trial"
    assert any("sequence length stated by one side only" in f for f in result.decision.facts)
    both = [{**r, "protocol_json": json.dumps(facts)} for r in trn_runs() + gpu_runs()]
    assert compared(context(inv=inventory(risks=()), runs=both)).protocol_confirmed


def test_logs_that_contradict_the_inventory_are_not_comparable():
    # The Trainium3 logs say batch 32, sequence 4096; the inventory plans 8 and 8192.
    runs = [
        {**r, "protocol_json": '{"global_batch_size": "32", "sequence_length": "4096"}'}
        for r in trn_runs()
    ] + gpu_runs()
    inv = inventory()
    inv = dataclasses.replace(
        inv,
        distribution=dataclasses.replace(inv.distribution, global_batch_size=8),
        model=dataclasses.replace(inv.model, sequence_length=8192),
    )
    result = compared(context(inv=inv, runs=runs))
    assert not result.comparable
    assert any("global batch size 32, the inventory 8" in r for r in result.reasons)
    assert any("sequence length 4096, the inventory 8192" in r for r in result.reasons)


def test_gate_refuses_when_the_model_version_is_not_recorded():
    result = compared(context(inv=inventory(model=ModelInfo())))
    assert not result.comparable
    assert any("model version" in reason for reason in result.reasons)


def test_gate_refuses_a_run_set_that_missed_quality():
    runs = [*trn_runs(), run("gpu", counted=False)]
    result = compared(context(runs=runs))
    assert not result.comparable
    assert f"{GPU}: no run reached the quality target" in result.reasons


def test_decision_try_another_option_when_trainium_costs_more():
    decision = compared().decision
    assert decision.action == TRY_ANOTHER
    assert any("10 days of open porting effort" in fact for fact in decision.facts)


def test_decision_pause_when_a_price_is_unknown():
    decision = compared(context(quotes=book(trn_price=None))).decision
    assert decision.action == PAUSE
    assert any("price unverified" in fact for fact in decision.facts)


def test_decision_pause_on_missing_quality():
    runs = [run("trn", counted=False), *gpu_runs()]
    decision = compared(context(runs=runs)).decision
    assert decision.action == PAUSE
    missed = [fact for fact in decision.facts if fact.startswith("quality missed: no run in")]
    assert missed and "(1 run in it)" in missed[0], decision.facts


def test_decision_continue_when_cheaper_measured_and_ops_confirmed():
    inv = inventory(risks=(MigrationRisk(title="x", status="resolved", effort_days=1.0),))
    cheap = book(trn_price=2.0)
    decision = compared(context(inv=inv, quotes=cheap)).decision
    assert decision.action == CONTINUE, decision.facts
    assert "every cost stage is measured" in decision.facts


def test_decision_pause_when_an_operation_is_to_confirm():
    cheap = book(trn_price=2.0)
    decision = compared(context(quotes=cheap)).decision
    assert decision.action == PAUSE
    assert "operation support to confirm: rewrite attention" in decision.facts


def test_no_gpu_target_means_no_comparison():
    inv = inventory()
    result = compared(context(inv=dataclasses.replace(inv, targets=inv.targets[:1])))
    assert not result.comparable
    assert "no GPU target" in result.reasons


def test_no_trial_run_yet_means_run_a_trial_or_pause_without_a_price():
    inv = inventory()
    unmeasured = dataclasses.replace(inv.targets[0], run_set=None)
    ctx = context(inv=dataclasses.replace(inv, targets=(unmeasured, inv.targets[1])))
    result = compared(ctx)
    assert result.decision.action == RUN_TRIAL
    assert f"{TRN}: no measured trial run yet (run set not set)" in result.decision.facts
    assert result.requirement is not None and result.requirement.throughput is not None
    unpriced = dataclasses.replace(ctx, book=book(trn_price=None))
    decision = compared(unpriced).decision
    assert decision.action == PAUSE
    assert f"{TRN}: the requirement needs Instance price" in decision.facts


def test_gate_and_decision_when_quality_was_not_verified():
    unverified = [{**r, "quality_reached": None} for r in trn_runs()]
    result = compared(context(runs=[*unverified, *gpu_runs()]))
    assert result.trainium.total_usd is not None  # the estimate stands, with its inputs
    assert not result.comparable
    assert f"{TRN}: no run verified the quality target" in result.reasons[0]
    assert result.decision.action == PAUSE
    assert any(fact.startswith("quality not verified") for fact in result.decision.facts)


def test_pause_lists_every_missing_condition():
    decision = compared(context(quotes=book(trn_price=None))).decision
    assert decision.action == PAUSE
    assert any("price unverified" in fact for fact in decision.facts)
    assert "operation support to confirm: rewrite attention" in decision.facts


def test_continue_without_a_gpu_comparison_says_so():
    inv = inventory(risks=())
    inv = dataclasses.replace(inv, targets=inv.targets[:1])
    decision = compared(context(inv=inv)).decision
    assert decision.action == CONTINUE
    assert "not compared with the GPU: no GPU target" in decision.facts


def with_limit(row: dict, limit: str | None, busy: float | None) -> dict:
    return {**row, "limit": limit, "steady_utilization_pct": busy}


def test_input_bound_trainium_runs_mean_try_another_option_even_when_cheaper():
    # Same cheap, fully measured case as the 'continue' test, but the telemetry verdict says
    # the Trainium3 runs wait for data: a bigger or faster accelerator would not help.
    inv = inventory(risks=(MigrationRisk(title="x", status="resolved", effort_days=1.0),))
    trn = [with_limit(r, "input/data-bound", 35.0) for r in trn_runs() if r["counted"]]
    runs = [*trn, *(r for r in trn_runs() if not r["counted"]), *gpu_runs()]
    decision = compared(context(inv=inv, quotes=book(trn_price=2.0), runs=runs)).decision
    assert decision.action == TRY_ANOTHER, decision.facts
    assert "input/data-bound (2 of 2 counted runs)" in decision.facts[0]


def test_accelerator_bound_runs_are_reported_but_do_not_change_the_decision():
    inv = inventory(risks=(MigrationRisk(title="x", status="resolved", effort_days=1.0),))
    trn = [with_limit(r, "accelerator-bound", 90.0) for r in trn_runs() if r["counted"]]
    runs = [*trn, *(r for r in trn_runs() if not r["counted"]), *gpu_runs()]
    decision = compared(context(inv=inv, quotes=book(trn_price=2.0), runs=runs)).decision
    assert decision.action == CONTINUE, decision.facts
    assert any(
        "accelerator-bound in 2 of 2" in fact and "90% busy" in fact for fact in decision.facts
    )


def test_planned_checkpoints_the_logs_do_not_show_block_continue():
    inv = inventory(risks=(MigrationRisk(title="x", status="resolved", effort_days=1.0),))
    inv = dataclasses.replace(
        inv, distribution=dataclasses.replace(inv.distribution, checkpoint_interval_steps=100)
    )
    decision = compared(context(inv=inv, quotes=book(trn_price=2.0))).decision
    assert decision.action == PAUSE, decision.facts
    assert any("checkpoint saves (planned every 100 steps" in fact for fact in decision.facts)
    shown = [{**r, "checkpoint_measured": True} for r in trn_runs()] + gpu_runs()
    decision = compared(context(inv=inv, quotes=book(trn_price=2.0), runs=shown)).decision
    assert decision.action == CONTINUE, decision.facts


def test_an_overridden_throughput_is_never_called_observed():
    measured = compared().break_even
    assert measured.basis == "observed" and measured.note.startswith("observed ")
    assert (measured.observed_low, measured.observed_high) == (1.0, 3.0)
    faster = Override("steady_throughput", 5.0, target=TRN, who="bob", why="new kernels")
    assumed = compared(overrides=(faster,)).break_even
    assert assumed.basis == "assumed" and assumed.note.startswith("assumed 5 ")
    assert "observed" not in assumed.note
    assert (assumed.observed_low, assumed.observed_high) == (None, None)


def test_metric_names_of_two_formats_are_not_confirmed_rather_than_different():
    trn = [
        {**r, "format": "megatron", "protocol_json": '{"quality_metric": "validation lm loss"}'}
        for r in trn_runs()
    ]
    gpu = [
        {**r, "format": "mlperf", "protocol_json": '{"quality_metric": "eval_accuracy"}'}
        for r in gpu_runs()
    ]
    result = compared(context(runs=trn + gpu))
    (check,) = result.fact_checks
    assert check.status == "not confirmed" and "name it differently" in check.text()
    assert result.comparable


def _with_goal(**changes):
    inv = inventory(risks=())
    return dataclasses.replace(inv, goal=dataclasses.replace(inv.goal, **changes))


def test_a_plan_past_its_deadline_wall_clock_or_budget_cannot_continue():
    """The Trainium3 target's wall clock is known by hand (STARTUP + TRAINING + OVERHEAD +
    RETRY hours); with a dear GPU it would continue, and each limit it breaks turns the
    decision away from continue, with numbers."""
    from tests.test_estimate import OVERHEAD_H, RETRY_H, STARTUP_H, TODAY, TOTAL_USD, TRAINING_H

    wall_days = (STARTUP_H + TRAINING_H + OVERHEAD_H + RETRY_H) / 24
    fine = compared(context(quotes=book(gpu_price=400.0), inv=_with_goal()))
    assert fine.decision.action == "continue the trial"
    (trn_plan, _) = fine.plans
    assert trn_plan.wall_clock_days == pytest.approx(wall_days)
    assert (trn_plan.late, trn_plan.over_wall_clock, trn_plan.over_budget) == (None, None, None)

    past = compared(
        context(quotes=book(gpu_price=400.0), inv=_with_goal(deadline=date(2026, 11, 1)))
    )
    assert past.decision.action == "pause"
    assert any("late" in f and "2026-11-01" in f for f in past.decision.facts)

    short = compared(
        context(quotes=book(gpu_price=400.0), inv=_with_goal(max_wall_clock_days=wall_days / 2))
    )
    assert short.decision.action == "pause"
    minutes = round(wall_days * 24 * 60)  # below a day: hours and minutes
    shown = f"{minutes // 60} h {minutes % 60:02d} min of wall clock, more than the"
    assert any(shown in f for f in short.decision.facts), short.decision.facts

    poor = compared(context(quotes=book(gpu_price=400.0), inv=_with_goal(budget_usd=TOTAL_USD - 1)))
    assert poor.decision.action == "pause"
    assert any(f"${TOTAL_USD:,.2f}, over the budget" in f for f in poor.decision.facts)

    # Ten days to get capacity, starting today, against a deadline nine days out: late.
    lead = compared(
        context(
            quotes=book(gpu_price=400.0),
            inv=_with_goal(
                capacity_lead_days=10.0, start_date=TODAY, deadline=TODAY + timedelta(days=9)
            ),
        )
    )
    assert lead.plans[0].late and lead.decision.action == "pause"


def test_the_port_pays_off_after_a_number_of_trainings():
    from trntui.core.inventory import ProjectInfo

    # Make Trainium3 the cheaper side (GPU price up), 10 open porting days at $500/day.
    ctx = context(
        inv=inventory(project=ProjectInfo(name="t", owner="alice", engineer_day_usd=500.0)),
        quotes=book(gpu_price=400.0),
    )
    result = compared(ctx)
    saving = result.gpu.total_usd - result.trainium.total_usd
    assert saving > 0
    back = result.payback
    assert back.porting_cost_usd == pytest.approx(10 * 500.0)
    assert back.saving_per_training_usd == pytest.approx(saving)
    assert back.payback_trainings == math.ceil(5000.0 / saving)
    unknown = compared(context()).payback  # no day rate
    assert unknown.porting_cost_usd is None and unknown.payback_trainings is None
    assert "engineer day rate" in unknown.reason


@pytest.mark.parametrize("work", [1e12, 1e300])
def test_a_goal_past_the_calendar_is_late_not_a_crash(work):
    """A huge work amount (a token-scale goal) put the finish past the last date Python's
    calendar holds: estimate, report and scale crashed with OverflowError."""
    from tests.test_estimate import TODAY

    result = compared(
        context(
            quotes=book(gpu_price=400.0),
            inv=_with_goal(work_amount=work, deadline=TODAY + timedelta(days=30)),
        )
    )
    (trn_plan, _) = result.plans
    assert trn_plan.wall_clock_days > 365 * 8000
    assert trn_plan.late is True and trn_plan.finish == datetime.max
    assert any("finishes after the year 9999" in f for f in result.decision.facts)


def test_a_target_whose_run_set_has_no_runs_says_so():
    """Not 'no run reached the quality target': there is no run at all to have reached it."""
    result = compared(context(runs=trn_runs()))  # the GPU's set has no runs
    assert not result.comparable
    assert f"{GPU}: no run reached the quality target" not in result.reasons
    assert any(r.startswith(f"{GPU}: its run set has no runs") for r in result.reasons)


def test_a_finish_is_a_date_and_time_not_a_day_rounded_up():
    """A job of less than a day whose capacity comes in two days, due two days out, is on
    time: it finishes that day; adding whole days (ceil(lead + wall clock)) called it late."""
    from tests.test_estimate import TODAY

    result = compared(
        context(
            quotes=book(gpu_price=400.0),
            inv=_with_goal(
                capacity_lead_days=2.0, start_date=TODAY, deadline=TODAY + timedelta(days=2)
            ),
        )
    )
    plan = result.plans[0]
    assert 0 < plan.wall_clock_days < 1
    start = datetime.combine(TODAY, time())
    expected = start + timedelta(days=2.0 + plan.wall_clock_days)
    assert abs(plan.finish - expected) <= timedelta(minutes=1)
    assert plan.finish.date() == TODAY + timedelta(days=2)
    assert plan.late is False
    late = compared(
        context(
            quotes=book(gpu_price=400.0),
            inv=_with_goal(
                capacity_lead_days=2.0, start_date=TODAY, deadline=TODAY + timedelta(days=1)
            ),
        )
    )
    assert late.plans[0].late is True
    assert any(f"finishes on {plan.finish:%Y-%m-%d %H:%M}" in f for f in late.decision.facts)


def test_a_different_work_to_finish_is_never_merged_into_a_ratio():
    """SPEC 5: the same amount of completed work. Trainium3 priced for 9,000 samples (an
    override) against the GPU for the goal's 7,200 is no ratio, no break-even, no payback."""
    from trntui.core.inventory import ProjectInfo

    # The GPU dear enough that a merged ratio would have called the port paid off.
    ctx = context(
        inv=inventory(project=ProjectInfo(name="t", owner="alice", engineer_day_usd=500.0)),
        quotes=book(gpu_price=400.0),
    )
    assert compared(ctx).payback.payback_trainings is not None
    longer = Override("work_amount", 9000.0, TRN, who="ana", why="a longer fine-tune")
    result = compared(ctx, overrides=(longer,))
    assert not result.comparable
    assert (result.cost_ratio, result.saving_usd, result.break_even) == (None, None, None)
    assert result.reasons == (
        f"work to finish differs: {TRN} 9,000 samples (an override by ana), "
        f"{GPU} 7,200 samples (the inventory goal, set by alice)",
    )
    # Both totals are still shown, side by side.
    assert result.trainium.total_usd is not None and result.gpu.total_usd is not None
    assert result.payback.payback_trainings is None
    assert "not comparable" in result.payback.reason
    assert not any("to the result, the GPU" in fact for fact in result.decision.facts)
    # The other way round: the GPU's work overridden, named on its side.
    shorter = Override("work_amount", 3600.0, GPU, who="bob")
    (reason,) = compared(overrides=(shorter,)).reasons
    assert f"{TRN} 7,200 samples (the inventory goal, set by alice)" in reason
    assert f"{GPU} 3,600 samples (an override by bob)" in reason


def test_the_same_work_however_it_was_set_is_comparable_and_a_small_difference_is_not():
    # An override that restates the goal, or one for every target, is the same work.
    same = Override("work_amount", 7200.0, TRN, who="ana")
    assert compared(overrides=(same,)).comparable
    everywhere = Override("work_amount", 9000.0, None, who="ana")
    assert compared(overrides=(everywhere,)).comparable
    # Floating-point noise is the same work; half a sample is not, and the reason writes the
    # amounts with the digits that tell them apart.
    noise = Override("work_amount", 7200.0 * (1 + 1e-12), TRN, who="ana")
    assert compared(overrides=(noise,)).comparable
    half = Override("work_amount", 7200.5, TRN, who="ana")
    result = compared(overrides=(half,))
    assert not result.comparable and result.cost_ratio is None
    (reason,) = result.reasons
    assert f"{TRN} 7,200.5 samples" in reason and f"{GPU} 7,200 samples" in reason


def test_no_requirement_before_a_trial_against_a_gpu_total_for_other_work():
    inv = inventory()
    unmeasured = dataclasses.replace(inv.targets[0], run_set=None)
    ctx = context(inv=dataclasses.replace(inv, targets=(unmeasured, inv.targets[1])))
    longer = Override("work_amount", 9000.0, TRN, who="ana")
    result = compared(ctx, overrides=(longer,))
    assert result.requirement is None
    assert result.decision.action == PAUSE
    assert any("work to finish differs" in fact for fact in result.decision.facts)
