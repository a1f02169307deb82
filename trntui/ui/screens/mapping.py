"""Map the columns of a CSV or JSONL log (PyTorch Lightning ``metrics.csv``, a tracker export,
a team's own logger) to time, step, samples/tokens, loss and the eval metric.

The first guess comes from a mapping remembered for files of the same shape, else from the
column names. Every change re-runs the preview, so the user sees the rows as they would be
imported (or what is wrong) before confirming; ``ctrl+s`` returns the mapping.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Label, Select, Static

from trntui.importers.mapped import (
    CUMULATIVE,
    PER_ROW,
    ROLES,
    TIME_UNITS,
    ColumnMapping,
    RawTable,
    preview,
)
from trntui.ui.screens.dialog import Dialog, after_typing

_PREVIEW_COLUMNS = ("t_s", "step", "samples", "tokens", "loss", "metric")


class MappingScreen(Dialog[ColumnMapping | None]):
    DEFAULT_CSS = """
    MappingScreen > Vertical { height: 23; }
    MappingScreen Horizontal { height: 1; }
    MappingScreen .role { width: 9; }
    MappingScreen .column { width: 30; }
    MappingScreen .extra { width: 1fr; margin-left: 1; }
    MappingScreen #mapped { height: 1fr; margin-top: 1; }
    MappingScreen #problems { height: auto; max-height: 3; color: $error; }
    """
    BINDINGS = [
        Binding("ctrl+s", "keep", "Use mapping", priority=True, id="mapping.keep"),
        Binding("escape", "cancel", "Cancel", id="mapping.cancel"),
    ]
    AUTO_FOCUS = "Select"

    def __init__(self, table: RawTable, name: str, mapping: ColumnMapping, origin: str) -> None:
        super().__init__()
        self.table = table
        self.file_name = name
        self.mapping = mapping
        self.origin = origin

    def compose(self) -> ComposeResult:
        columns = [(column, column) for column in self.table.columns]
        with Vertical() as box:
            box.border_title = f"Map the columns of {self.file_name}"
            yield Static(
                f"{self.table.frame.height} rows, {len(self.table.columns)} columns; "
                f"first guess {self.origin}",
                classes="hint",
            )
            for role in ROLES:
                with Horizontal():
                    yield Label(role, classes="role")
                    yield Select(
                        columns,
                        value=getattr(self.mapping, role) or Select.NULL,
                        prompt="(none)",
                        compact=True,
                        id=f"role-{role}",
                        classes="column",
                    )
                    extra = self._extra(role)
                    if extra is not None:
                        yield extra
            yield DataTable(id="mapped", cursor_type="none")
            yield Static("", id="problems")
            yield Static("ctrl+s use this mapping (remembered for this file shape)   esc cancel",
                         classes="hint")  # fmt: skip

    def _extra(self, role: str) -> Select | None:
        mapping = self.mapping
        if role == "time":
            options = [(f"unit: {unit}", unit) for unit in TIME_UNITS]
            value: Any = mapping.time_unit
            return Select(options, value=value, allow_blank=False, compact=True,
                          id="time_unit", classes="extra")  # fmt: skip
        if role == "samples":
            options = [("counts: running total", CUMULATIVE), ("counts: per row", PER_ROW)]
            return Select(options, value=mapping.counts, allow_blank=False, compact=True,
                          id="counts", classes="extra")  # fmt: skip
        if role == "metric":
            directions = [("higher is better", True), ("lower is better", False)]
            value = (
                Select.NULL
                if mapping.metric_higher_is_better is None
                else mapping.metric_higher_is_better
            )
            return Select(directions, value=value, prompt="direction?", compact=True,
                          id="direction", classes="extra")  # fmt: skip
        return None

    def on_mount(self) -> None:
        table = self.query_one("#mapped", DataTable)
        table.add_columns("line", *_PREVIEW_COLUMNS)
        self._refresh_preview()

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        event.stop()
        self.mapping = self._read_mapping()
        self._refresh_preview()

    def _read_mapping(self) -> ColumnMapping:
        def chosen(widget_id: str) -> Any:
            value = self.query_one(f"#{widget_id}", Select).value
            return None if value is Select.NULL else value

        return ColumnMapping(
            **{role: chosen(f"role-{role}") for role in ROLES},
            time_unit=chosen("time_unit") or "s",
            counts=chosen("counts") or CUMULATIVE,
            metric_higher_is_better=chosen("direction"),
        )

    def _refresh_preview(self) -> None:
        result = preview(self.table, self.mapping)
        table = self.query_one("#mapped", DataTable)
        table.clear()
        head = result.timeline_head
        if head is not None:
            for row in head.iter_rows(named=True):
                table.add_row(
                    str(row["line"]),
                    *("-" if row[c] is None else f"{row[c]:,.6g}" for c in _PREVIEW_COLUMNS),
                )
        self.query_one("#problems", Static).update("\n".join(result.problems))

    @after_typing
    def action_keep(self) -> None:
        problems = self.mapping.problems(self.table.columns)
        if problems or preview(self.table, self.mapping).problems:
            self.query_one("#problems", Static).update(
                "Not usable yet: "
                + "; ".join(problems or preview(self.table, self.mapping).problems)
            )
            return
        self.dismiss(self.mapping)

    def action_cancel(self) -> None:
        self.dismiss(None)
