"""Rich renderables and text of the Scenarios screen: the estimate table, its notes, the inputs,
the predictive band, Trainium3 vs GPU and an opened snapshot.

Pure functions of what they are given (an ``Estimate``, an ``Analysis``, a ``Scenario``): nothing
here reads the app or computes an estimate, so the tab widgets and the dialogs only place what
these return.
"""

from __future__ import annotations

import functools

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from trntui.core.comparison import CHOSEN, FIRST_GPU, gpu_target_names, pick_gpu
from trntui.core.estimate import INPUT_SPECS, Estimate, TargetEstimate
from trntui.core.estimate import Input as EstimateInput
from trntui.core.format import UNKNOWN, number, ratio, usd, usd_per_unit, wall_clock, with_unit
from trntui.core.prediction import METHOD_TEXT, Band
from trntui.core.report import TERM_LABELS, Analysis, shown_terms
from trntui.store.scenarios import OVERRIDE, DiffRow, Scenario
from trntui.ui.format import fit_words, name_labels, plural, title_name


class EstimateTable:
    """The estimate as a table that fits the width it is drawn in.

    Every figure is shown whole: the value columns never shrink below their widest cell, and
    a target name or instance type longer than its column wraps. A target name that would take
    more than ``HEADER_LINES`` lines is cut between words (a 200-character name pushed every
    figure below the screen) and written in full under the table. Row labels make room first
    by naming the stages shortly (``_SHORT_STAGES``), then are cut (with an ellipsis), down to
    30 cells; when even that is not enough, stages show their cost only (the billed hours stay
    in their own row) and the labels get what is left.
    """

    def __init__(self, result: Estimate) -> None:
        self.result = result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        result, room = self.result, options.max_width
        labels = _label_width(result, short=False)
        full = _cell_widths(result, compact=False)
        if room - _table_width(0, full) >= min(labels, _LABELS_BEFORE_COMPACT):
            widths, compact, label = full, False, min(labels, room - _table_width(0, full))
        else:
            # Stages show their cost only. Each column as wide as its widest figure, or its
            # instance type when that leaves the labels 20 cells; the labels get the rest.
            compact = True
            figures = _cell_widths(result, compact=True, skip_instances=True)
            types = [len(t.target.instance_type) for t in result.targets]
            roomy = [max(f, t) for f, t in zip(figures, types, strict=True)]
            widths = roomy if room - _table_width(0, roomy) >= 20 else figures
            label = max(8, min(labels, room - _table_width(0, widths)))
        short = label < labels
        if short:  # the short stage names may leave cells to the target names
            label = min(label, _label_width(result, short=True))
        # Room to spare goes to the target names, so that fewer of them wrap.
        spare = room - _table_width(label, widths)
        for index, item in enumerate(result.targets):
            grow = min(spare, max(0, Text(item.name).cell_len - widths[index]))
            widths[index] += grow
            spare -= grow
        names = [item.name for item in result.targets]
        headers = header_labels(names, widths, console)
        yield estimate_table(
            result,
            compact=compact,
            widths=widths,
            label_width=label,
            short=short,
            headers=headers,
        )
        for name, header in zip(names, headers, strict=True):
            if header != name:
                yield Text.assemble((f"{header}", "bold"), (" in full: ", "dim"), name)


HEADER_LINES = 3
"""Lines a target's name may take above its column before it is cut."""


def header_labels(names: list[str], widths: list[int], console: Console) -> list[str]:
    """Each name as it heads a column ``widths`` cells wide: whole where it wraps into at most
    ``HEADER_LINES`` lines, else the most of it, cut between words (``fit_words``), that does;
    where two cut names would read the same, one line of each that tells them apart."""

    def lines(text: str, width: int) -> int:
        return len(Text(text).wrap(console, width))

    labels = []
    for name, width in zip(names, widths, strict=True):
        label = name
        room = width * HEADER_LINES
        while lines(label, width) > HEADER_LINES and room > 1:
            label, room = fit_words(name, room), room - 1
        labels.append(label)
    if len(set(labels)) < len(labels):
        apart = name_labels(names, min(widths))  # by name (distinct_labels sorts them)
        return [apart[name] for name in names]
    return labels


