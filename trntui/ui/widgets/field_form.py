"""A form generated from a section's field specs: one compact row per value, inline errors.

The form never saves anything itself. A valid edit posts ``FieldForm.Edited`` with the parsed
value; an invalid one shows its message under the field and posts nothing, so the last valid
value stays in force.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Input, Label, Select, Static

from trntui.core.fields import FieldSpec, FieldValueError, specs_of
from trntui.core.inventory import Section, parse_value
from trntui.ui.widgets.text_field import TextField

IDLE_COMMIT_S = 1.0
"""A valid entry is committed after this long without a keystroke (or at once on enter/tab)."""


@dataclass
class FieldChange:
    key: str
    value: Any


LABEL_WIDTH = 21
"""Cells for a field's label: every label (with ' *' when required) fits in one less."""


class FieldRow(Vertical):
    """Label, input, unit on one line; the error (if any) on the line below."""

    DEFAULT_CSS = f"""
    FieldRow {{ height: auto; }}
    FieldRow > Horizontal {{ height: 1; }}
    FieldRow .field-label {{ width: {LABEL_WIDTH}; color: $text-muted; }}
    FieldRow .field-label.-required {{ color: $text; }}
    FieldRow Input, FieldRow Select {{ width: 1fr; }}
    FieldRow .field-unit {{ width: auto; max-width: 17; padding-left: 1; color: $text-muted; }}
    FieldRow .field-error {{
        color: $error; padding-left: {LABEL_WIDTH}; height: auto; display: none;
    }}
    FieldRow.-invalid .field-error {{ display: block; }}
    FieldRow.-invalid Input {{ color: $error; }}
    """

    def __init__(
        self,
        cls: type[Section],
        key: str,
        spec: FieldSpec,
        value: Any,
        *,
        disabled: bool,
        choices: list[tuple[str, str]] | None = None,
    ):
        super().__init__(id=f"row-{key}", classes="field-row")
        self.section_cls = cls
        self.key = key
        self.spec = spec
        self.initial = value
        self._disabled = disabled
        self.choices = choices
        """(label, value) pairs to pick a text field's value from, instead of typing it."""

    def compose(self) -> ComposeResult:
        spec = self.spec
        label = spec.label + (" *" if spec.required else "")
        with Horizontal():
            yield Label(label, classes="field-label" + (" -required" if spec.required else ""))
            if spec.kind in ("choice", "bool") or self.choices is not None:
                options: list[tuple[str, Any]]
                if spec.kind == "bool":
                    options = [("yes", True), ("no", False)]
                elif self.choices is not None:
                    options = list(self.choices)
                    if self.initial is not None and self.initial not in {v for _, v in options}:
                        # Kept, and marked, so that opening the form never changes the value.
                        options.append((f"{self.initial} (no such run set)", self.initial))
                else:
                    options = [(choice, choice) for choice in spec.choices]
                yield Select(
                    options,
                    value=self.initial if self.initial is not None else Select.NULL,
                    allow_blank=not spec.required,
                    prompt="(not set)",
                    compact=True,
                    id=f"field-{self.key}",
                    disabled=self._disabled,
                    tooltip=spec.help or None,
                )
            else:
                yield TextField(
                    spec.format_value(self.initial),
                    placeholder=spec.placeholder or ("(not set)" if not spec.required else ""),
                    compact=True,
                    id=f"field-{self.key}",
                    disabled=self._disabled,
                    tooltip=spec.help or None,
                )
            yield Label(spec.unit, classes="field-unit")

    def show_error(self, message: str | None) -> None:
        """Show ``message`` under the field (None: no error). The error line is made the first
        time one is shown, and a row is restyled only when its state changes: a form's first
        frame builds only what it shows."""
        if message == self.error:
            return
        self.set_class(message is not None, "-invalid")
        line = self._error_line()
        if line is None:
            self.mount(Static(message or "", classes="field-error"))
        else:
            line.update(message or "")

    @property
    def error(self) -> str | None:
        line = self._error_line()
        return str(line.content) if line is not None and self.has_class("-invalid") else None

    def _error_line(self) -> Static | None:
        """The error line, once a first error has made it."""
        return next(iter(self.query_children(".field-error").results(Static)), None)

    def _entry(self) -> Input | Select[Any]:
        """The field's own widget: a Select where it picks from choices, else an Input."""
        widget = self.query_one(f"#field-{self.key}")
        assert isinstance(widget, Input | Select)  # FieldRow.compose yields one of the two
        return widget

    def parse(self) -> Any:
        """The current entry as a value; raises ``FieldValueError`` when it is not valid."""
        widget = self._entry()
        if isinstance(widget, Select):
            value = widget.value
            if value is Select.NULL:
                if self.spec.required:
                    raise FieldValueError(f"{self.spec.label} is required")
                return None
            return value
        return parse_value(self.section_cls, self.key, widget.value)

    def set_value(self, value: Any) -> None:
        """Show ``value`` (after a reload or undo) without posting an edit."""
        widget = self._entry()
        with widget.prevent(Input.Changed, Select.Changed):
            if isinstance(widget, Select):
                widget.value = value if value is not None else Select.NULL
            else:
                widget.value = self.spec.format_value(value)
        self.show_error(None)


