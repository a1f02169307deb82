"""The budget-approval report: one document, rendered as Markdown, JSON or CSV.

``report_document`` gathers everything a reviewer needs to redo the estimate (SPEC §5,
"keep everything traceable"): the inputs with their provenance, the price quotes with their
source and date, the formula, each billed stage, the cost terms, the sensitivity table over the
observed range, the resampled P10/P50/P90, the Trainium3-vs-GPU comparison with its protocol
check and decision note, the porting risks in days, and the caveats. The three renderers only
format that document, so the formats cannot disagree. Unknown values stay ``null`` in JSON and
empty in CSV, and read "unknown" in Markdown: nothing is printed as 0 that is not 0.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from trntui.core.backtest import backtest
from trntui.core.comparison import Comparison, compare
from trntui.core.estimate import (
    INPUT_SPECS,
    MEASURED,
    OBSERVED_INPUTS,
    TERMS,
    Estimate,
    EstimateContext,
    Override,
    TargetEstimate,
    TargetInputs,
    estimate,
    quote_id,
    quote_source,
    shown_unit,
)
from trntui.core.format import usd, usd_per_unit
from trntui.core.sensitivity import (
    DEFAULT_DRAWS,
    Distribution,
    Sensitivity,
    resample,
    sensitivity,
)

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
    """The cost terms worth a line: the unused block time only where a target pays blocks."""
    return tuple(term for term in TERMS if block_billed or term != "idle_usd")


def _number(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def target_document(item: TargetEstimate) -> dict[str, Any]:
    """One target as JSON: every term (null when unknown) and each input's provenance."""
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


