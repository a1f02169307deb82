"""The budget-approval report rendered as Markdown, JSON or CSV.

The document (``core.report_document`` ``report_document``) holds everything a reviewer needs
to redo the estimate; the three renderers here only format that document, so the formats
cannot disagree. Unknown values stay ``null`` in JSON and empty in CSV, and read "unknown" in
Markdown: nothing is printed as 0 that is not 0.

A report is read by people, in a viewer or a spreadsheet, often far from the project: text from
the project's files reaches it only made harmless. Markdown and CSV show every control
character as an escape (``core.text.printable``), JSON escapes them itself; a CSV cell that a
spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``) starts with an apostrophe.
``Analysis`` and ``analyze`` live in ``core.analysis``; they and the document's names are
re-exported here.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from trntui.core.analysis import Analysis, analyze
from trntui.core.estimate import TERMS
from trntui.core.format import number, plural, ratio, usd, usd_per_unit
from trntui.core.report_document import (
    FORMULA,
    TERM_LABELS,
    caveats,
    estimate_document,
    report_document,
    shown_terms,
    target_document,
)
from trntui.core.text import printable

__all__ = [
    "FORMULA",
    "TERM_LABELS",
    "Analysis",
    "analyze",
    "caveats",
    "estimate_document",
    "render_csv",
    "render_json",
    "render_markdown",
    "render_report",
    "report_document",
    "shown_terms",
    "target_document",
    "usd",
]


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


# --- Markdown ------------------------------------------------------------------------------


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
    count = len(doc["overrides"])
    basis = (
        f"scenario **{doc['scenario']}** (saved {doc['scenario_saved_at']})"
        if doc["scenario"]
        else "the project's current data"
        + (f" and its working scenario ({plural(count, 'override')})" if count else "")
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
        f"Goal: {number(goal['work_amount'], 6)} {goal['work_unit'] or '(unit not set)'} of "
        f"training until {goal['quality_metric'] or '(metric not set)'} "
        f"{'>=' if goal['quality_direction'] == 'higher is better' else '<='} "
        f"{number(goal['quality_threshold'])}. Model: {project['model'] or 'not set'} "
        f"({project['model_version'] or 'version not recorded'}).",
        "",
        "## Summary",
        "",
    ]
    out += _table(
        [
            "Target",
            "Instances",
            "Total",
            "Next training P10-P90",
            f"Cost per {unit.removesuffix('s')}",
            "Status",
        ],
        [
            [
                t["name"],
                f"{t['instance_count']} x {t['instance_type']} ({t['region']}, "
                f"{t['purchase_option']})",
                usd(t["total_usd"]),
                t["band"]["text"] if t.get("band") else "",
                usd_per_unit(t["usd_per_unit"]),
                _status(t),
            ]
            for t in doc["targets"]
        ],
    )
    bands = [t["band"] for t in doc["targets"] if t.get("band") and t["band"]["method"]]
    if bands:
        out += [
            f"P10-P90: where the next training's cost lands 8 times in 10, by a "
            f"{bands[0]['method']}; n is the counted runs it rests on.",
            "",
        ]
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
                [q["id"], number(q["usd_per_hour"], 6), q["source"], q["retrieved_at"][:10]]
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
                [
                    r["title"],
                    r["kind"] or "",
                    r["status"],
                    number(r["effort_days"]),
                    r["owner"] or "",
                ]
                for r in doc["risks"]
            ],
        )
        out += [f"Open effort: {doc['open_risk_effort']}.", ""]
    else:
        out += ["No porting risk recorded.", ""]
    out += ["## Caveats", ""] + [f"- {note}" for note in doc["caveats"]] + [""]
    return printable("\n".join(out))


def _status(target: dict[str, Any]) -> str:
    """``complete``, ``assumptions only`` (a total no measurement supports) or what is
    missing."""
    if target["total_usd"] is None:
        headline: str = target["headline"]
        return headline
    return "assumptions only (no input measured)" if target.get("assumptions_only") else "complete"


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
            [
                s["label"],
                number(s["hours_per_instance"]),
                number(s["instance_hours"]),
                usd(s["usd"]),
            ]
            for s in t["stages"]
        ]
        + [["Total billed", "", number(t["instance_hours"]), ""]],
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
            observed = f"{number(i['low'])} to {number(i['high'])} over {plural(i['runs'], 'run')}"
        shown_unit = i["unit"].replace("work units", t["work_unit"] or "work units")
        rows.append(
            [
                i["label"],
                number(i["value"], 6),
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
                        number(b["low"]),
                        number(b["high"]),
                        usd(b["total_at_low_usd"]),
                        usd(b["total_at_high_usd"]),
                        usd(b["swing_usd"]),
                    ]
                    for b in s["bars"]
                ],
            )
        out += [f"- block step: {step}" for step in s.get("block_steps", [])]
        out += [f"- not varied: {n['input']} ({n['why']})" for n in s["not_varied"]] + [""]
    out += ["### Where the next training's cost lands", ""]
    out += _table(
        ["Target", "P10", "P50", "P90", "Runs (n)", "Method", "Drawn per run / why no band"],
        [
            [
                t["name"],
                usd(b["p10_usd"]),
                usd(b["p50_usd"]),
                usd(b["p90_usd"]),
                b["runs"],
                b["method"] or "",
                ", ".join(b["drawn_per_run"]) if b["method"] else b["reason"],
            ]
            for t in doc["targets"]
            if (b := t.get("band"))
        ],
    )
    return out


def _comparison_markdown(c: dict[str, Any]) -> list[str]:
    out = ["## Trainium3 vs GPU: cost to the same quality result", ""]
    if c.get("trainium_target") and c.get("gpu_target"):
        out += [
            f"{c['trainium_target']} against {c['gpu_target']} "
            f"(the GPU target: {c.get('gpu_choice') or 'the first GPU target'}).",
            "",
        ]
    plans = c.get("plans", [])
    if plans:
        yes_no = {True: "NO", False: "yes", None: "not checked"}
        out += _table(
            ["Target", "Wall clock (days)", "Finishes", "In time", "In wall clock", "In budget"],
            [
                [
                    p["target"],
                    number(p["wall_clock_days"]),
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
            + usd(c.get("porting_cost_usd"))
            + (f"; pays off after {plural(trainings, 'training')}" if trainings else "")
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
    needs = c.get("requirement")
    if needs is not None:
        out += ["**Before the trial, Trainium3 must reach** (requirements, not measurements):", ""]
        out += [f"- {line}" for line in needs["text"]] + [""]
    if c.get("trial_runs"):
        out += [f"Trial runs: {c['trial_runs']['text']}.", ""]
    if c["comparable"]:
        confirmed = (
            "Same protocol confirmed."
            if c.get("protocol_confirmed")
            else "No protocol fact differs, but the same protocol is not confirmed: a fact "
            "is stated by one side only, or by neither."
        )
        out += [
            f"{confirmed} Trainium3 / GPU cost ratio: **{ratio(c['cost_ratio'])}**; "
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
                f"observed {number(even['observed_throughput'])} {even['unit']} (range "
                f"{number(even['observed_low'])} to {number(even['observed_high'])})"
                if even.get("basis", "observed") == "observed"
                else f"assumed {number(even['observed_throughput'])} {even['unit']} (an override, "
                "not a measurement)"
            )
            out += [
                f"Break-even useful throughput for {c['trainium_target']}: "
                f"{number(required)} {even['unit']}; {seen}.",
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


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a cell as a formula (OWASP's list for CSV injection)."""


