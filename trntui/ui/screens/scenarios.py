"""The Scenarios screen: the estimate, its inputs, its sensitivity, Trainium3 vs GPU, snapshots.

Everything shown is the app's last valid ``Analysis`` (``TrnTuiApp.analysis``), rendered, never
computed here. Five tabs keep it inside 80x24; ``[`` and ``]`` move between them without a
mouse. Scenario parameters (overrides) are set in a modal form that checks the value against
the current inputs before it closes, so an invalid value shows its error there and the last
valid estimate stays on screen. Snapshots are saved, reopened (flagged stale with what changed
since) and compared through ``store.scenarios``.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from trntui.core.errors import UserError
from trntui.core.estimate import (
    INPUT_SPECS,
    Estimate,
    EstimateContext,
    InvalidInputError,
    Override,
    TargetEstimate,
    check_value,
    shown_unit,
)
from trntui.core.estimate import (
    Input as EstimateInput,
)
from trntui.core.format import UNKNOWN, usd, usd_per_unit
from trntui.core.report import TERM_LABELS, Analysis, shown_terms
from trntui.core.scale_plan import scale_plan
from trntui.store.scenarios import (
    DiffRow,
    Scenario,
    check_name,
    current_user,
    diff_estimates,
    list_scenarios,
    load_scenario,
    save_scenario,
    scenario_path,
    staleness,
)
from trntui.ui.format import fit
from trntui.ui.screens.base import SessionScreen, SessionView, edits
from trntui.ui.session import Session, overrides_in_force
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.scale_view import scale_text
from trntui.ui.widgets.status_line import StatusLine
from trntui.ui.widgets.tornado import TornadoChart

ALL_TARGETS = ""
"""The target choice of an override that applies to every target."""

_TAB_ACTIONS = {
    "add_override": ("inputs",),
    "drop_override": ("inputs",),
    "next_target": ("sensitivity", "scale"),
    "open_snapshot": ("snapshots",),
    "mark_snapshot": ("snapshots",),
    "compare_snapshots": ("snapshots",),
    "use_snapshot": ("snapshots",),
}


def number(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.4g}"


def _overrides_for(overrides: tuple[Override, ...], key: str, target: str | None) -> list[Override]:
    """Overrides that set ``key`` for ``target`` (``None``: a row shared by every target)."""
    return [o for o in overrides if o.input == key and (o.target is None or o.target == target)]


# --- rendering ------------------------------------------------------------------------------


class EstimateTable:
    """The estimate as a table that fits the width it is drawn in.

    Every figure is shown whole: the value columns never shrink below their widest cell, and
    a target name or instance type longer than its column wraps. Row labels are cut (with an
    ellipsis) to make room, down to 30 cells; when even that is not enough, stages show their
    cost only (the billed hours stay in their own row) and the labels get what is left.
    """

    def __init__(self, result: Estimate) -> None:
        self.result = result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        result, room = self.result, options.max_width
        labels = max(Text(str(label)).cell_len for label, _ in _rows(result, False))
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
        # Room to spare goes to the target names, so that fewer of them wrap.
        spare = room - _table_width(label, widths)
        for index, item in enumerate(result.targets):
            grow = min(spare, max(0, Text(item.name).cell_len - widths[index]))
            widths[index] += grow
            spare -= grow
        yield estimate_table(result, compact=compact, widths=widths, label_width=label)


_LABELS_BEFORE_COMPACT = 30
"""Row labels are cut down to this many cells before stages give up their hours."""


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
) -> Table:
    """Stages (instance-hours and cost; ``compact``: cost only), terms, total and cost per
    unit, one column a target (``widths``: each one's width; ``label_width``: the labels')."""
    table = Table(box=None, padding=(0, 1), show_edge=False, expand=False)
    table.add_column("", no_wrap=True, overflow="ellipsis", style="dim", width=label_width)
    for index, item in enumerate(result.targets):
        width = None if widths is None else widths[index]
        table.add_column(item.name, justify="right", width=width, overflow="fold")
    for label, cells in _rows(result, compact):
        table.add_row(label, *cells)
    return table


def _rows(result: Estimate, compact: bool) -> list[tuple[str | Text, list[str | Text]]]:
    targets = result.targets
    rows: list[tuple[str | Text, list[str | Text]]] = [
        ("Instances", [f"{t.target.instance_count} x {t.target.instance_type}" for t in targets]),
        ("Billed instance-hours", [number(t.instance_hours) for t in targets]),
    ]
    for index, (_, label) in enumerate(_stage_labels(targets)):
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


def estimate_notes(result: Estimate) -> Text:
    """What the table cannot hold: missing inputs, quote flags, porting risks in days."""
    text = Text()
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
    unit = shown_unit(item.unit, work_unit)
    text.append(f"{item.label} = {number(item.value)} {unit}", style="bold")
    text.append(f"\n{item.provenance}")
    if item.low is not None and item.high is not None:
        runs = f" over {item.runs} runs" if item.runs else ""
        text.append(f"\nobserved range {number(item.low)} - {number(item.high)}{runs}")
    return text


def distribution_text(analysis: Analysis, target: str) -> Text:
    text = Text()
    for dist in analysis.distributions:
        if dist.target != target:
            continue
        text.append("Resampled total: ", style="bold")
        if dist.p50_usd is None:
            text.append(f"none ({dist.reason})", style="yellow")
        else:
            text.append(
                f"P10 {usd(dist.p10_usd)}  P50 {usd(dist.p50_usd)}  P90 {usd(dist.p90_usd)}"
            )
            text.append(
                f"  ({dist.draws:,} draws of whole runs from {dist.runs} counted runs, "
                f"seed {dist.seed})",
                style="dim",
            )
    return text


def comparison_text(analysis: Analysis) -> Text:
    comparison = analysis.comparison
    text = Text()
    text.append("Cost to reach the same quality result", style="bold")
    text.append(" (not price per hour)\n")
    for item in (comparison.trainium, comparison.gpu):
        if item is None:
            continue
        per = "" if item.usd_per_unit is None else f", {usd_per_unit(item.usd_per_unit)}/unit"
        text.append(f"  {item.name}: ", style="bold")
        text.append(f"{item.headline()}{per}\n")
    for proto in comparison.protocols:
        verified = f"{proto.verified_runs}/{proto.counted_runs} counted runs verified"
        text.append(
            f"  {proto.target}: model {proto.model_version or 'not recorded'}; {verified}\n",
            style="dim",
        )
    if comparison.fact_checks:
        text.append("Protocol facts in the logs\n", style="bold")
        styles = {"confirmed": "green", "not confirmed": "yellow", "differs": "red"}
        for check in comparison.fact_checks:
            text.append(f"  {check.text()}\n", style=styles.get(check.status, ""))
    if comparison.comparable and comparison.cost_ratio is not None:
        text.append("\nTrainium3 / GPU: ", style="bold")
        text.append(f"{comparison.cost_ratio:.3f}")
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
    text.append("\nBreak-even throughput: ", style="bold")
    if even is None:
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
        days = "unknown" if plan.wall_clock_days is None else f"{plan.wall_clock_days:.2f} days"
        text.append(f"\n{plan.target}: {days}, {verdict}", style="red" if state else "dim")
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


# --- modal forms ----------------------------------------------------------------------------


class OverrideScreen(SessionView, ModalScreen[Override | None]):
    """Set one scenario parameter: input, target, value, who and why; checked before closing."""

    AUTO_FOCUS = "#value"

    DEFAULT_CSS = """
    OverrideScreen { align: center middle; }
    OverrideScreen > Vertical {
        width: 76; height: auto; border: round $accent; background: $surface; padding: 0 1;
    }
    OverrideScreen Horizontal { height: 1; margin-bottom: 1; }
    OverrideScreen .label { width: 8; color: $text-muted; }
    OverrideScreen Select, OverrideScreen Input { width: 1fr; }
    OverrideScreen #unit { width: auto; padding-left: 1; color: $text-muted; }
    OverrideScreen #current { color: $text-muted; height: auto; }
    OverrideScreen #error { color: $error; height: auto; }
    OverrideScreen .hint { color: $text-muted; }
    """

    BINDINGS = [
        Binding("ctrl+s", "keep", "Keep", id="override.keep", priority=True),
        Binding("escape", "cancel", "Cancel", id="override.cancel"),
    ]

    def __init__(
        self,
        session: Session,
        result: Estimate,
        others: tuple[Override, ...],
        *,
        key: str,
        target: str | None,
        existing: Override | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.result = result
        self.others = others
        self.key = key
        self.target = target
        self.existing = existing

    def compose(self) -> ComposeResult:
        existing = self.existing
        targets = [(t.name, t.name) for t in self.result.targets]
        with Vertical() as box:
            box.border_title = "Scenario parameter (an assumption: say who and why)"
            with Horizontal():
                yield Label("Input", classes="label")
                yield Select(
                    [(spec.label, key) for key, spec in INPUT_SPECS.items()],
                    value=self.key,
                    allow_blank=False,
                    compact=True,
                    id="input",
                )
            with Horizontal():
                yield Label("Target", classes="label")
                yield Select(
                    [("every target", ALL_TARGETS), *targets],
                    value=self.target or ALL_TARGETS,
                    allow_blank=False,
                    compact=True,
                    id="target",
                )
            with Horizontal():
                yield Label("Value", classes="label")
                yield Input(
                    "" if existing is None else f"{existing.value:g}", compact=True, id="value"
                )
                yield Label("", id="unit")
            with Horizontal():
                yield Label("Who", classes="label")
                yield Input(existing.who if existing else current_user(), compact=True, id="who")
            with Horizontal():
                yield Label("Why", classes="label")
                yield Input(existing.why if existing else "", compact=True, id="why")
            yield Static("", id="current")
            yield Static("", id="error")
            yield Static("ctrl+s keep   esc cancel   tab next field", classes="hint")

    def on_mount(self) -> None:
        self._describe()

    @on(Select.Changed)
    def _choice_changed(self, event: Select.Changed) -> None:
        event.stop()
        self._describe()

    def _choice(self) -> tuple[str, str | None]:
        key = self.query_one("#input", Select).value
        target = self.query_one("#target", Select).value
        return str(key), (str(target) or None) if target is not Select.NULL else None

    def _describe(self) -> None:
        key, target = self._choice()
        spec = INPUT_SPECS[key]
        self.query_one("#unit", Label).update(shown_unit(spec.unit, self.result.work_unit))
        lines = []
        for item in self.result.targets:
            if target is None or item.name == target:
                value = item.input(key)
                lines.append(f"{item.name} now: {number(value.value)} ({value.provenance})")
        if spec.per_target and target is None:
            lines.append("This input is set per target: choose one.")
        self.query_one("#current", Static).update("\n".join(lines))

    def action_keep(self) -> None:
        key, target = self._choice()
        text = self.query_one("#value", Input).value.strip()
        who = self.query_one("#who", Input).value.strip()
        why = self.query_one("#why", Input).value.strip()
        error = self.query_one("#error", Static)
        try:
            value = float(text.replace(",", ""))
        except ValueError:
            error.update(
                f"Not kept: {text!r} is not a number"
                if text
                else "Not kept: give a value (x drops an override on the Inputs tab)"
            )
            return
        try:
            check_value(key, value, where=target or "")
        except InvalidInputError as invalid:
            error.update(f"Not kept: {invalid}")
            return
        if not why:
            error.update("Not kept: an override is an assumption; say why")
            return
        override = Override(key, value, target, who=who or "unnamed", why=why)
        others = tuple(o for o in self.others if (o.input, o.target) != (key, target))
        problem = self.session.check_overrides((*others, override))
        if problem is not None:
            error.update(f"Not kept: {problem}")
            return
        self.dismiss(override)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SaveSnapshotScreen(ModalScreen[tuple[str, str] | None]):
    """Name and note of a snapshot; an existing name is replaced only when asked twice."""

    AUTO_FOCUS = "#name"

    DEFAULT_CSS = """
    SaveSnapshotScreen { align: center middle; }
    SaveSnapshotScreen > Vertical {
        width: 70; height: auto; border: round $accent; background: $surface; padding: 0 1;
    }
    SaveSnapshotScreen Horizontal { height: 1; margin-bottom: 1; }
    SaveSnapshotScreen .label { width: 6; color: $text-muted; }
    SaveSnapshotScreen Input { width: 1fr; }
    SaveSnapshotScreen #error { color: $error; height: auto; }
    SaveSnapshotScreen .hint { color: $text-muted; }
    """

    BINDINGS = [
        Binding("ctrl+s", "keep", "Save", id="snapshot.keep", priority=True),
        Binding("escape", "cancel", "Cancel", id="snapshot.cancel"),
    ]

    def __init__(self, existing: set[str]) -> None:
        super().__init__()
        self.existing = existing
        self._confirmed: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Save a scenario snapshot"
            with Horizontal():
                yield Label("Name", classes="label")
                yield Input(placeholder="e.g. baseline-2026-11", compact=True, id="name")
            with Horizontal():
                yield Label("Note", classes="label")
                yield Input(placeholder="what this scenario is for", compact=True, id="note")
            yield Static("", id="error")
            yield Static("ctrl+s or enter save   esc cancel", classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_keep()

    def action_keep(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        note = self.query_one("#note", Input).value.strip()
        error = self.query_one("#error", Static)
        try:
            check_name(name)
        except UserError as invalid:
            error.update(f"Not saved: {invalid}")
            return
        if name in self.existing and self._confirmed != name:
            self._confirmed = name
            error.update(f"A snapshot named {name!r} exists: ctrl+s again replaces it")
            return
        self.dismiss((name, note))

    def action_cancel(self) -> None:
        self.dismiss(None)


class DiffScreen(ModalScreen[None]):
    """Two estimates side by side: every input and term that changed, and by how much."""

    DEFAULT_CSS = """
    DiffScreen { align: center middle; }
    DiffScreen > Vertical {
        width: 78; height: 22; border: round $accent; background: $surface;
    }
    DiffScreen #totals { height: auto; padding: 0 1; }
    DiffScreen DataTable { height: 1fr; }
    DiffScreen .hint { color: $text-muted; padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Back to the snapshots", id="diff.close"),
        Binding(
            "q", "close", "Close", show=False, tooltip="Back to the snapshots", id="diff.close_q"
        ),
    ]

    def __init__(self, a_name: str, a: Estimate, b_name: str, b: Estimate) -> None:
        super().__init__()
        self.a_name, self.a = a_name, a
        self.b_name, self.b = b_name, b

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"A {self.a_name} vs B {self.b_name}"
            yield Static(self._totals(), id="totals")
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Static("q/esc close", classes="hint")

    def _totals(self) -> Text:
        text = Text()
        b_targets = {t.name: t for t in self.b.targets}
        for item in self.a.targets:
            other = b_targets.get(item.name)
            text.append(f"{item.name[:22]}: ", style="bold")
            text.append(f"A {item.headline()}  B {other.headline() if other else 'absent'}")
            row = DiffRow(item.name, "total_usd", item.total_usd, other and other.total_usd)
            if row.delta is not None:
                pct = "" if row.delta_pct is None else f", {row.delta_pct:+.1f}%"
                text.append(f"  ({row.delta:+,.2f}{pct})", style="bold")
            text.append("\n")
        return text

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for label in ("Target", "What", "A", "B", "Change"):
            table.add_column(label)
        rows = diff_estimates(self.a, self.b)
        if not rows:
            table.add_row("", "no difference", "", "", "")
        labels = {"total_usd": "Total", "commitment_beyond_usd": "Term still owes", **TERM_LABELS}
        for row in rows:
            money = row.item in labels
            shown = usd if money else number
            change = ""
            if row.delta is not None:
                pct = "" if row.delta_pct is None else f" {row.delta_pct:+.1f}%"
                delta = f"{row.delta:+,.2f}" if money else f"{row.delta:+,.4g}"
                change = f"{delta}{pct}"
            elif row.a_note != row.b_note:
                change = row.b_note[:24]
            table.add_row(
                row.target[:12],
                labels.get(row.item, row.item)[:26],
                row.shown("a", shown),
                row.shown("b", shown),
                change,
            )
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)