def estimate_document(result: Estimate) -> dict[str, Any]:
    """The JSON of ``trntui estimate --json``."""
    return {
        "work_unit": result.work_unit,
        "targets": [target_document(item) for item in result.targets],
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


def _distribution_document(items: tuple[Distribution, ...]) -> list[dict[str, Any]]:
    return [
        {
            "target": d.target,
            "draws": d.draws,
            "runs": d.runs,
            "seed": d.seed,
            "p10_usd": _number(d.p10_usd),
            "p50_usd": _number(d.p50_usd),
            "p90_usd": _number(d.p90_usd),
            "reason": d.reason,
        }
        for d in items
    ]


def _comparison_document(comparison: Comparison) -> dict[str, Any]:
    even = comparison.break_even
    return {
        "trainium_target": comparison.trainium.name if comparison.trainium else None,
        "gpu_target": comparison.gpu.name if comparison.gpu else None,
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


@dataclass(frozen=True)
class Analysis:
    """Everything the Scenarios screen and the report show for one set of inputs."""

    estimate: Estimate
    comparison: Comparison
    sensitivities: tuple[Sensitivity, ...]
    distributions: tuple[Distribution, ...]


def analyze(
    context: EstimateContext,
    overrides: Sequence[Override] = (),
    *,
    prepared: Sequence[TargetInputs] | None = None,
    draws: int = DEFAULT_DRAWS,
    seed: int = 0,
) -> Analysis:
    """Estimate, comparison, tornado bars and P10/P50/P90 after an edit, in one call.

    Raises ``InvalidInputError`` for a bad override, before anything is computed, so the
    caller keeps showing its last valid ``Analysis``. Pass ``prepared`` (``prepare(context)``)
    when only overrides changed since the last call.
    """
    result = estimate(context, overrides, prepared)
    return Analysis(
        result,
        compare(context, result),
        sensitivity(result),
        resample(result, draws=draws, seed=seed),
    )


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
        **estimate_document(result),
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
        "distribution": _distribution_document(analysis.distributions),
        "comparison": _comparison_document(analysis.comparison),
        "backtests": _backtest_document(context, result),
        "caveats": caveats(context, result, stale),
    }


def _backtest_document(context: EstimateContext, result: Estimate) -> list[dict[str, Any]]:
    """Model vs measured time to the result for each target's run set (``core.backtest``)."""
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


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


# --- Markdown ------------------------------------------------------------------------------


def _num(value: float | None, digits: int = 4) -> str:
    return "unknown" if value is None else f"{value:,.{digits}g}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def render_markdown(doc: dict[str, Any]) -> str:
    project = doc["project"]
    unit = doc["work_unit"] or "unit"
    out = [f"# Training cost estimate: {project['name']}", ""]
    if project["example"]:
        out += ["> **EXAMPLE DATA**: the values illustrate the method; they are not a quote.", ""]
    basis = (
        f"scenario **{doc['scenario']}** (saved {doc['scenario_saved_at']})"
        if doc["scenario"]
        else "the project's current data"
    )
    out += [
        f"Estimate from {basis}; generated {doc['generated_at']}; prices checked against "
        f"{doc['prices_as_of']}. Owner: {project['owner'] or 'not set'}.",
        "",
    ]
    if doc["stale"]:
        out += ["> **Stale snapshot**: the project changed since it was saved:", ">"]
        out += [f"> - {note}" for note in doc["stale"]] + [""]
    goal = doc["goal"]
    out += [
        f"Goal: {_num(goal['work_amount'], 6)} {goal['work_unit'] or '(unit not set)'} of "
        f"training until {goal['quality_metric'] or '(metric not set)'} "
        f"{'>=' if goal['quality_direction'] == 'higher is better' else '<='} "
        f"{_num(goal['quality_threshold'])}. Model: {project['model'] or 'not set'} "
        f"({project['model_version'] or 'version not recorded'}).",
        "",
        "## Summary",
        "",
    ]
    out += _table(
        ["Target", "Instances", "Total", f"Cost per {unit.removesuffix('s')}", "Status"],
        [
            [
                t["name"],
                f"{t['instance_count']} x {t['instance_type']} ({t['region']}, "
                f"{t['purchase_option']})",
                usd(t["total_usd"]),
                usd_per_unit(t["usd_per_unit"]),
                "complete" if t["total_usd"] is not None else t["headline"],
            ]
            for t in doc["targets"]
        ],
    )
    decision = doc["comparison"]["decision"]
    out += [f"**Decision: {decision['action']}.**", ""]
    out += [f"- {fact}" for fact in decision["facts"]] + [""]
    out += ["## Formula", "", "```", doc["formula"], "```", ""]
    if doc.get("backtests"):
        out += [
            "## Back-test: the model applied to each trial's own work",
            "",
            "Modelled vs measured time to the result per counted run (from launch where the "
            "logs show it, else from the first log line); a gap above 3% is flagged.",
            "",
        ]
        out += _table(
            ["Run set", "Runs", "Model vs measured", "Flag"],
            [
                [b["run_set"], b["runs"], b["text"], "FLAGGED" if b.get("flagged") else ""]
                for b in doc["backtests"]
            ],
        )
    for target in doc["targets"]:
        out += _target_markdown(target)
    out += ["## Price quotes", ""]
    if doc["quotes"]:
        out += _table(
            ["Quote", "USD per hour", "Source", "Retrieved"],
            [
                [q["id"], _num(q["usd_per_hour"], 6), q["source"], q["retrieved_at"][:10]]
                for q in doc["quotes"]
            ],
        )
    else:
        out += ["No instance quote was found for any target.", ""]
    if doc["rates"]:
        out += _table(
            ["Side service", "Region", "Rate (first tier)", "Source"],
            [
                [
                    r["service"],
                    r["region"],
                    f"${r['usd_per_unit_first_tier']:g}/{r['unit']}",
                    r["source"],
                ]
                for r in doc["rates"]
            ],
        )
    out += _sensitivity_markdown(doc)
    out += _comparison_markdown(doc["comparison"])
    out += ["## Porting risks (engineering days, not in the totals)", ""]
    if doc["risks"]:
        out += _table(
            ["Risk", "Kind", "Status", "Effort (days)", "Owner"],
            [
                [r["title"], r["kind"] or "", r["status"], _num(r["effort_days"]), r["owner"] or ""]
                for r in doc["risks"]
            ],
        )
        out += [f"Open effort: {doc['open_risk_effort']}.", ""]
    else:
        out += ["No porting risk recorded.", ""]
    out += ["## Caveats", ""] + [f"- {note}" for note in doc["caveats"]] + [""]
    return "\n".join(out)


def _target_markdown(t: dict[str, Any]) -> list[str]:
    out = [f"## {t['name']}: {usd(t['total_usd'])}", ""]
    if t["total_usd"] is None:
        out += [f"**{t['headline']}**", ""]
    if t.get("quote_reason"):
        out += [f"Instance price: {t['quote_reason']}.", ""]
    out += [f"Billed time per stage ({t['instance_count']} x {t['instance_type']}):", ""]
    out += _table(
        ["Stage", "Hours per instance", "Instance-hours", "Cost"],
        [
            [s["label"], _num(s["hours_per_instance"]), _num(s["instance_hours"]), usd(s["usd"])]
            for s in t["stages"]
        ]
        + [["Total billed", "", _num(t["instance_hours"]), ""]],
    )
    block = t.get("capacity_block") or {}
    if block.get("billed_in_blocks"):
        out += [f"Capacity Block: {block['text']}.", ""]
    out += _table(
        ["Cost term", "USD"],
        [
            [TERM_LABELS[term], usd(t.get(term))]
            for term in shown_terms(bool(block.get("billed_in_blocks")))
        ]
        + [["**Total**", f"**{usd(t['total_usd'])}**"]],
    )
    commitment = (t.get("term_commitment") or {}).get("text")
    if commitment:
        out += [f"Term commitment: {commitment}.", ""]
    rows = []
    for i in t["inputs"].values():
        observed = ""
        if i["low"] is not None and i["high"] is not None:
            observed = f"{_num(i['low'])} to {_num(i['high'])} over {i['runs']} runs"
        shown_unit = i["unit"].replace("work units", t["work_unit"] or "work units")
        rows.append(
            [
                i["label"],
                _num(i["value"], 6),
                shown_unit,
                i["provenance"],
                i["source"],
                i["detail"],
                observed,
            ]
        )
    out += ["Inputs:", ""]
    out += _table(["Input", "Value", "Unit", "Provenance", "Source", "Detail", "Range seen"], rows)
    return out


def _sensitivity_markdown(doc: dict[str, Any]) -> list[str]:
    out = ["## Sensitivity over the range seen in the repeated runs", ""]
    for s in doc["sensitivity"]:
        out += [f"### {s['target']} (base {usd(s['base_total_usd'])})", ""]
        if s["bars"]:
            out += _table(
                ["Input", "Low", "High", "Total at low", "Total at high", "Swing"],
                [
                    [
                        b["label"],
                        _num(b["low"]),
                        _num(b["high"]),
                        usd(b["total_at_low_usd"]),
                        usd(b["total_at_high_usd"]),
                        usd(b["swing_usd"]),
                    ]
                    for b in s["bars"]
                ],
            )
        out += [f"- block step: {step}" for step in s.get("block_steps", [])]
        out += [f"- not varied: {n['input']} ({n['why']})" for n in s["not_varied"]] + [""]
    out += ["### Spread of the total over the observed runs", ""]
    out += _table(
        ["Target", "P10", "P50", "P90", "Draws", "Runs drawn from", "Note"],
        [
            [
                d["target"],
                usd(d["p10_usd"]),
                usd(d["p50_usd"]),
                usd(d["p90_usd"]),
                d["draws"],
                d["runs"],
                d["reason"] or f"seed {d['seed']}",
            ]
            for d in doc["distribution"]
        ],
    )
    return out


def _comparison_markdown(c: dict[str, Any]) -> list[str]:
    out = ["## Trainium3 vs GPU: cost to the same quality result", ""]
    plans = c.get("plans", [])
    if plans:
        yes_no = {True: "NO", False: "yes", None: "not checked"}
        out += _table(
            ["Target", "Wall clock (days)", "Finishes", "In time", "In wall clock", "In budget"],
            [
                [
                    p["target"],
                    _num(p["wall_clock_days"]),
                    p["finish"] or "unknown",
                    yes_no[p["late"]],
                    yes_no[p["over_wall_clock"]],
                    yes_no[p["over_budget"]],
                ]
                for p in plans
            ],
        )
    if c.get("payback_reason"):
        trainings = c.get("payback_trainings")
        out += [
            "Porting cost: "
            + (usd(c["porting_cost_usd"]) if c.get("porting_cost_usd") is not None else "unknown")
            + (f"; pays off after {trainings} training(s)" if trainings else "")
            + f" ({c['payback_reason']}).",
            "",
        ]
    checks = c.get("fact_checks", [])
    if checks:
        out += ["| Protocol fact | Trainium3 logs | GPU logs | |", "|---|---|---|---|"]
        out += [
            f"| {f['fact']} | {f['trainium'] or '-'} | {f['gpu'] or '-'} | {f['status']} |"
            for f in checks
        ]
        out.append("")
    if c["comparable"]:
        confirmed = (
            "Same protocol confirmed."
            if c.get("protocol_confirmed")
            else "No protocol fact differs, but the same protocol is not confirmed: a fact "
            "is stated by one side only, or by neither."
        )
        out += [
            f"{confirmed} Trainium3 / GPU cost ratio: **{c['cost_ratio']:.3f}**; "
            + (
                f"Trainium3 saves {usd(c['saving_usd'])}."
                if c["saving_usd"] >= 0
                else f"Trainium3 costs {usd(-c['saving_usd'])} more."
            ),
            "",
        ]
        even = c["break_even"]
        if even is not None:
            required = even["required_throughput"]
            seen = (
                f"observed {_num(even['observed_throughput'])} {even['unit']} (range "
                f"{_num(even['observed_low'])} to {_num(even['observed_high'])})"
                if even.get("basis", "observed") == "observed"
                else f"assumed {_num(even['observed_throughput'])} {even['unit']} (an override, "
                "not a measurement)"
            )
            out += [
                f"Break-even useful throughput for {c['trainium_target']}: "
                f"{_num(required)} {even['unit']}; {seen}.",
                "",
            ]
    else:
        out += ["**Not merged into one ratio**: the results are shown side by side because:", ""]
        out += [f"- {reason}" for reason in c["reasons"]] + [""]
    if c["protocols"]:
        fields = [
            ("Model version", "model_version"),
            ("Benchmark / dataset (logs)", "benchmark"),
            ("Quality metric (logs)", "quality_metric"),
            ("Quality threshold", "quality_threshold"),
            ("Work to finish", "work_amount"),
            ("Throughput unit measured", "measured_unit"),
            ("Runs (counted, quality verified)", "runs"),
        ]
        header = ["Protocol", *(p["target"] for p in c["protocols"])]
        rows = []
        for label, key in fields:
            row = [label]
            for p in c["protocols"]:
                value = p[key]
                if key == "runs":
                    value = f"{p['runs']} ({p['counted_runs']}, {p['verified_runs']})"
                row.append("not recorded" if value is None else value)
            rows.append(row)
        out += _table(header, rows)
    return out


# --- CSV -----------------------------------------------------------------------------------

CSV_COLUMNS = ("section", "target", "item", "value", "unit", "provenance", "source", "detail")


def render_csv(doc: dict[str, Any]) -> str:
    """One row per figure, so a spreadsheet can filter and pivot it; unknown is empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def row(section: str, target: str, item: str, value: Any, unit: str = "", *rest: str):
        writer.writerow(
            [
                section,
                target,
                item,
                "" if value is None else value,
                unit,
                *rest,
                *([""] * (3 - len(rest))),
            ]
        )

    for t in doc["targets"]:
        name = t["name"]
        for key, i in t["inputs"].items():
            shown_unit = i["unit"].replace("work units", t["work_unit"] or "work units")
            row(
                "input",
                name,
                key,
                i["value"],
                shown_unit,
                i["provenance"],
                i["source"],
                i["detail"],
            )
        for s in t["stages"]:
            row("stage_instance_hours", name, s["key"], s["instance_hours"], "instance-hours")
            row("stage_usd", name, s["key"], s["usd"], "USD")
        for term in TERMS:
            row("term", name, term, t.get(term), "USD")
        row(
            "total",
            name,
            "total_usd",
            t["total_usd"],
            "USD",
            "",
            "",
            "; ".join(t["incomplete_inputs"]),
        )
        row("total", name, "instance_hours", t["instance_hours"], "instance-hours")
        row("total", name, "usd_per_unit", t["usd_per_unit"], f"USD/{t['work_unit']}")
        block = t.get("capacity_block") or {}
        if block.get("billed_in_blocks"):
            for key in ("paid_hours_per_instance", "wall_hours_per_instance"):
                row("capacity_block", name, key, block.get(key), "hours", "", "", block["text"])
        commitment = t.get("term_commitment") or {}
        if commitment.get("term_years") is not None:
            row(
                "term_commitment",
                name,
                "beyond_this_training_usd",
                commitment.get("beyond_this_training_usd"),
                "USD",
                "",
                "",
                commitment["text"],
            )
    for q in doc["quotes"]:
        row(
            "quote",
            "",
            q["id"],
            q["usd_per_hour"],
            "USD/hour",
            "quoted",
            q["source"],
            q["retrieved_at"],
        )
    for s in doc["sensitivity"]:
        for b in s["bars"]:
            row(
                "sensitivity_swing",
                s["target"],
                b["input"],
                b["swing_usd"],
                "USD",
                "measured",
                "",
                f"{b['low']} to {b['high']}",
            )
    for d in doc["distribution"]:
        for p in ("p10_usd", "p50_usd", "p90_usd"):
            row("distribution", d["target"], p, d[p], "USD", "", "", d["reason"])
    c = doc["comparison"]
    row("comparison", "", "comparable", c["comparable"], "", "", "", "; ".join(c["reasons"]))
    row("comparison", "", "cost_ratio", c["cost_ratio"])
    row("comparison", "", "saving_usd", c["saving_usd"], "USD")
    if c["break_even"]:
        even = c["break_even"]
        row(
            "comparison",
            c["trainium_target"],
            "break_even_throughput",
            even["required_throughput"],
            even["unit"],
            "derived",
            "",
            even["note"],
        )
    row("decision", "", c["decision"]["action"], "", "", "", "", "; ".join(c["decision"]["facts"]))
    for r in doc["risks"]:
        row("risk", "", r["title"], r["effort_days"], "days", r["status"])
    for note in doc["caveats"]:
        row("caveat", "", note, "")
    return buffer.getvalue()
