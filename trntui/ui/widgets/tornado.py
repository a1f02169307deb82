"""A tornado chart: which observed input moves a target's total most, largest swing on top.

Each input takes two lines: its name with the range seen in the repeated runs, then a bar
centred on the estimate's total reaching the totals at both ends of that range. The part left
of the centre is the cheaper end, the part right of it the dearer end, on one scale for the
whole chart, so bar lengths compare across inputs.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from trntui.core.format import number, usd
from trntui.core.sensitivity import Sensitivity, SensitivityBar

_LEFT = "▓"
_RIGHT = "█"
_CENTRE = "│"
_MONEY_WIDTH = 10


class TornadoChart(Widget):
    DEFAULT_CSS = """
    TornadoChart { height: auto; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._sensitivity: Sensitivity | None = None

    def show(self, sensitivity: Sensitivity | None) -> None:
        self._sensitivity = sensitivity
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(max(width, 30)))

    def render(self) -> Text:
        return Text("\n").join(self._lines(max(self.content_size.width, 30)))

    def _lines(self, width: int) -> list[Text]:
        sensitivity = self._sensitivity
        if sensitivity is None:
            return [Text("No estimate yet.", style="italic")]
        if sensitivity.base_total_usd is None:
            return [Text("No sensitivity: the estimate is incomplete.", style="italic")]
        bars = sensitivity.bars
        if not bars:
            return [Text("No measured input has a range over repeated runs.", style="italic")]
        base = sensitivity.base_total_usd
        scale = max(
            max(abs(bar.total_at_low - base), abs(bar.total_at_high - base)) for bar in bars
        )
        half = max(4, (width - 2 * _MONEY_WIDTH - 3) // 2)
        lines = [
            Text.assemble(
                ("▓", "green"), " cheaper end of the observed range   ", ("█", "red"), " dearer end"
            )
        ]
        for bar in bars:
            lines.append(self._title(bar, width))
            lines.append(self._bar(bar, base, scale, half))
        return lines

    def _title(self, bar: SensitivityBar, width: int) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(bar.label, style="bold")
        spread = (
            f"same in every run: {number(bar.low)}"
            if bar.low == bar.high
            else f"runs {number(bar.low)} - {number(bar.high)}"
        )
        text.append(f"  {spread} {bar.unit}", style="dim")
        text.truncate(width, overflow="ellipsis")
        return text

    def _bar(self, bar: SensitivityBar, base: float, scale: float, half: int) -> Text:
        cheap = min(bar.total_at_low, bar.total_at_high, base)
        dear = max(bar.total_at_low, bar.total_at_high, base)
        left = round((base - cheap) / scale * half) if scale > 0 else 0
        right = round((dear - base) / scale * half) if scale > 0 else 0
        text = Text(no_wrap=True)
        text.append(usd(cheap).rjust(_MONEY_WIDTH) + " ")
        text.append(" " * (half - left))
        text.append(_LEFT * left, style="green")
        text.append(_CENTRE, style="bold")
        text.append(_RIGHT * right, style="red")
        text.append(" " * (half - right))
        text.append(" " + usd(dear))
        return text
