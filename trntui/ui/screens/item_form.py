"""A dialog that edits one item of a section class (``core/fields.py`` specs): every screen's
form for a thing that is kept whole or not at all, checked before it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from trntui.core.errors import UserError
from trntui.core.fields import FieldValueError, specs_of
from trntui.core.inventory import Section
from trntui.ui.screens.dialog import Dialog, after_typing
from trntui.ui.widgets.field_form import FieldForm


class ItemFormScreen(Dialog[Any]):
    """One item in a form of its own (a risk, a target, a run's set or system size, a quality
    result, a manual quote): ctrl+s keeps it, escape discards it."""

    AUTO_FOCUS = "Input, Select"

    DEFAULT_CSS = """
    ItemFormScreen > Vertical { width: 76; height: auto; max-height: 22; padding: 0; }
    ItemFormScreen FieldForm { height: auto; max-height: 16; }
    ItemFormScreen .hint, ItemFormScreen .error { padding: 0 1; }
    """

    BINDINGS = [
        Binding("ctrl+s", "keep", "Keep", id="item.keep", priority=True),
        Binding("escape", "discard", "Cancel", id="item.cancel"),
    ]

    def __init__(
        self,
        cls: type[Section],
        item: Any,
        *,
        title: str,
        choices: dict[str, list[tuple[str, str]]] | None = None,
        check: Callable[[Any], object] | None = None,
        opens_on: str | None = None,
    ) -> None:
        super().__init__()
        self.item_cls = cls
        self.item = item
        self.title_text = title
        self.choices = choices
        self.check = check
        """Called with the item before it is kept; a ``UserError`` it raises is shown in the
        dialog, which stays open with what was typed."""
        self.opens_on = opens_on
        """The field focused when nothing required is missing (None: the first field)."""

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.title_text
            yield FieldForm(self.item_cls, self.item, choices=self.choices)
            yield Static("", classes="error")
            yield Static("ctrl+s keep   esc cancel", classes="hint")

    def on_mount(self) -> None:
        """Focus the first required field still empty: a manual quote offered with its
        instance type, region and option filled opens on the price, a side rate on the rate,
        so what is typed first goes where something is missing, not into (or in front of) a
        value already there. A form with nothing missing opens on ``opens_on`` (a stored side
        rate, whose title names its service and region, on the rate: a digit typed first went
        nowhere on the Service dropdown), else on its first field."""
        keys = [
            key
            for key, spec in specs_of(self.item_cls).items()
            if spec.required and getattr(self.item, key, None) in (None, "")
        ]
        for key in [*keys, *([self.opens_on] if self.opens_on else [])]:
            fields = self.query(f"#field-{key}")
            if fields:
                fields.first().focus()
                return

    @on(FieldForm.Edited)
    @on(FieldForm.Invalid)
    def _form_message(self, event: FieldForm.Edited | FieldForm.Invalid) -> None:
        event.stop()  # the item is applied as a whole on ctrl+s, not field by field

    @on(FieldForm.Typed)
    def _typed(self, event: FieldForm.Typed) -> None:
        """The form stops its fields' own change messages: what it was refused for is
        checked again here."""
        event.stop()
        self.check_again()

    def refusal(self) -> str | None:
        try:
            item = self.item_cls(**self.query_one(FieldForm).values())
            if self.check is not None:
                self.check(item)
        except (FieldValueError, UserError) as error:
            return f"Not kept: {error}"
        return None

    @after_typing
    def action_keep(self) -> None:
        if self.refused():
            return
        self.dismiss(self.item_cls(**self.query_one(FieldForm).values()))

    def action_discard(self) -> None:
        self.dismiss(None)