_LABELS_BEFORE_COMPACT = 30
"""Row labels are cut down to this many cells before stages give up their hours."""

_SHORT_STAGES = {
    "startup_h": "Launch and compile",
    "training_h": "Training (useful work)",
    "overhead_h": "Checkpoints, evals, stalls",
    "retry_h": "Failures and retries",
}
"""The stages named in fewer cells, for a table too narrow for their full labels (the Inputs
tab and the report keep those)."""


def _label_width(result: Estimate, *, short: bool) -> int:
    return max(Text(str(label)).cell_len for label, _ in _rows(result, False, short=short))


def _table_width(label: int, widths: list[int]) -> int:
    """Cells a table takes: each column and its one-cell padding on both sides."""
    return label + sum(widths) + 2 * (len(widths) + 1)


def _cell_widths(result: Estimate, *, compact: bool, skip_instances: bool = False) -> list[int]:
    rows = _rows(result, compact)[1 if skip_instances else 0 :]
    return [
        max(Text(str(cells[index])).cell_len for _, cells in rows)
        for index in range(len(result.targets))
    ]


def estimate_table(
    result: Estimate,
    *,
    compact: bool = False,
    widths: list[int] | None = None,
    label_width: int | None = None,
    short: bool = False,
    headers: list[str] | None = None,
) -> Table:
    """Stages (instance-hours and cost; ``compact``: cost only), terms, total and cost per
    unit, one column a target (``widths``: each one's width; ``label_width``: the labels';
    ``short``: the stages' short names; ``headers``: the columns' names, cut to fit)."""
    table = Table(box=None, padding=(0, 1), show_edge=False, expand=False)
    table.add_column("", no_wrap=True, overflow="ellipsis", style="dim", width=label_width)
    for index, item in enumerate(result.targets):
        width = None if widths is None else widths[index]
        header = item.name if headers is None else headers[index]
        table.add_column(header, justify="right", width=width, overflow="fold")
    for label, cells in _rows(result, compact, short=short):
        table.add_row(label, *cells)
    return table


def _rows(
    result: Estimate, compact: bool, *, short: bool = False
) -> list[tuple[str | Text, list[str | Text]]]:
    targets = result.targets
    rows: list[tuple[str | Text, list[str | Text]]] = [
        ("Instances", [f"{t.target.instance_count} x {t.target.instance_type}" for t in targets]),
        ("Billed instance-hours", [with_unit(t.instance_hours, "h") for t in targets]),
    ]
    for index, (key, label) in enumerate(_stage_labels(targets)):
        if short:
            label = _SHORT_STAGES.get(key, label)
        cells: list[str | Text] = []
        for t in targets:
            stage = t.stages[index]
            if compact:
                cells.append(usd(stage.usd))
            elif stage.instance_hours is None:
                cells.append(UNKNOWN)
            else:
                cells.append(f"{stage.instance_hours:,.3g} h {usd(stage.usd)}")
        rows.append((f"  {label}", cells))
    blocks = any(t.block_billed for t in targets)
    if blocks:
        rows.append(("  Block h paid / used per instance", [_block_cell(t) for t in targets]))
    for term in shown_terms(blocks):
        rows.append((TERM_LABELS[term], [usd(t.term(term)) for t in targets]))
    rows.append(
        (
            Text("Total", style="bold"),
            [
                Text(usd(t.total_usd), style="bold")
                if t.complete
                else Text("incomplete", style="bold yellow")
                for t in targets
            ],
        )
    )
    if any(t.term_years is not None for t in targets):
        rows.append(
            (
                "Term still owes (not in total)",
                ["-" if t.term_years is None else usd(t.commitment_beyond_usd) for t in targets],
            )
        )
    unit = (result.work_unit or "unit").removesuffix("s")
    rows.append((f"Per {unit}", [usd_per_unit(t.usd_per_unit) for t in targets]))
    return rows


