"""The Inputs tab: every input of the estimate with its provenance, overridden ones highlighted.

An input shared by every target is one row (``For`` all). The screen passes the estimate and
the overrides in force down (``show``, ``show_detail``) and asks which row is highlighted
(``highlighted``) when a key sets or drops an override.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static, TabPane

from trntui.core.estimate import Estimate, Override
from trntui.core.estimate import Input as EstimateInput
from trntui.core.format import with_unit
from trntui.core.report import Analysis
from trntui.ui.format import distinct_labels, fit, plural
from trntui.ui.screens.scenarios.rendering import input_detail, input_rows


def overrides_for(overrides: tuple[Override, ...], key: str, target: str | None) -> list[Override]:
    """Overrides that set ``key`` for ``target`` (``None``: a row shared by every target)."""
    return [o for o in overrides if o.input == key and (o.target is None or o.target == target)]


class InputsPane(TabPane):
    DEFAULT_CSS = """
    InputsPane #inputs { height: 1fr; }
    InputsPane #input-detail { height: 4; padding: 0 1; background: $boost; }
    """

    def __init__(self) -> None:
        super().__init__("Inputs", id="inputs-tab")
        self._row_inputs: dict[str, tuple[str | None, EstimateInput]] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="inputs", cursor_type="row")
        yield table
        yield Static("", id="input-detail")

    def on_mount(self) -> None:
        table = self.query_one("#inputs", DataTable)
        for label, width in (("For", 12), ("Input", 26), ("Value", 16), ("Provenance", 12)):
            table.add_column(label, width=width)

    def show(self, result: Estimate, overrides: tuple[Override, ...]) -> None:
        """List ``result``'s inputs, keeping the highlighted row where it was."""
        table = self.query_one("#inputs", DataTable)
        row_before = table.cursor_row
        table.clear()
        self._row_inputs = {}
        rows = input_rows(result)
        names = distinct_labels([target for target, _ in rows if target], 12)
        for target, item in rows:
            key = f"{target or ''}\t{item.key}"
            self._row_inputs[key] = (target, item)
            overridden = bool(overrides_for(overrides, item.key, target))
            shown = with_unit(item.value, item.unit, result.work_unit)
            value = Text(shown, style="bold magenta" if overridden else "")
            kind = item.provenance.kind
            style = {"unknown": "bold yellow", "measured": "green", "quoted": "cyan"}.get(kind, "")
            table.add_row(
                names[target] if target else "all",
                fit(item.label, 26),
                value,
                Text(kind, style=style),
                key=key,
            )
        if table.row_count:
            table.move_cursor(row=min(max(row_before, 0), table.row_count - 1))

    def highlighted(self) -> tuple[str | None, EstimateInput] | None:
        """The highlighted row's target (``None``: every target) and input, if any."""
        table = self.query_one("#inputs", DataTable)
        if not table.row_count or table.cursor_row < 0:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return self._row_inputs.get(key or "")

    def show_detail(self, analysis: Analysis | None, overrides: tuple[Override, ...]) -> None:
        """Where the highlighted input's value came from, and the override keys."""
        found = self.highlighted()
        detail = self.query_one("#input-detail", Static)
        if found is None or analysis is None:
            detail.update("")
            return
        text = input_detail(found[1], analysis.estimate.work_unit)
        hint = "a adds an override" + (", x drops one, ctrl+z undoes" if overrides else "")
        held = plural(len(overrides), "override") if overrides else "no override"
        text.append(f"\nWorking scenario: {held}, kept in the project; {hint}", style="dim")
        detail.update(text)
