"""The budget-approval report as one JSON-ready document (``report_document``).

It gathers everything a reviewer needs to redo the estimate when a price, region or code
changes: the inputs with their provenance, the price quotes with their source and date,
the formula, each billed stage, the cost terms, the sensitivity table over the observed range,
the predictive P10-P90 band with its n and method, the Trainium3-vs-GPU comparison with its
protocol check and decision note, the porting risks in days, and the caveats. Unknown values
stay ``null``, never 0. ``core.report`` renders this document as Markdown, JSON or CSV.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from trntui.core.estimate import (
    INPUT_SPECS,
    MEASURED,
    OBSERVED_INPUTS,
    TERMS,
    Estimate,
    EstimateContext,
    TargetEstimate,
    quote_id,
    quote_source,
    shown_unit,
)
from trntui.core.prediction import METHOD_TEXT, Band, prediction_bands

if TYPE_CHECKING:  # the estimate's own document needs neither the analysis nor back-tests
    from trntui.core.analysis import Analysis
    from trntui.core.comparison import Comparison
    from trntui.core.sensitivity import Sensitivity

FORMULA = (
    "cost = instance price x billed time (per stage, summed)\n"
    "     + storage + transfers + logs/monitoring + data preparation + failures and retries\n"
    "\n"
    "training_h  = work_amount / steady_throughput / 3600\n"
    "startup_h   = (launch_s + startup_s) / 3600\n"
    "overhead_h  = training_h x overhead_ratio + checkpoint_s / 3600\n"
    "retry_h     = training_h x retry_ratio\n"
    "            + failed_fraction / (1 - failed_fraction) x (failed_run_s + launch_s) / 3600\n"
    "instance    = (startup_h + training_h + overhead_h) x instances x usd_per_hour\n"
    "retries     = retry_h x instances x usd_per_hour\n"
    "storage     = (dataset_gb + checkpoint_gb x checkpoints_kept) x months_stored x S3 rate\n"
    "            + ebs_gb_per_instance x instances x (wall-clock hours / 730) x EBS rate\n"
    "transfer    = data_moved_gb x 2 x inter-AZ rate per direction\n"
    "logs        = log_gb x ingestion rate + log_gb x months_stored x log storage rate\n"
    "data prep   = data_prep_hours x data_prep_instances x data prep instance price"
)

TERM_LABELS = {
    "instance_usd": "Instance time",
    "storage_usd": "Storage (S3 + EBS)",
    "transfer_usd": "Data transfer",
    "logs_usd": "Logs and monitoring",
    "data_prep_usd": "Data preparation",
    "retries_usd": "Failures and retries",
    "idle_usd": "Capacity Block paid, unused",
}


def shown_terms(block_billed: bool) -> tuple[str, ...]:
    """The cost terms worth a line, in the order they are shown: the unused block time only
    where a target pays blocks, and the failures and retries right after the instance time.
    The billed instance-hours are listed by stage above the terms, retries included, so the
    two terms those stages cost stand together (a table showed "Instance time" under four
    stages that summed to more, and the retries again four lines down)."""
    first = ("instance_usd", "retries_usd")
    rest = [term for term in TERMS if term not in first]
    return tuple(term for term in (*first, *rest) if block_billed or term != "idle_usd")


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def target_document(item: TargetEstimate, band: Band | None = None) -> dict[str, Any]:
    """One target as JSON: every term (null when unknown), each input's provenance and the
    predictive band (``band``)."""
    target = item.target
    quote = item.quote
    return {
        "name": item.name,
        "instance_type": target.instance_type,
        "instance_count": target.instance_count,
        "region": target.region,
        "purchase_option": target.purchase_option,
        "accelerator_family": target.accelerator_family,
        "run_set": target.run_set,
        "total_usd": _number(item.total_usd),
        "headline": item.headline(),
        "assumptions_only": item.assumptions_only,
        "incomplete_inputs": list(item.incomplete_inputs),
        "instance_hours": _number(item.instance_hours),
        **{term: _number(item.term(term)) for term in TERMS},
        "capacity_block": {
            "billed_in_blocks": item.block_billed,
            "wall_hours_per_instance": _number(item.wall_hours),
            "paid_hours_per_instance": _number(item.paid_hours),
            "text": item.block_text(),
        },
        "term_commitment": {
            "term_years": item.term_years,
            "beyond_this_training_usd": _number(item.commitment_beyond_usd),
            "text": item.commitment_text(),
        },
        "usd_per_unit": _number(item.usd_per_unit),
        "work_unit": item.work_unit,
        "stages": [
            {
                "key": stage.key,
                "label": stage.label,
                "hours_per_instance": _number(stage.hours),
                "instance_hours": _number(stage.instance_hours),
                "usd": _number(stage.usd),
            }
            for stage in item.stages
        ],
        "inputs": {
            i.key: {
                "label": i.label,
                "unit": shown_unit(i.unit, item.work_unit),
                "value": _number(i.value),
                "provenance": i.provenance.kind,
                "source": i.provenance.source,
                "detail": i.provenance.detail,
                "low": _number(i.low),
                "high": _number(i.high),
                "runs": i.runs,
            }
            for i in item.inputs
        },
        "band": None if band is None else band_document(band),
        "quote_reason": item.quote_reason,
        "quote": None
        if quote is None
        else {
            "id": quote_id(quote),
            "usd_per_hour": quote.usd_per_hour,
            "source": quote_source(quote),
            "retrieved_at": quote.retrieved_at.isoformat(),
            "flags": [flag.message for flag in item.quote_flags],
        },
    }


def estimate_document(result: Estimate, bands: tuple[Band, ...] | None = None) -> dict[str, Any]:
    """The JSON of ``trntui estimate --json``, each target with its band (``bands``, computed
    when not given)."""
    if bands is None:
        bands = prediction_bands(result)
    return {
        "work_unit": result.work_unit,
        "targets": [
            target_document(item, band) for item, band in zip(result.targets, bands, strict=True)
        ],
        "overrides": [
            {
                "input": o.input,
                "target": o.target,
                "value": o.value,
                "who": o.who,
                "why": o.why,
            }
            for o in result.overrides
        ],
        "risks": [
            {
                "title": r.title,
                "kind": r.kind,
                "status": r.status,
                "effort_days": r.effort_days,
                "owner": r.owner,
            }
            for r in result.risks
        ],
        "open_risk_effort_days": result.risk_effort_days,
        "open_risks_without_effort": result.risks_without_effort,
        "open_risk_effort": result.risk_effort_text,
    }


def _sensitivity_document(items: tuple[Sensitivity, ...]) -> list[dict[str, Any]]:
    return [
        {
            "target": s.target,
            "base_total_usd": _number(s.base_total_usd),
            "bars": [
                {
                    "input": bar.key,
                    "label": bar.label,
                    "unit": bar.unit,
                    "base": bar.base,
                    "low": bar.low,
                    "high": bar.high,
                    "total_at_low_usd": bar.total_at_low,
                    "total_at_high_usd": bar.total_at_high,
                    "swing_usd": bar.swing_usd,
                }
                for bar in s.bars
            ],
            "not_varied": [{"input": label, "why": why} for label, why in s.not_varied],
            "block_steps": list(s.block_steps),
        }
        for s in items
    ]


def band_document(band: Band) -> dict[str, Any]:
    """The predictive band of one target: P10/P50/P90 with n and the method, or why none."""
    return {
        "target": band.target,
        "runs": band.runs,
        "method": METHOD_TEXT if band.p50_usd is not None else None,
        "p10_usd": _number(band.p10_usd),
        "p50_usd": _number(band.p50_usd),
        "p90_usd": _number(band.p90_usd),
        "width": _number(band.width),
        "drawn_per_run": list(band.drawn),
        "unexplained_s_per_run": _number(band.unexplained_s),
        "text": band.text(),
        "reason": band.reason,
    }


def _comparison_document(comparison: Comparison) -> dict[str, Any]:
    even = comparison.break_even
    return {
        "trainium_target": comparison.trainium.name if comparison.trainium else None,
        "gpu_target": comparison.gpu.name if comparison.gpu else None,
        "gpu_choice": comparison.gpu_choice,
        "comparable": comparison.comparable,
        "protocol_confirmed": comparison.protocol_confirmed,
        "porting_cost_usd": _number(comparison.payback.porting_cost_usd)
        if comparison.payback
        else None,
        "saving_per_training_usd": _number(comparison.payback.saving_per_training_usd)
        if comparison.payback
        else None,
        "payback_trainings": comparison.payback.payback_trainings if comparison.payback else None,
        "payback_reason": comparison.payback.reason if comparison.payback else None,
        "plans": [
            {
                "target": plan.target,
                "wall_clock_days": _number(plan.wall_clock_days),
                "finish": plan.finish.isoformat() if plan.finish else None,
                "late": plan.late,
                "over_wall_clock": plan.over_wall_clock,
                "over_budget": plan.over_budget,
            }
            for plan in comparison.plans
        ],
        "fact_checks": [
            {"fact": c.fact, "trainium": c.trainium, "gpu": c.gpu, "status": c.status}
            for c in comparison.fact_checks
        ],
        "reasons": list(comparison.reasons),
        "cost_ratio": _number(comparison.cost_ratio),
        "saving_usd": _number(comparison.saving_usd),
        "protocols": [
            {
                "target": p.target,
                "model_version": p.model_version,
                "benchmark": p.benchmark,
                "quality_metric": p.quality_metric,
                "goal_metric": p.goal_metric,
                "quality_threshold": p.quality_threshold,
                "quality_direction": p.quality_direction,
                "work_amount": p.work_amount,
                "work_unit": p.work_unit,
                "measured_unit": p.measured_unit,
                "runs": p.runs,
                "counted_runs": p.counted_runs,
                "verified_runs": p.verified_runs,
            }
            for p in comparison.protocols
        ],
        "break_even": None
        if even is None
        else {
            "required_throughput": _number(even.required_throughput),
            "observed_throughput": _number(even.observed_throughput),
            "observed_low": _number(even.observed_low),
            "observed_high": _number(even.observed_high),
            "unit": even.unit,
            "basis": even.basis,
            "note": even.note,
        },
        "decision": {
            "action": comparison.decision.action,
            "facts": list(comparison.decision.facts),
        },
        **before_trial_document(comparison),
    }


def before_trial_document(comparison: Comparison) -> dict[str, Any]:
    """What Trainium3 must reach before any run of it is measured (requirements, not
    measurements) and how many runs a band within +/-10% needs."""
    needs, trial = comparison.requirement, comparison.trial_runs
    return {
        "requirement": None
        if needs is None
        else {
            "kind": "requirement, not a measurement",
            "gpu_total_usd": _number(needs.gpu_total_usd),
            "break_even_throughput": _number(needs.throughput),
            "unit": needs.unit,
            "break_even_time_to_result_h": _number(needs.time_to_result_h),
            "counted_as_zero": list(needs.counted_as_zero),
            "stated_assumptions": list(needs.stated),
            "text": needs.lines(),
        },
        "trial_runs": None
        if trial is None
        else {
            "runs_needed": trial.needed,
            "more_runs": trial.more,
            "runs_measured": trial.have,
            "half_width": trial.half_width,
            "log_sd": _number(trial.log_sd),
            "basis": trial.basis,
            "text": trial.text(),
        },
    }


def caveats(context: EstimateContext, result: Estimate, stale: tuple[str, ...]) -> list[str]:
    """What a reviewer must know before approving: each one a plain sentence."""
    notes = [f"Snapshot is stale: {note}" for note in stale]
    if context.inventory.project.example:
        notes.append("This project is marked as EXAMPLE data: the values illustrate the method.")
    for item in result.targets:
        if item.incomplete_inputs:
            notes.append(
                f"{item.name}: incomplete, unknown inputs: {', '.join(item.incomplete_inputs)}"
            )
        notes += [f"{item.name}: {flag.message}" for flag in item.quote_flags]
        if item.target.run_set:
            stats = context.run_set(item.target.run_set)
            unverified = stats.counted - stats.verified
            if unverified:
                notes.append(
                    f"{item.name}: quality not verified in {unverified} of {stats.counted} "
                    "counted runs (their logs hold no evaluation against the target)"
                )
        single = [
            i.label
            for i in item.inputs
            if i.key in OBSERVED_INPUTS and i.runs == 1 and i.provenance.kind == MEASURED
        ]
        if single:
            notes.append(
                f"{item.name}: measured on one run only ({', '.join(single)}): repeat the runs "
                "to see the range"
            )
    for o in result.overrides:
        where = f"{o.target}: " if o.target else ""
        notes.append(
            f"Assumption: {where}{INPUT_SPECS[o.input].label} set to {o.value:g} by "
            f"{o.who or 'unnamed'} ({o.why or 'no reason given'})"
        )
    notes.append("Porting risks are engineering effort in days and are not included in the totals.")
    return notes


def report_document(
    context: EstimateContext,
    analysis: Analysis,
    *,
    scenario: str | None = None,
    saved_at: datetime | None = None,
    stale: tuple[str, ...] = (),
    generated_at: datetime | None = None,
) -> dict[str, Any]:
    """The whole report as one JSON-ready document."""
    result = analysis.estimate
    project = context.inventory.project
    goal = context.inventory.goal
    by_id = {quote_id(q): q for q in context.book.quotes}
    used = [i.provenance.source for t in result.targets for i in t.inputs]
    quotes = {qid: by_id[qid] for qid in dict.fromkeys(used) if qid in by_id}
    return {
        "project": {
            "name": project.name,
            "owner": project.owner,
            "example": project.example,
            "model": context.inventory.model.name,
            "model_version": context.inventory.model.version,
        },
        "scenario": scenario,
        "scenario_saved_at": saved_at.isoformat() if saved_at else None,
        "stale": list(stale),
        "generated_at": (generated_at or datetime.now(UTC)).replace(microsecond=0).isoformat(),
        "prices_as_of": context.today.isoformat(),
        "goal": {
            "work_amount": goal.work_amount,
            "work_unit": goal.work_unit,
            "quality_metric": goal.quality_metric,
            "quality_threshold": goal.quality_threshold,
            "quality_direction": goal.quality_direction,
        },
        "formula": FORMULA,
        **estimate_document(result, analysis.bands),
        "quotes": [
            {
                "id": qid,
                "instance_type": q.instance_type,
                "region": q.region,
                "purchase_option": q.purchase_option,
                "usd_per_hour": q.usd_per_hour,
                "source": quote_source(q),
                "retrieved_at": q.retrieved_at.isoformat(),
            }
            for qid, q in quotes.items()
        ],
        "rates": [
            {
                "service": r.service.value,
                "region": r.region,
                "unit": r.unit,
                "usd_per_unit_first_tier": r.first_tier_usd_per_unit,
                "source": quote_source(r),
                "retrieved_at": r.retrieved_at.isoformat(),
            }
            for r in context.book.rates
            if r.region in {t.target.region for t in result.targets}
        ],
        "sensitivity": _sensitivity_document(analysis.sensitivities),
        "comparison": _comparison_document(analysis.comparison),
        "backtests": _backtest_document(context, result),
        "caveats": caveats(context, result, stale),
    }


def _backtest_document(context: EstimateContext, result: Estimate) -> list[dict[str, Any]]:
    """Model vs measured time to the result for each target's run set (``core.backtest``)."""
    from trntui.core.backtest import backtest

    out = []
    for name in dict.fromkeys(t.target.run_set for t in result.targets if t.target.run_set):
        check = backtest(context.observations, name)
        if check is None:
            out.append({"run_set": name, "runs": 0, "text": "not possible (no counted run "
                        "with a throughput and its work)"})  # fmt: skip
            continue
        out.append(
            {
                "run_set": name,
                "runs": len(check.runs),
                "model_s": check.model_s / len(check.runs),
                "measured_s": check.measured_s / len(check.runs),
                "gap": check.gap,
                "flagged": check.flagged,
                "from_launch": check.from_launch,
                "text": check.text(),
            }
        )
    return out