def _block_cell(item: TargetEstimate) -> str:
    if not item.block_billed:
        return "-"
    if item.paid_hours is None or item.wall_hours is None:
        return "unknown"
    return f"{item.paid_hours:,.0f} / {item.wall_hours:,.1f}"


def _stage_labels(targets: tuple[TargetEstimate, ...]) -> list[tuple[str, str]]:
    return [(s.key, s.label) for s in targets[0].stages] if targets else []


def estimate_notes(result: Estimate, bands: tuple[Band, ...] = ()) -> Text:
    """What the table cannot hold: where the next training's cost lands (``bands``), missing
    inputs, quote flags, porting risks in days."""
    text = Text()
    for item, band in zip(result.targets, bands, strict=False):
        text.append_text(band_line(item, band))
        text.append("\n")
    if bands:
        text.append(f"  ({METHOD_TEXT})\n", style="dim")
    for item in result.targets:
        if not item.complete:
            text.append(f"{item.name}: {item.headline()}\n", style="yellow")
        for flag in item.quote_flags:
            text.append(f"{item.name}: {flag.message}\n", style="dim")
    open_risks = [r for r in result.risks if r.status != "resolved"]
    text.append("\nPorting risks", style="bold")
    text.append(
        f" (engineering days, never instance hours; not in the totals): "
        f"{result.risk_effort_text} over {len(open_risks)} open\n"
    )
    if not result.risks:
        text.append("  none recorded\n", style="dim")
    for risk in result.risks:
        days = "? d" if risk.effort_days is None else f"{risk.effort_days:g} d"
        style = "dim" if risk.status == "resolved" else ""
        text.append(f"  {risk.status:<10} {days:>6}  {risk.title}\n", style=style)
    return text


def input_rows(result: Estimate) -> list[tuple[str | None, EstimateInput]]:
    """(target, input) rows: an input shared by every target is listed once (target None)."""
    rows: list[tuple[str | None, EstimateInput]] = []
    targets = result.targets
    if not targets:
        return rows
    for key in INPUT_SPECS:
        values = [t.input(key) for t in targets]
        first = values[0]
        shared = all(
            (v.value, v.provenance, v.low, v.high) == (first.value, first.provenance, first.low,
                                                        first.high)
            for v in values
        )  # fmt: skip
        if shared and len(targets) > 1:
            rows.append((None, first))
        else:
            rows += [(t.name, v) for t, v in zip(targets, values, strict=True)]
    return rows


def input_detail(item: EstimateInput, work_unit: str | None) -> Text:
    text = Text()
    text.append(f"{item.label} = {with_unit(item.value, item.unit, work_unit)}", style="bold")
    text.append(f"\n{item.provenance}")
    if item.low is not None and item.high is not None:
        runs = f" over {plural(item.runs, 'run')}" if item.runs else ""
        low, high = (with_unit(v, item.unit, work_unit) for v in (item.low, item.high))
        text.append(f"\nobserved range {low} - {high}{runs}")
    return text


def band_line(item: TargetEstimate, band: Band) -> Text:
    """``GPU: next training P10-P90 $38.19-$42.79 (t, n=10)``, or why there is no band; a
    total made only of assumptions says so first."""
    text = Text()
    text.append(f"{item.name}: ", style="bold")
    if item.assumptions_only:
        text.append("assumptions only (no input is measured); ", style="bold magenta")
    text.append("next training ")
    if band.p10_usd is None:
        text.append(f"no band: {band.reason}", style="yellow")
    else:
        text.append(f"P10-P90 {usd(band.p10_usd)}-{usd(band.p90_usd)}", style="bold")
        text.append(f" (t, n={band.runs}; P50 {usd(band.p50_usd)})")
    return text