def _csv_cell(value: Any) -> Any:
    """A number as it is; text printable, and a leading apostrophe when it would be a formula
    (a target named ``=2+5+cmd|' /C calc'!A0``)."""
    if not isinstance(value, str):
        return value
    return "'" + printable(value) if value.startswith(_FORMULA_START) else printable(value)


def render_csv(doc: dict[str, Any]) -> str:
    """One row per figure, so a spreadsheet can filter and pivot it; unknown is empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def row(section: str, target: str, item: str, value: Any, unit: str = "", *rest: str) -> None:
        cells = [section, target, item, "" if value is None else value, unit, *rest]
        writer.writerow([_csv_cell(cell) for cell in cells] + [""] * (3 - len(rest)))

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
    for t in doc["targets"]:
        band = t.get("band")
        if band is None:
            continue
        for p in ("p10_usd", "p50_usd", "p90_usd"):
            row("band", t["name"], p, band[p], "USD", "", band["method"] or "", band["reason"])
        row("band", t["name"], "runs", band["runs"], "runs")
    c = doc["comparison"]
    row("comparison", "", "comparable", c["comparable"], "", "", "", "; ".join(c["reasons"]))
    row("comparison", "", "gpu_target", c["gpu_target"], "", "", "", c.get("gpu_choice", ""))
    row("comparison", "", "cost_ratio", c["cost_ratio"])
    row("comparison", "", "saving_usd", c["saving_usd"], "USD")
    if c.get("requirement") and c["requirement"]["break_even_throughput"] is not None:
        needs = c["requirement"]
        row(
            "comparison",
            c["trainium_target"],
            "required_throughput",
            needs["break_even_throughput"],
            needs["unit"],
            "requirement",
            "",
            "; ".join(needs["text"]),
        )
        row(
            "comparison",
            c["trainium_target"],
            "required_time_to_result_h",
            needs["break_even_time_to_result_h"],
            "hours",
            "requirement",
        )
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


def render_report(document: dict[str, Any], report_format: str) -> str:
    """``document`` in ``report_format``: ``md``, ``json`` or ``csv`` (``trntui report`` and
    the app's Write report dialog both render through this)."""
    renderers = {"md": render_markdown, "json": render_json, "csv": render_csv}
    return renderers[report_format](document)