class FieldForm(VerticalScroll, can_focus=False):
    """All fields of one section class (a single table or one list item).

    Not focusable itself: tab goes from field to field, and focus scrolls the form.
    """

    DEFAULT_CSS = """
    FieldForm { height: 1fr; padding: 0 1; }
    FieldForm .form-title { text-style: bold; margin-bottom: 1; }
    FieldForm .form-help { color: $text-muted; margin-bottom: 1; }
    """

    idle_commit_s: float = IDLE_COMMIT_S
    """Seconds without a keystroke before a valid entry is committed (tests may change it)."""

    class Edited(Message):
        """A field now holds a new valid value."""

        def __init__(self, form: FieldForm, change: FieldChange) -> None:
            super().__init__()
            self.form = form
            self.change = change

        @property
        def control(self) -> FieldForm:
            return self.form

    class Invalid(Message):
        """A field holds text that does not parse; nothing was applied."""

        def __init__(self, form: FieldForm, key: str, message: str) -> None:
            super().__init__()
            self.form = form
            self.key = key
            self.message = message

    class Typed(Message):
        """A field's entry changed (typed, pasted or picked), valid or not: a dialog that
        refused the form checks it again."""

    class Corrected(Message):
        """A field that held invalid text parses again (its value may equal the saved one)."""

        def __init__(self, form: FieldForm, key: str) -> None:
            super().__init__()
            self.form = form
            self.key = key

    def __init__(
        self,
        cls: type[Section],
        obj: Any,
        *,
        read_only: bool = False,
        help_text: str = "",
        id: str | None = None,
        choices: dict[str, list[tuple[str, str]]] | None = None,
    ) -> None:
        super().__init__(id=id)
        self.section_cls = cls
        self.obj = obj
        self.read_only = read_only
        self.help_text = help_text
        self.choices = choices or {}
        """Per text field: the (label, value) pairs it is picked from."""
        self._idle_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.section_cls.TITLE, classes="form-title")
        if self.help_text:
            yield Static(self.help_text, classes="form-help")
        for key, spec in specs_of(self.section_cls).items():
            yield FieldRow(
                self.section_cls,
                key,
                spec,
                getattr(self.obj, key),
                disabled=self.read_only,
                choices=self.choices.get(key),
            )

    def on_mount(self) -> None:
        self._show_units()

    def _show_units(self) -> None:
        """Units that follow another field's value (a side rate's, its service's): the
        section class's ``units_of`` gives them from the fields' current values."""
        units_of = getattr(self.section_cls, "units_of", None)
        if units_of is None:
            return
        values: dict[str, object] = {}
        for row in self.rows():
            try:
                values[row.key] = row.parse()
            except FieldValueError:
                values[row.key] = None
        for key, unit in units_of(values).items():
            self.row(key).query_one(".field-unit", Label).update(unit)

    def rows(self) -> list[FieldRow]:
        return list(self.query(FieldRow))

    def set_read_only(self, read_only: bool) -> None:
        """Enable or disable every field (the session took the lock, or lost it)."""
        self.read_only = read_only
        for row in self.rows():
            row._disabled = read_only
            row.query_one(f"#field-{row.key}").disabled = read_only

    def row(self, key: str) -> FieldRow:
        return self.query_one(f"#row-{key}", FieldRow)

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        """Check every keystroke; a valid entry is committed once typing pauses.

        Committing on a pause (not on every keystroke) keeps half-typed states such as an
        emptied field out of the file, while a dropped SSH session still loses nothing valid.
        """
        event.stop()
        row = self._row_of(event.control)
        if row is None:
            return
        self.post_message(self.Typed())
        if self._idle_timer is not None:
            self._idle_timer.stop()
            self._idle_timer = None
        try:
            row.parse()
        except FieldValueError as error:
            row.show_error(str(error))
            self.post_message(self.Invalid(self, row.key, str(error)))
            return
        if row.error:
            self.post_message(self.Corrected(self, row.key))
        row.show_error(None)
        self._idle_timer = self.set_timer(self.idle_commit_s, lambda: self._commit(row))

    @on(Input.Submitted)
    @on(Input.Blurred)
    @on(Select.Changed)
    def _committed(self, event: Input.Submitted | Input.Blurred | Select.Changed) -> None:
        """Enter, leaving the field, or picking a choice commits the entry if it is valid.
        A field left shows its value from the start again, not from where typing ended."""
        event.stop()
        if isinstance(event, Input.Blurred):
            event.input.action_home()
        row = self._row_of(event.control)
        if row is not None:
            self._commit(row)
        if isinstance(event, Select.Changed):
            self._show_units()
            self.post_message(self.Typed())

    def _row_of(self, widget: object) -> FieldRow | None:
        widget_id = getattr(widget, "id", None) or ""
        if not widget_id.startswith("field-"):
            return None
        return self.row(widget_id.removeprefix("field-"))

    def _commit(self, row: FieldRow) -> None:
        try:
            value = row.parse()
        except FieldValueError as error:
            row.show_error(str(error))
            return
        row.show_error(None)
        if value != getattr(self.obj, row.key):
            self.post_message(self.Edited(self, FieldChange(row.key, value)))

    def pending_changes(self) -> list[FieldChange]:
        """Valid entries not yet committed (the field still focused when the user quits)."""
        changes = []
        for row in self.rows():
            try:
                value = row.parse()
            except FieldValueError:
                continue
            if value != getattr(self.obj, row.key):
                changes.append(FieldChange(row.key, value))
        return changes

    def values(self) -> dict[str, Any]:
        """Every field parsed; raises ``FieldValueError`` for the first invalid one."""
        return {row.key: row.parse() for row in self.rows()}

    def invalid_fields(self) -> list[tuple[str, str]]:
        """(label, message) for every field whose entry is not valid right now."""
        found = []
        for row in self.rows():
            try:
                row.parse()
            except FieldValueError as error:
                found.append((row.spec.label, str(error)))
        return found

    def load(self, obj: Any) -> None:
        """Show another object's values (reload, undo) without posting edits."""
        self.obj = obj
        for row in self.rows():
            row.set_value(getattr(obj, row.key))