def band_text(analysis: Analysis, index: int) -> Text:
    """The band of the target at ``index``, with its method and what each run gave to it."""
    item, band = analysis.estimate.targets[index], analysis.bands[index]
    text = band_line(item, band)
    if band.p10_usd is None:
        return text
    text.append(f"\n  {METHOD_TEXT}", style="dim")
    if band.drawn:
        text.append(f"; per run: {', '.join(band.drawn)}", style="dim")
    if band.unexplained_s is not None and abs(band.unexplained_s) >= 1:
        text.append(
            f"; and {number(band.unexplained_s, 3)} s a run (median) no stage explains",
            style="dim",
        )
    return text


def comparison_text(analysis: Analysis) -> Text:
    comparison = analysis.comparison
    text = Text()
    if comparison.gpu is not None:
        # Which GPU target, and how to pick another (t): first, so it is never scrolled off.
        count = len(gpu_target_names(analysis.estimate))
        text.append(f"Against {title_name(comparison.gpu.name)}", style="bold")
        hint = f"t: next of {count}" if count > 1 else "the only GPU target"
        stale = comparison.gpu_choice not in (CHOSEN, FIRST_GPU)
        text.append(f" ({comparison.gpu_choice}; {hint})\n", style="yellow" if stale else "dim")
    if comparison.comparable:
        text.append("Cost to reach the same quality result", style="bold")
        text.append(" (not price per hour)\n")
    else:
        # Never headed "the same result" when the gate found they are not (the reasons below).
        text.append("Cost of each result, side by side", style="bold")
        text.append(" (no ratio: see why below)\n", style="yellow")
    unit = (analysis.estimate.work_unit or "unit").removesuffix("s")  # as the Estimate tab
    for item in (comparison.trainium, comparison.gpu):
        if item is None:
            continue
        per = "" if item.usd_per_unit is None else f", {usd_per_unit(item.usd_per_unit)}/{unit}"
        text.append(f"  {title_name(item.name)}: ", style="bold")
        text.append(f"{item.headline()}{per}")
        if item.assumptions_only:
            text.append(" ASSUMPTIONS ONLY (no input is measured)", style="bold magenta")
        text.append("\n")
    # Only the first target of each family is compared: say which others are left out, so a
    # third target is not taken for compared (its total is on the Estimate tab).
    compared = {item.name for item in (comparison.trainium, comparison.gpu) if item is not None}
    left_out = [
        title_name(item.name)
        for item in analysis.estimate.targets
        if item.name not in compared and item.target.accelerator_family in ("Trainium3", "GPU")
    ]
    if compared and left_out:
        text.append(
            f"  Not compared here: {', '.join(left_out)} (the first Trainium3 target is, "
            "against the GPU target above; every total is on the Estimate tab)\n",
            style="dim",
        )
    for proto in comparison.protocols:
        verified = f"{proto.verified_runs}/{proto.counted_runs} counted runs verified"
        text.append(
            f"  {title_name(proto.target)}: model {proto.model_version or 'not recorded'}; "
            f"{verified}\n",
            style="dim",
        )
    if comparison.fact_checks:
        text.append("Protocol facts in the logs\n", style="bold")
        styles = {"confirmed": "green", "not confirmed": "yellow", "differs": "red"}
        for check in comparison.fact_checks:
            text.append(f"  {check.text()}\n", style=styles.get(check.status, ""))
    if comparison.comparable and comparison.cost_ratio is not None:
        text.append("\nTrainium3 / GPU: ", style="bold")
        text.append(ratio(comparison.cost_ratio))
        saving = comparison.saving_usd
        if saving is not None:
            verb = "saves" if saving >= 0 else "costs"
            more = "" if saving >= 0 else " more"
            text.append(f" (Trainium3 {verb} {usd(abs(saving))}{more} per training)")
        text.append("\n")
    else:
        text.append("\nNo ratio: the results are shown side by side, not merged\n", style="yellow")
        for reason in comparison.reasons:
            text.append(f"  - {reason}\n", style="yellow")
    even = comparison.break_even
    needs = comparison.requirement
    if needs is not None:
        text.append("\nBefore the trial, Trainium3 must reach", style="bold")
        text.append(" (requirements, not measurements):\n")
        for index, line in enumerate(needs.lines()):
            text.append(f"  - {line}\n", style="" if index else "bold cyan")
    text.append("\nBreak-even throughput: ", style="bold")
    if even is None and needs is not None and needs.throughput is not None:
        text.append(
            f"{needs.throughput:,.4g} {needs.unit} required (no Trainium3 run measured yet)\n"
        )
    elif even is None:
        text.append("not computed (the two results are not comparable)\n", style="dim")
    else:
        required = "unreachable" if even.required_throughput is None else (
            f"{even.required_throughput:,.4g} {even.unit}"
        )  # fmt: skip
        text.append(f"{required}; {even.basis} {number(even.observed_throughput)} {even.unit}")
        if even.observed_low is not None and even.observed_high is not None:
            text.append(f" (runs {number(even.observed_low)} - {number(even.observed_high)})")
        text.append(f"\n  {even.note}\n", style="dim")
    for plan in comparison.plans:
        state = []
        for failed, label in (
            (plan.late, "late"),
            (plan.over_wall_clock, "over the wall-clock limit"),
            (plan.over_budget, "over budget"),
        ):
            if failed:
                state.append(label)
        checked = any(x is not None for x in (plan.late, plan.over_wall_clock, plan.over_budget))
        verdict = (
            ", ".join(state) if state else ("within the limits" if checked else "no limits set")
        )
        days = wall_clock(None if plan.wall_clock_days is None else 24 * plan.wall_clock_days)
        text.append(f"\n{plan.target}: {days}, {verdict}", style="red" if state else "dim")
    if comparison.trial_runs is not None:
        text.append("\nTrial runs: ", style="bold")
        text.append(f"{comparison.trial_runs.text()}\n")
    if comparison.payback is not None:
        back = comparison.payback
        text.append("\nPorting: ", style="bold")
        cost = "unknown" if back.porting_cost_usd is None else usd(back.porting_cost_usd)
        text.append(f"{cost}; {back.reason}\n")
    decision = comparison.decision
    text.append("\nDecision: ", style="bold")
    text.append(decision.action, style="bold reverse")
    text.append("\n")
    for fact in decision.facts:
        text.append(f"  - {fact}\n")
    return text