# --- the screen -----------------------------------------------------------------------------


class ScenariosScreen(SessionScreen):
    DEFAULT_CSS = """
    ScenariosScreen TabbedContent { height: 1fr; }
    ScenariosScreen TabPane { padding: 0; }
    ScenariosScreen VerticalScroll { padding: 0 1; }
    ScenariosScreen #inputs { height: 1fr; }
    ScenariosScreen #input-detail { height: 4; padding: 0 1; background: $boost; }
    ScenariosScreen #snapshots { height: auto; max-height: 7; }
    ScenariosScreen #snapshot-detail { height: 1fr; }
    ScenariosScreen .muted { color: $text-muted; }
    ScenariosScreen #estimate-problem { color: $error; text-style: bold; }
    """

    BINDINGS = [
        Binding(
            "right_square_bracket",
            "tab(1)",
            "Tab",
            key_display="]",
            tooltip="Next tab",
            id="scenarios.next",
        ),
        Binding(
            "left_square_bracket",
            "tab(-1)",
            "Prev tab",
            show=False,
            tooltip="Previous tab",
            id="scenarios.previous",
        ),
        Binding(
            "a",
            "add_override",
            "Override",
            tooltip="Override the highlighted input (Inputs tab), with who and why",
            id="scenarios.override",
        ),
        Binding(
            "x",
            "drop_override",
            "Drop",
            tooltip="Drop the highlighted override (Inputs tab)",
            id="scenarios.drop",
        ),
        Binding(
            "d",
            "drop_override",
            "Drop",
            show=False,
            tooltip="Drop the highlighted override (d deletes on every screen)",
            id="scenarios.drop_d",
        ),
        Binding(
            "t",
            "next_target",
            "Target",
            tooltip="Show the other target (Sensitivity and Scale tabs)",
            id="scenarios.target",
        ),
        Binding(
            "s",
            "save_snapshot",
            "Save",
            tooltip="Save a scenario snapshot (every value the estimate used)",
            id="scenarios.save",
        ),
        Binding(
            "o",
            "open_snapshot",
            "Open",
            tooltip="Open the highlighted snapshot (Snapshots tab)",
            id="scenarios.open",
        ),
        Binding(
            "m",
            "mark_snapshot",
            "Mark A",
            tooltip="Mark the highlighted snapshot as A to compare with",
            id="scenarios.mark",
        ),
        Binding(
            "c",
            "compare_snapshots",
            "Compare",
            tooltip="Compare snapshot A with the highlighted one",
            id="scenarios.compare",
        ),
        Binding(
            "u",
            "use_snapshot",
            "Use",
            tooltip="Use the opened snapshot's overrides now",
            id="scenarios.use",
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session, id="scenarios-screen")
        self.target_index = 0
        self.marked: str | None = None
        self.opened: Scenario | None = None
        self._row_inputs: dict[str, tuple[str | None, EstimateInput]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(id="tabs"):
            with TabPane("Estimate", id="estimate"), VerticalScroll(id="estimate-scroll"):
                yield Static("", id="estimate-problem")
                yield Static("", id="estimate-table")
                yield Static("", id="estimate-notes")
            with TabPane("Inputs", id="inputs-tab"):
                table: DataTable[str] = DataTable(id="inputs", cursor_type="row")
                yield table
                yield Static("", id="input-detail")
            with TabPane("Sensitivity", id="sensitivity"), VerticalScroll(id="sens-scroll"):
                yield Static("", id="sens-title")
                yield TornadoChart(id="tornado")
                yield Static("", id="distribution")
                yield Static("", id="not-varied", classes="muted")
            with TabPane("Trn3 vs GPU", id="compare"), VerticalScroll(id="compare-scroll"):
                yield Static("", id="compare-body")
            with TabPane("Scale", id="scale"), VerticalScroll(id="scale-scroll"):
                yield Static("Pick this tab to price each instance count.", id="scale-body")
            with TabPane("Snapshots", id="snapshots-tab"):
                snapshots: DataTable[str] = DataTable(id="snapshots", cursor_type="row")
                yield snapshots
                with VerticalScroll(id="snapshot-detail"):
                    yield Static("", id="snapshot-body")
        yield EstimateBar()
        yield StatusLine()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one("#inputs", DataTable)
        for label, width in (("For", 12), ("Input", 32), ("Value", 10), ("Provenance", 12)):
            table.add_column(label, width=width)
        snapshots = self.query_one("#snapshots", DataTable)
        for label in ("Name", "Saved (UTC)", "Totals", "Note"):
            snapshots.add_column(label)
        self.watch(self.app, "analysis", self._show, init=True)
        self.watch(self.app, "estimate_problem", self._show_problem, init=True)
        self.reload_snapshots()

    # --- tabs and keys ---------------------------------------------------------------------

    def _active_tab(self) -> str:
        active = self.query_one("#tabs", TabbedContent).active
        return {"inputs-tab": "inputs", "snapshots-tab": "snapshots"}.get(active, active)

    def prepare_action(self, action: str) -> None:
        """Show the tab ``action`` acts on (the palette runs actions from any tab)."""
        tabs = _TAB_ACTIONS.get(action)
        if tabs and self._active_tab() not in tabs:
            tab = tabs[0]
            names = {"inputs": "inputs-tab", "snapshots": "snapshots-tab"}
            self.query_one("#tabs", TabbedContent).active = names.get(tab, tab)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer a key only on the tab it acts on, and only when it has something to act on,
        so the footer stays inside 80 columns."""
        tabs = _TAB_ACTIONS.get(action)
        if tabs is None or not self.is_mounted:
            return True
        if self._active_tab() not in tabs:
            return False
        analysis = self.session.analysis
        if action == "drop_override":
            return bool(self.session.overrides)
        if action == "next_target":
            return analysis is not None and len(analysis.estimate.targets) > 1
        if action == "use_snapshot":
            return self.opened is not None
        if action in ("open_snapshot", "mark_snapshot", "compare_snapshots"):
            return self.query_one("#snapshots", DataTable).row_count > 0
        return True

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()
        if self._active_tab() == "scale":
            self._show_scale()
        pane = event.pane
        for widget in pane.query("DataTable, VerticalScroll"):
            if widget.focusable:
                widget.focus()
                break

    def action_tab(self, step: int) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        panes = ["estimate", "inputs-tab", "sensitivity", "compare", "scale", "snapshots-tab"]
        tabs.active = panes[(panes.index(tabs.active) + step) % len(panes)]

    # --- showing the analysis --------------------------------------------------------------

    def _show(self, analysis: Analysis | None) -> None:
        if analysis is None:
            self.query_one("#estimate-table", Static).update("Computing the estimate...")
            return
        result = analysis.estimate
        if not result.targets:
            self.query_one("#estimate-table", Static).update(
                "No training target yet: add them on the Inventory screen (1)."
            )
        else:
            self.query_one("#estimate-table", Static).update(EstimateTable(result))
        self.query_one("#estimate-notes", Static).update(estimate_notes(result))
        self._show_inputs(result)
        self._show_sensitivity(analysis)
        self.query_one("#compare-body", Static).update(comparison_text(analysis))
        if self._active_tab() == "scale":
            self._show_scale()
        if self.opened is not None:
            self._show_opened()
        self.refresh_bindings()

    def _show_problem(self, problem: str) -> None:
        notice = self.query_one("#estimate-problem", Static)
        notice.display = bool(problem)
        notice.update(f"Not updated, the figures below are the last valid ones: {problem}")

    def _show_inputs(self, result: Estimate) -> None:
        table = self.query_one("#inputs", DataTable)
        row_before = table.cursor_row
        table.clear()
        overrides = self.session.overrides
        self._row_inputs = {}
        for target, item in input_rows(result):
            key = f"{target or ''}\t{item.key}"
            self._row_inputs[key] = (target, item)
            overridden = bool(_overrides_for(overrides, item.key, target))
            value = Text(number(item.value), style="bold magenta" if overridden else "")
            kind = item.provenance.kind
            style = {"unknown": "bold yellow", "measured": "green", "quoted": "cyan"}.get(kind, "")
            table.add_row(
                fit(target or "all", 12),
                fit(item.label, 32),
                value,
                Text(kind, style=style),
                key=key,
            )
        if table.row_count:
            table.move_cursor(row=min(max(row_before, 0), table.row_count - 1))
        self._show_input_detail()

    @on(DataTable.RowHighlighted, "#inputs")
    def _input_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_input_detail()

    def _highlighted_input(self) -> tuple[str | None, EstimateInput] | None:
        table = self.query_one("#inputs", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        return self._row_inputs.get(key or "")

    def _show_input_detail(self) -> None:
        analysis = self.session.analysis
        found = self._highlighted_input()
        detail = self.query_one("#input-detail", Static)
        if found is None or analysis is None:
            detail.update("")
            return
        text = input_detail(found[1], analysis.estimate.work_unit)
        overrides = self.session.overrides
        hint = "a override" + ("  x drop override  ctrl+z undo" if overrides else "")
        text.append(f"\n{len(overrides)} override(s) in force; {hint}", style="dim")
        detail.update(text)

    def _show_sensitivity(self, analysis: Analysis) -> None:
        targets = analysis.estimate.targets
        if not targets:
            self.query_one(TornadoChart).show(None)
            return
        self.target_index %= len(targets)
        item = targets[self.target_index]
        sens = analysis.sensitivities[self.target_index]
        title = Text()
        title.append(f"{item.name} {item.headline()}", style="bold")
        title.append(": total over each input's observed range")
        if len(targets) > 1:
            title.append("  t: target", style="dim")
        self.query_one("#sens-title", Static).update(title)
        self.query_one(TornadoChart).show(sens)
        self.query_one("#distribution", Static).update(distribution_text(analysis, item.name))
        not_varied = "\n".join(
            [f"Block step: {step}" for step in sens.block_steps]
            + [f"Not varied: {label} ({why})" for label, why in sens.not_varied]
        )
        self.query_one("#not-varied", Static).update(not_varied)

    def action_next_target(self) -> None:
        self.target_index += 1
        if self.session.analysis is not None:
            self._show_sensitivity(self.session.analysis)
        if self._active_tab() == "scale":
            self._show_scale()

    # --- scale -----------------------------------------------------------------------------

    def _show_scale(self) -> None:
        """Price the current target at each instance count, in a worker (one estimate per
        count): the tab shows the last table until the new one is ready."""
        context = self.session.estimate_context
        targets = context.inventory.targets if context is not None else ()
        if context is None or not targets:
            self.query_one("#scale-body", Static).update("No training target to scale yet.")
            return
        self.target_index %= len(targets)
        self._compute_scale(context, targets[self.target_index].name, len(targets))

    @work(thread=True, exclusive=True, group="scale", exit_on_error=False)
    def _compute_scale(self, context: EstimateContext, target: str, targets: int) -> None:
        try:
            text = scale_text(scale_plan(context, target), targets)
        except UserError as error:
            text = Text(str(error), style="yellow")
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.query_one("#scale-body", Static).update, text)

    # --- overrides -------------------------------------------------------------------------

    def action_add_override(self) -> None:
        analysis = self.session.analysis
        if analysis is None or not analysis.estimate.targets:
            self.notify("No estimate yet to set a parameter on.")
            return
        found = self._highlighted_input()
        key, target = ("steady_throughput", None) if found is None else (found[1].key, found[0])
        if target is None and INPUT_SPECS[key].per_target:
            target = analysis.estimate.targets[0].name
        existing = next(iter(_overrides_for(self.session.overrides, key, target)), None)
        self.app.push_screen(
            OverrideScreen(
                self.session,
                analysis.estimate,
                self.session.overrides,
                key=key,
                target=target,
                existing=existing,
            ),
            self._override_kept,
        )

    def _override_kept(self, override: Override | None) -> None:
        if override is None:
            return
        before = self.session.overrides
        kept = tuple(o for o in before if (o.input, o.target) != (override.input, override.target))
        label = INPUT_SPECS[override.input].label
        problem = self.session.set_overrides((*kept, override), label=f"override of {label}")
        if problem is not None:
            self.set_status(f"Override not applied: {problem}", "error")
            return
        self.set_status(f"Override: {label} = {override.value:g} ({override.who}: {override.why})")

    def action_drop_override(self) -> None:
        found = self._highlighted_input()
        if found is None:
            return
        target, item = found
        before = self.session.overrides
        dropped = _overrides_for(before, item.key, target)
        if not dropped:
            # An override whose target was renamed or deleted has no row to select; it is what
            # keeps the estimate from updating, so x offers to drop it from any row.
            names = {t.name for t in self.session.inventory.targets}
            dropped = [o for o in before if o.target is not None and o.target not in names]
        if not dropped:
            self.notify(f"{item.label} is not overridden here.")
            return
        what = ", ".join(
            f"{o.target + ': ' if o.target else ''}{INPUT_SPECS[o.input].label}" for o in dropped
        )
        problem = self.session.set_overrides(
            tuple(o for o in before if o not in dropped), label=f"dropping the override of {what}"
        )
        if problem is not None:
            self.set_status(f"Override not dropped: {problem}", "error")
            return
        self.notify(f"Dropped the override of {what}. ctrl+z undoes it.")
        self.set_status(
            f"Dropped the override of {what}; {overrides_in_force(self.session.overrides)}"
        )

    # --- snapshots -------------------------------------------------------------------------

    def reload_snapshots(self) -> None:
        table = self.query_one("#snapshots", DataTable)
        row_before = table.cursor_row
        table.clear()
        try:
            infos = list_scenarios(self.session.root)
        except (UserError, OSError) as error:
            self.set_status(str(error), "error")
            infos = []
        for info in infos:
            saved = f"{info.saved_at:%Y-%m-%d %H:%M}" if info.saved_at else "?"
            totals = " / ".join(usd(total) for total in info.totals.values())
            mark = "A " if info.name == self.marked else ""
            table.add_row(f"{mark}{info.name}"[:20], saved, totals, info.note[:30], key=info.name)
        if table.row_count:
            table.move_cursor(row=min(max(row_before, 0), table.row_count - 1))
        elif self.opened is None:
            self.query_one("#snapshot-body", Static).update(
                "No snapshot saved yet. Press s to save the estimate as it stands, with every "
                "input, override and quote it used."
            )
        self.refresh_bindings()

    def _selected_snapshot(self) -> str | None:
        table = self.query_one("#snapshots", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        return table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value

    @edits
    def action_save_snapshot(self) -> None:
        if self.session.estimate_context is None:
            self.notify("The estimate is still being computed.")
            return
        existing = {info.name for info in list_scenarios(self.session.root)}
        self.app.push_screen(SaveSnapshotScreen(existing), self._save)

    def _save(self, answer: tuple[str, str] | None) -> None:
        context = self.session.estimate_context
        if answer is None or context is None:
            return
        name, note = answer
        root = self.session.root
        try:
            save_scenario(
                root, name, context, self.session.overrides, note=note, saved_by=current_user()
            )
        except (UserError, OSError) as error:
            self.set_status(f"Snapshot not saved: {error}", "error")
            return
        self.session.keep_overrides()
        self.reload_snapshots()
        path = scenario_path(root, name).relative_to(root)
        self.set_status(f"Saved snapshot {name!r} to {path}")

    @on(DataTable.RowSelected, "#snapshots")
    def _snapshot_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_snapshot()

    def action_open_snapshot(self) -> None:
        name = self._selected_snapshot()
        if name is None:
            return
        try:
            self.opened = load_scenario(self.session.root, name)
        except (UserError, OSError) as error:
            self.set_status(f"Cannot open {name!r}: {error}", "error")
            return
        self._show_opened()

    def _show_opened(self) -> None:
        scenario = self.opened
        if scenario is None:
            return
        context = self.session.estimate_context
        stale: tuple[str, ...] = ()
        if context is not None:
            try:
                stale = staleness(scenario, context)
            except UserError as error:
                stale = (f"cannot check against the project ({error})",)
        now = self.session.analysis.estimate if self.session.analysis else None
        text = scenario_text(scenario, now, stale)
        text.append("\nu uses its overrides here; m marks it as A, c compares", style="dim")
        self.query_one("#snapshot-body", Static).update(text)
        self.refresh_bindings()

    def action_mark_snapshot(self) -> None:
        name = self._selected_snapshot()
        if name is None:
            return
        self.marked = None if self.marked == name else name
        self.reload_snapshots()
        if self.marked:
            self.set_status(f"A = {name!r}: select another snapshot and press c")

    def action_compare_snapshots(self) -> None:
        """The marked snapshot (A) against the selected one (B), or the selected one against
        the estimate on screen now when nothing is marked."""
        name = self._selected_snapshot()
        if name is None:
            return
        root = self.session.root
        try:
            chosen = load_scenario(root, name)
            if self.marked and self.marked != name:
                a_name, a = self.marked, load_scenario(root, self.marked).estimate()
                b_name, b = name, chosen.estimate()
            else:
                analysis = self.session.analysis
                if analysis is None:
                    return
                a_name, a = name, chosen.estimate()
                b_name, b = "now", analysis.estimate
        except (UserError, OSError) as error:
            self.set_status(f"Cannot compare: {error}", "error")
            return
        self.app.push_screen(DiffScreen(a_name, a, b_name, b))

    def action_use_snapshot(self) -> None:
        scenario = self.opened
        if scenario is None:
            self.notify("Open a snapshot first (o).")
            return
        problem = self.session.set_overrides(
            scenario.overrides, label=f"using the overrides of {scenario.name!r}"
        )
        if problem is not None:
            self.set_status(f"Its overrides do not apply now: {problem}", "error")
            return
        self.session.keep_overrides()
        self.set_status(
            f"Using the {len(scenario.overrides)} override(s) of {scenario.name!r} (ctrl+z undoes)"
        )
