"""The Scenarios screen's dialogs: set one override, name a snapshot, compare two estimates,
write the report.

Each dialog returns its answer by ``dismiss`` and changes nothing itself: the Scenarios screen
applies an override or saves a snapshot. The override form checks its value against the current
inputs (``check_value``) and against the whole set of overrides (the ``check`` it is given)
before it closes, so an invalid value shows its error in the form.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Label, Select, Static

from trntui.core.errors import UserError
from trntui.core.estimate import (
    INPUT_SPECS,
    Estimate,
    InvalidInputError,
    Override,
    check_value,
    shown_unit,
)
from trntui.core.fields import FieldValueError, parse_number
from trntui.core.format import number, usd
from trntui.store.scenarios import DiffRow, check_name, current_user, diff_estimates
from trntui.ui.format import title_name
from trntui.ui.screens.dialog import Dialog, after_typing, field_row
from trntui.ui.screens.scenarios.rendering import diff_table
from trntui.ui.widgets.path_suggester import PathSuggester
from trntui.ui.widgets.text_field import TextField

ALL_TARGETS = ""
"""The target choice of an override that applies to every target."""


class OverrideScreen(Dialog[Override | None]):
    """Set one scenario parameter: input, target, value, who and why; checked before closing."""

    AUTO_FOCUS = "#value"

    DEFAULT_CSS = """
    OverrideScreen > Vertical { width: 76; height: auto; }
    OverrideScreen .row > Label { width: 8; }
    OverrideScreen #unit { width: auto; padding-left: 1; color: $text-muted; }
    OverrideScreen #current { color: $text-muted; height: auto; }
    """

    BINDINGS = [
        Binding("ctrl+s", "keep", "Keep", id="override.keep", priority=True),
        Binding("escape", "cancel", "Cancel", id="override.cancel"),
    ]

    def __init__(
        self,
        result: Estimate,
        others: tuple[Override, ...],
        *,
        key: str,
        target: str | None,
        check: Callable[[tuple[Override, ...]], str | None],
        existing: Override | None = None,
    ) -> None:
        super().__init__()
        self.result = result
        self.others = others
        self.key = key
        self.target = target
        self.check = check
        """Why the overrides it is given do not apply now, or ``None`` when they do."""
        self.existing = existing
        self._shown: tuple[str, str | None] = (key, target)
        """The input and target whose override the value and why fields hold."""

    def compose(self) -> ComposeResult:
        existing = self.existing
        targets = [(t.name, t.name) for t in self.result.targets]
        with Vertical() as box:
            box.border_title = "Scenario parameter (an assumption: say who and why)"
            yield field_row(
                "Input",
                Select(
                    [(spec.label, key) for key, spec in INPUT_SPECS.items()],
                    value=self.key,
                    allow_blank=False,
                    compact=True,
                    id="input",
                ),
                muted=True,
            )
            yield field_row(
                "Target",
                Select(
                    [("every target", ALL_TARGETS), *targets],
                    value=self.target or ALL_TARGETS,
                    allow_blank=False,
                    compact=True,
                    id="target",
                ),
                muted=True,
            )
            value = "" if existing is None else f"{existing.value:g}"
            yield field_row(
                "Value",
                TextField(value, compact=True, id="value"),
                Label("", id="unit"),
                muted=True,
            )
            who = existing.who if existing else current_user()
            yield field_row("Who", TextField(who, compact=True, id="who"), muted=True)
            why = existing.why if existing else ""
            yield field_row("Why", TextField(why, compact=True, id="why"), muted=True)
            yield Static("", id="current")
            yield Static("", id="error", classes="error")
            yield Static("ctrl+s keep   esc cancel   tab next field", classes="hint")

    def on_mount(self) -> None:
        self._describe()

    @on(Select.Changed)
    def _choice_changed(self, event: Select.Changed) -> None:
        """Another input or target is another override: its own value and reason (those of
        the override in force for it, or none), never the ones typed for the previous choice,
        which ctrl+s would have given the new target."""
        event.stop()
        key, target = self._choice()
        if (key, target) != self._shown:
            self._shown = (key, target)
            current = next(
                (o for o in (*self.others, *filter(None, [self.existing]))
                 if (o.input, o.target) == (key, target)),
                None,
            )  # fmt: skip
            self.query_one("#value", Input).value = "" if current is None else f"{current.value:g}"
            self.query_one("#why", Input).value = "" if current is None else current.why
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

    def _typed(self) -> tuple[str, str, str]:
        """The value, who and why as typed (stripped)."""
        value, who, why = (
            self.query_one(f"#{name}", Input).value.strip() for name in ("value", "who", "why")
        )
        return value, who, why

    def refusal(self) -> str | None:
        """The dialog's own checks: a readable value the input allows, who and why said (the
        project's check, whether the overrides apply, runs on ctrl+s)."""
        key, target = self._choice()
        text, who, why = self._typed()
        try:
            check_value(key, parse_number(text), where=target or "")
        except FieldValueError as unreadable:
            if not text:
                return "Not kept: give a value (x drops an override on the Inputs tab)"
            return f"Not kept: {unreadable}"
        except InvalidInputError as invalid:
            return f"Not kept: {invalid}"
        if not who or not why:
            return "Not kept: an override is an assumption; say who states it and why"
        return None

    @after_typing
    def action_keep(self) -> None:
        if self.refused():
            return
        key, target = self._choice()
        text, who, why = self._typed()
        override = Override(key, parse_number(text), target, who=who, why=why)
        others = tuple(o for o in self.others if (o.input, o.target) != (key, target))
        problem = self.check((*others, override))
        if problem is not None:
            self.refuse(f"Not kept: {problem}")
            return
        self.dismiss(override)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SaveSnapshotScreen(Dialog[tuple[str, str] | None]):
    """Name and note of a snapshot; an existing name is replaced only when asked twice."""

    AUTO_FOCUS = "#name"

    DEFAULT_CSS = """
    SaveSnapshotScreen > Vertical { width: 70; height: auto; }
    SaveSnapshotScreen .row > Label { width: 6; }
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
            name = TextField(placeholder="e.g. baseline-2026-11", compact=True, id="name")
            yield field_row("Name", name, muted=True)
            note = TextField(placeholder="what this scenario is for", compact=True, id="note")
            yield field_row("Note", note, muted=True)
            yield Static("", id="error", classes="error")
            yield Static("ctrl+s or enter save   esc cancel", classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_keep()

    def refusal(self) -> str | None:
        """A name that is no usable one; a name taken, once ctrl+s has said so."""
        name = self.query_one("#name", Input).value.strip()
        try:
            check_name(name)
        except UserError as invalid:
            return f"Not saved: {invalid}"
        if name in self.existing and self._confirmed == name:
            return f"A snapshot named {name!r} exists: ctrl+s again replaces it"
        return None

    @after_typing
    def action_keep(self) -> None:
        name = self.query_one("#name", Input).value.strip()
        note = self.query_one("#note", Input).value.strip()
        if name in self.existing:
            if self._confirmed == name:  # asked twice
                self.dismiss((name, note))
                return
            self._confirmed = name  # the refusal says the name is taken
        if self.refused():
            return
        self.dismiss((name, note))

    def action_cancel(self) -> None:
        self.dismiss(None)


class DiffScreen(Dialog[None]):
    """Two estimates side by side: every input and term that changed, and by how much (labels
    whole, wrapped; every figure with its unit: ``diff_table``); arrows and page keys scroll."""

    DEFAULT_CSS = """
    DiffScreen > Vertical { padding: 0; }
    DiffScreen #totals { height: auto; padding: 0 1; }
    DiffScreen #changes { height: 1fr; padding: 0 1; }
    DiffScreen .hint { padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "close", "Close", tooltip="Back to the snapshots", id="diff.close"),
        Binding(
            "q", "close", "Close", show=False, tooltip="Back to the snapshots", id="diff.close_q"
        ),
    ]

    def __init__(
        self, a_name: str, a: Estimate, b_name: str, b: Estimate, compared: str | None = None
    ) -> None:
        """``compared``: the line saying A and B compare Trainium3 with different GPU
        targets (``comparison_change``), None when they compare the same."""
        super().__init__()
        self.a_name, self.a = a_name, a
        self.b_name, self.b = b_name, b
        self.compared = compared

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"A {title_name(self.a_name)} vs B {title_name(self.b_name)}"
            yield Static(self._totals(), id="totals")
            with VerticalScroll(id="changes"):
                work_unit = self.b.work_unit or self.a.work_unit
                yield Static(diff_table(diff_estimates(self.a, self.b), work_unit), id="diff")
            yield Static("arrows scroll   q/esc close", classes="hint")

    def _totals(self) -> Text:
        text = Text()
        if self.compared:
            text.append(f"{self.compared}\n", style="bold yellow")
        b_targets = {t.name: t for t in self.b.targets}
        for item in self.a.targets:
            other = b_targets.get(item.name)
            text.append(f"{title_name(item.name)}: ", style="bold")
            text.append(f"A {item.headline()}  B {other.headline() if other else 'absent'}")
            row = DiffRow(
                item.name, "total_usd", item.total_usd, other.total_usd if other else None
            )
            if row.delta is not None:
                pct = "" if row.delta_pct is None else f", {row.delta_pct:+.1f}%"
                sign = "-" if row.delta < 0 else "+"
                text.append(f"  ({sign}{usd(abs(row.delta))}{pct})", style="bold")
            text.append("\n")
        return text

    def on_mount(self) -> None:
        self.query_one("#changes", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class ReportScreen(Dialog[Path | None]):
    """Write the report of the estimate shown now: a file and a format (Markdown by default).

    The write itself is the ``write`` it is given (the Session's): a path it refuses (inside
    the project's own files, a folder that does not exist) shows its error here and the dialog
    stays; a file that exists is replaced only when asked twice."""

    AUTO_FOCUS = "#path"

    DEFAULT_CSS = """
    ReportScreen > Vertical { width: 76; height: auto; }
    ReportScreen .row > Label { width: 8; }
    """

    BINDINGS = [
        Binding("ctrl+s", "keep", "Write", id="report.keep", priority=True),
        Binding("escape", "cancel", "Cancel", id="report.cancel"),
    ]

    FORMATS = (("Markdown", "md"), ("CSV", "csv"), ("JSON", "json"))

    def __init__(self, default: Path, write: Callable[[str, str], Path]) -> None:
        super().__init__()
        self.default = default
        self.write = write
        self._confirmed: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Write the report (the estimate as shown now)"
            yield field_row(
                "File",
                TextField(
                    str(self.default),
                    compact=True,
                    id="path",
                    suggester=PathSuggester(),
                    select_on_focus=False,
                ),
            )
            yield field_row(
                "Format",
                Select(self.FORMATS, value="md", allow_blank=False, compact=True, id="format"),
                muted=True,
            )
            yield Static("", id="error", classes="error")
            yield Static("ctrl+s or enter write   esc cancel", classes="hint")

    @on(Select.Changed, "#format")
    def _format_changed(self, event: Select.Changed) -> None:
        """Keep the file's suffix in step with the format while it is one of theirs."""
        field = self.query_one("#path", Input)
        path = Path(field.value)
        if path.suffix.lstrip(".") in {key for _, key in self.FORMATS}:
            field.value = str(path.with_suffix(f".{event.value}"))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_keep()

    @after_typing
    def action_keep(self) -> None:
        output = self.query_one("#path", Input).value.strip()
        report_format = str(self.query_one("#format", Select).value)
        error = self.query_one("#error", Static)
        if not output:
            error.update("Not written: name a file for the report")
            return
        if Path(output).expanduser().is_file() and self._confirmed != output:
            self._confirmed = output
            error.update(f"{output} exists: ctrl+s again replaces it")
            return
        try:
            written = self.write(output, report_format)
        except (UserError, OSError) as problem:
            error.update(f"Not written: {problem}")
            return
        self.dismiss(written)

    def action_cancel(self) -> None:
        self.dismiss(None)
