"""One run in full: its two clocks, where the time went, the steady window, restarts, the
quality result against the goal, and what the log could not tell. ``q`` records a quality
result measured outside the log (for logs that never evaluate)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from trntui.core.errors import UserError
from trntui.core.run_facts import RecordedQuality, RunFacts
from trntui.core.telemetry_text import telemetry_lines
from trntui.core.text import printable
from trntui.core.timeline import RunMetadata, SystemSize
from trntui.store.quality import load_recorded_quality
from trntui.store.telemetry import RunTelemetryDetail
from trntui.ui.format import UNKNOWN, duration, plural
from trntui.ui.screens.attach_capture import AttachCaptureScreen
from trntui.ui.screens.base import SessionView, edits
from trntui.ui.screens.dialog import Dialog
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.run_entries import QualityResultEntry
from trntui.ui.session import Session
from trntui.ui.text import Hanging


def facts_text(
    facts: RunFacts, metadata: RunMetadata, target_text: str, size: SystemSize | None = None
) -> Text:
    """The run's facts as lines a person reads top to bottom (unknown stays 'unknown')."""
    text = Text()

    def line(label: str, value: str, style: str = "") -> None:
        text.append(f"{label:<22}", style="dim")
        text.append(printable(value) + "\n", style=style)

    status_style = "green" if facts.counts_as_completed else "bold red"
    counted = "counts as completed work" if facts.counts_as_completed else "does NOT count"
    line("Status", f"{facts.status}, {counted}", status_style)
    line("Format", f"{metadata.format} ({metadata.source})")
    launched = metadata.launch_time
    line(
        "Launched", UNKNOWN if launched is None else launched.strftime("%Y-%m-%d %H:%M %Z").strip()
    )
    size = size or metadata.system
    if size is None:
        shown = "unknown (the log prints no size; state it for the set with z on Runs)"
    elif size.is_assumption:
        said = f"; logs said {size.overrides}" if size.overrides else ""
        shown = f"{size.text()}  (stated by {size.stated_by}: {size.source}{said})"
    else:
        shown = f"{size.text()}  ({size.source})"
    doubtful = size is None or size.is_assumption or bool(size.conflicts)
    line("System", shown, "yellow" if doubtful else "")
    for conflict in size.conflicts if size is not None else ():
        line("  the logs disagree", f"{conflict}; z on Runs states the size")
    clock = metadata.job_clock
    if clock is not None:
        before = (
            "its start cannot be placed on the log's clock"
            if clock.before_first_line_s is None
            else f"{duration(clock.before_first_line_s)} before the first log line"
        )
        line("Job clock", f"{duration(clock.span_s)} from launch to the job's end; {before}")
        if len(clock.clocks) > 1:
            line("  clocks printed", clock.clocks_text())
    run_end = "the last logged step" if facts.run_ends_at_planned_step else "run stop"
    line("Training running", duration(facts.run_s) + f"  (run start to {run_end})")
    line("Launch to result", duration(facts.launch_to_result_s) + "  (to the verified quality)")
    phases = facts.phases
    for label, value in (
        ("  before init", phases.before_init_s),
        ("  init / compile", phases.init_compile_s),
        ("  training", phases.training_s),
        ("  checkpoint saves", phases.checkpoint_s),
        ("  evaluation", phases.eval_s),
        ("  stalls / waits", phases.stall_s),
        ("  recovery", phases.recovery_s),
        ("  redone work", phases.redone_s),
        ("  data loading", phases.data_loading_s),
        ("  between blocks", phases.between_blocks_s),
        ("  after training", phases.after_training_s),
    ):
        if label in ("  before init", "  after training") and value is None:
            continue  # a log that marks no such boundary: the time stays in training
        line(label, duration(value))
        if label == "  init / compile":
            line("  warm-up", _warmup_text(facts))
    if metadata.setup_phases:
        setup = ", ".join(f"{k} {duration(v)}" for k, v in metadata.setup_phases.items())
        line("  set-up (in init)", setup)
    unit = facts.throughput_unit or ""
    steady = (
        UNKNOWN if facts.steady_throughput is None else f"{facts.steady_throughput:,.4g} {unit}"
    )
    window = (
        f"from {duration(facts.steady_start_s)} to {duration(facts.steady_end_s)}"
        if facts.steady_start_s is not None and facts.steady_end_s is not None
        else "not found"
    )
    line("Steady throughput", f"{steady}  (window {window})", "bold")
    line("Stalls", f"{len(facts.stalls)}, {duration(sum(s.lost_s for s in facts.stalls))} lost")
    steps = facts.redone_steps
    redone = f"{UNKNOWN} steps" if steps is None else plural(steps, "step")
    line("Restarts", f"{facts.restarts}, {redone} redone")
    quality = UNKNOWN if facts.quality_value is None else f"{facts.quality_value:.4g}"
    reached = {True: "target reached", False: "target MISSED", None: "not verified"}
    line(
        "Quality",
        f"{quality} vs {target_text}: {reached[facts.quality_reached]}",
        "" if facts.quality_reached else "yellow",
    )
    if metadata.protocol:
        stated = ", ".join(f"{k} {v}" for k, v in sorted(metadata.protocol.items()))
        line("Protocol (log)", stated)
    if facts.planned_steps is not None:
        whose = "the log's" if metadata.planned_steps is not None else "the inventory's"
        line("Plan", f"{facts.planned_steps} steps ({whose} plan)")
    for note in (*facts.notes, *metadata.notes):
        text.append(f"- {printable(note)}\n", style="dim")
    for missing in metadata.not_derivable:
        text.append(f"- not in this format: {printable(missing)}\n", style="dim italic")
    return text


