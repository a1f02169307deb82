"""Attach a telemetry capture (neuron-monitor JSON lines, nvidia-smi CSV, a log with Neuron
compiler lines) to a run. The capture is read in a worker with a progress bar; esc cancels.
A capture that does not overlap the run in time, or comes from another instance, is reported
and not stored."""

from __future__ import annotations

import math
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from trntui.core.errors import UserError
from trntui.core.fields import FieldValueError, parse_number
from trntui.store.telemetry import ATTACHED, DUPLICATE
from trntui.ui.screens.dialog import field_row
from trntui.ui.screens.worker_modal import WorkerModal
from trntui.ui.session import Session
from trntui.ui.widgets.path_suggester import PathSuggester
from trntui.ui.widgets.text_field import TextField


class AttachCaptureScreen(WorkerModal[str | None]):
    DEFAULT_CSS = """
    AttachCaptureScreen > Vertical { width: 76; height: auto; }
    AttachCaptureScreen .row > Label { width: 8; }
    AttachCaptureScreen #message { height: auto; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="attach.cancel")]
    AUTO_FOCUS = "#capture"

    def __init__(self, session: Session, run_id: str) -> None:
        super().__init__()
        self.session = session
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Attach telemetry to run {self.run_id}"
            yield field_row(
                "File",
                TextField(
                    placeholder="neuron-monitor .jsonl, nvidia-smi .csv or a compiler log",
                    compact=True,
                    id="capture",
                    suggester=PathSuggester(),
                    select_on_focus=False,
                ),
            )
            yield field_row(
                "Offset",
                TextField(
                    placeholder="s after the run's start; only for a capture without clock",
                    compact=True,
                    id="offset",
                ),
            )
            yield ProgressBar(total=1.0, show_eta=False, id="progress")
            yield Static("", id="message")
            yield Static("enter attach   tab next field   esc cancel/close", classes="hint")

    @on(Input.Submitted)
    def _start(self, event: Input.Submitted) -> None:
        event.stop()
        path = Path(self.query_one("#capture", Input).value.strip()).expanduser()
        if not path.is_file():
            self._message(f"Not found: {path}", error=True)
            return
        offset_text = self.query_one("#offset", Input).value.strip()
        offset_s = None
        if offset_text:
            try:
                offset_s = parse_number(offset_text)
            except FieldValueError:
                offset_s = float("nan")
            if not math.isfinite(offset_s):
                self._message(
                    f"Offset {offset_text!r}: give seconds from the run's start "
                    "(negative: the capture started before the run)",
                    error=True,
                )
                return
        self._message(f"Reading {path.name}...")
        self._worker = self._read_capture(path, offset_s)

    @work(thread=True, exclusive=True, group="attach", exit_on_error=False)
    def _read_capture(self, path: Path, offset_s: float | None) -> tuple[str, str, str]:
        worker = get_current_worker()

        def progress(fraction: float) -> None:
            self.app.call_from_thread(
                self.query_one("#progress", ProgressBar).update, progress=fraction
            )

        outcome = self.session.attach_capture(
            self.run_id,
            path,
            offset_s=offset_s,
            progress=progress,
            cancel=lambda: worker.is_cancelled,
        )
        return outcome.outcome, path.name, f"{path.name}: {outcome.message}"

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "attach":
            return
        if event.state == WorkerState.SUCCESS:
            assert event.worker.result is not None  # _read_capture returned its three
            outcome, name, text = event.worker.result
            if outcome == ATTACHED:
                self.session.capture_attached(self.run_id, name)
                self.dismiss(text)
            elif outcome == DUPLICATE:
                self.session.runs_changed()  # nothing new: no step in the undo history
                self.dismiss(text)
            else:
                self._message(f"Not attached: {text}", error=True)
        elif event.state == WorkerState.CANCELLED:
            self._message("Cancelled: nothing was attached.")
        elif event.state == WorkerState.ERROR:
            error = event.worker.error
            text = str(error) if isinstance(error, UserError) else f"failed: {error!r}"
            self._message(text, error=True)