def _snapshot_gpu_line(chosen: str, now: Estimate | None) -> Text:
    """The GPU target a snapshot chose, and, when the project no longer has it as a GPU
    target, which one the project compares with instead (``pick_gpu``, as ``u`` would)."""
    picked, how = (None, CHOSEN) if now is None else pick_gpu(now, chosen)
    if how == CHOSEN:
        return Text(f"\nTrn3 vs GPU: against {chosen} (chosen)")
    instead = f"against {picked.name}" if picked is not None else "no GPU target to compare"
    return Text(f"\nTrn3 vs GPU: {instead} now ({how})", style="yellow")


def scenario_text(scenario: Scenario, now: Estimate | None, stale: tuple[str, ...]) -> Text:
    """An opened snapshot: its own totals (rebuilt from what it recorded), then what changed."""
    text = Text()
    text.append(f"Snapshot {scenario.name!r}", style="bold")
    text.append(f" saved {scenario.saved_at:%Y-%m-%d %H:%M} UTC by {scenario.saved_by}")
    if scenario.note:
        text.append(f"\n  {scenario.note}", style="italic")
    then = scenario.estimate()
    now_targets = {t.name: t for t in now.targets} if now is not None else {}
    for item in then.targets:
        text.append(f"\n  {item.name}: {item.headline()}")
        current = now_targets.get(item.name)
        if current is not None:
            text.append(f" then; {current.headline()} on screen now", style="dim")
    if scenario.gpu_target:
        text.append(_snapshot_gpu_line(scenario.gpu_target, now))
    if scenario.overrides:
        text.append("\nOverrides:")
        for o in scenario.overrides:
            where = f"{o.target}: " if o.target else ""
            text.append(f"\n  {where}{INPUT_SPECS[o.input].label} = {o.value:g} ({o.who}: {o.why})")
    if stale:
        text.append("\nSTALE: the project changed since this snapshot", style="bold yellow")
        for note in stale:
            text.append(f"\n  - {note}", style="yellow")
    else:
        text.append("\nUp to date with the project.", style="green")
    return text