def _warmup_text(facts: RunFacts) -> str:
    """Warm-up as one figure, the time it cost beyond the steady pace, and what it covered in
    the log's own counter (``1,536 samples``, never samples called steps)."""
    cost = duration(facts.phases.warmup_s)
    if facts.warmup_steps is None or facts.warmup_end_s is None:
        return cost
    unit = facts.warmup_unit or "steps"
    return (
        f"{cost} beyond the steady pace (the first {facts.warmup_steps:,} {unit}, "
        f"to {duration(facts.warmup_end_s)})"
    )


class RunDetailScreen(SessionView, Dialog[None]):
    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"attach", "record_quality"})
    """Actions that open a dialog: keys typed right after wait for it (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Back to the Runs table", id="run.close"),
        Binding(
            "q", "close", "Close", show=False, tooltip="Back to the Runs table", id="run.close_q"
        ),
        Binding(
            "r",
            "record_quality",
            "Record quality",
            tooltip="Record the evaluated quality of this run (value, source, eval time)",
            id="run.quality",
        ),
        Binding(
            "t",
            "attach",
            "Attach telemetry",
            tooltip="Attach a neuron-monitor, nvidia-smi or compiler capture to this run",
            id="run.attach",
        ),
    ]

    def __init__(
        self,
        session: Session,
        run_id: str,
        facts: RunFacts,
        metadata: RunMetadata,
        telemetry: RunTelemetryDetail,
        size: SystemSize | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.system_size = size
        self.run_id = run_id
        self.facts = facts
        self.metadata = metadata
        self.telemetry = telemetry

    def compose(self) -> ComposeResult:
        goal = self.session.inventory.goal
        target = goal.quality_target()
        target_text = (
            "no target set (Inventory > Training goal)"
            if target is None
            else f"{'>=' if target.higher_is_better else '<='} {target.threshold:g}"
        )
        with Vertical() as box:
            box.border_title = f"Run {self.run_id}"
            with VerticalScroll():
                yield Static(self._headline(), id="headline")
                facts = facts_text(self.facts, self.metadata, target_text, self.system_size)
                yield Static(Hanging(facts), id="facts")
                yield Static(Hanging(self._telemetry_text()), id="limits")
            yield Static(
                "r record a quality result   t attach telemetry   q/esc close", classes="hint"
            )

    def _lines(self) -> list[str]:
        detail = self.telemetry
        return telemetry_lines(detail.utilization, detail.compile, detail.verdict, detail.mfu)

    def _headline(self) -> Text:
        text = Text(f"What limits this run: {self._lines()[0]}\n", style="bold")
        utilization = self.telemetry.utilization
        if utilization is None:
            text.append("Accelerators busy: unknown (no capture attached; t attaches one)\n")
        else:
            steady = utilization.steady
            whole = utilization.whole_run
            parts = [
                f"{figure.mean_pct:.0f}% {figure.window}"
                for figure in (steady, whole)
                if figure is not None and figure.mean_pct is not None
            ]
            period = "" if whole.period_s is None else f", every {whole.period_s:g} s"
            source = whole.method.split(" ", 1)[0]
            text.append(f"Accelerators busy: {', '.join(parts) or 'unknown'} ({source}{period})\n")
        return text

    def _telemetry_text(self) -> Text:
        return Text("\n" + "\n".join(self._lines()[1:]))

    @edits
    def action_attach(self) -> None:
        self.app.push_screen(
            AttachCaptureScreen(self.session, self.run_id),
            self._attached,
        )

    def _attached(self, message: str | None) -> None:
        if message:
            # The whole message as a notification too: the status line is one line, and the
            # coverage and "also attached to run ..." come at its end.
            self.set_status(message)
            self.notify(message, title="Capture attached", timeout=15)
            self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)

    @edits
    def action_record_quality(self) -> None:
        """The form for this run's quality result, filled with the one recorded (if any):
        keeping it replaces that, which the title says."""
        try:
            recorded = load_recorded_quality(self.session.root).get(self.run_id)
        except (UserError, OSError) as error:
            self.set_status(f"Quality results cannot be read: {error}", "error")
            return
        if recorded is None:
            entry, title = QualityResultEntry(), f"Record the quality of run {self.run_id}"
        else:
            minutes = None if recorded.evaluation_s is None else recorded.evaluation_s / 60.0
            entry = QualityResultEntry(recorded.value, recorded.source, minutes)
            title = f"Replace the recorded quality of run {self.run_id}"
        self.app.push_screen(ItemFormScreen(QualityResultEntry, entry, title=title), self._recorded)

    def _recorded(self, entry: QualityResultEntry | None) -> None:
        if entry is None or entry.value is None:
            return
        minutes = entry.evaluation_minutes
        result = RecordedQuality(
            entry.value, entry.source, None if minutes is None else minutes * 60.0
        )
        try:
            self.session.record_quality(self.run_id, result)
        except (UserError, OSError) as error:
            self.set_status(f"Quality result not recorded: {error}", "error")
            return
        self.set_status(f"Recorded the quality result of run {self.run_id}; ctrl+z undoes it")
        self.dismiss(None)