_DIFF_ITEMS = {
    "total_usd": "Total",
    "commitment_beyond_usd": "Term still owes",
    "target": "Target total",
    **TERM_LABELS,
}
"""A compared row's item that is money (a cost term, the total): its label."""
_INPUT_UNITS = {spec.label: spec.unit for spec in INPUT_SPECS.values()}


def diff_table(rows: tuple[DiffRow, ...], work_unit: str | None) -> Group:
    """What differs between two estimates (``diff_estimates``), target by target under its
    name: each row's label whole on a line of its own, then A, B and the change aligned under
    one another, every figure with its unit, then why a value's source changed (a provenance,
    an override's who and why), each wrapped under its own indent. A 5-column table at 80
    columns cut them: ``Trainium3 tr``, ``Checkpoint saves not in th`` next to ``90  175.8``."""
    if not rows:
        return Group(Text("no difference", style="dim"))
    shown = []
    for row in rows:
        unit = _diff_unit(row.item)
        figure = functools.partial(_figure, unit=unit, work_unit=work_unit)
        shown.append((row.shown("a", figure), row.shown("b", figure), unit))
    a_width = max(len("A"), *(len(a) for a, _, _ in shown))
    b_width = max(len("B"), *(len(b) for _, b, _ in shown))
    parts: list[RenderableType] = [
        Text(f"    {'A':>{a_width}}    {'B':>{b_width}}   change", style="dim")
    ]
    target = None
    for row, (a, b, unit) in zip(rows, shown, strict=True):
        if row.target != target:
            target = row.target
            parts.append(Text(title_name(target), style="bold"))
        parts.append(Padding(Text(_DIFF_ITEMS.get(row.item, row.item)), (0, 0, 0, 2)))
        change = _diff_change(row, unit, work_unit)
        parts.append(Text(f"    {a:>{a_width}} -> {b:>{b_width}}   {change}".rstrip()))
        for side, note in (("A", row.a_note), ("B", row.b_note)):
            if note and row.a_note != row.b_note:
                parts.append(Padding(Text(f"{side}: {note}", style="dim"), (0, 0, 0, 4)))
    return Group(*parts)


def _figure(value: float | None, *, unit: str, work_unit: str | None) -> str:
    return with_unit(value, unit, work_unit)


def _diff_unit(item: str) -> str:
    """The unit of a compared row's figures (``InputSpec.unit``; money is ``USD``)."""
    if item in _DIFF_ITEMS:
        return "USD"
    return _INPUT_UNITS.get(item.removeprefix(OVERRIDE), "")


def _diff_change(row: DiffRow, unit: str, work_unit: str | None) -> str:
    """B - A with the unit and in percent of A (a yes/no flag: no change figure)."""
    delta = row.delta
    if delta is None or unit == "1 = yes, 0 = no":
        return ""
    sign = "-" if delta < 0 else "+"
    pct = "" if row.delta_pct is None else f" {row.delta_pct:+.1f}%"
    return f"{sign}{with_unit(abs(delta), unit, work_unit)}{pct}"
