"""A small bar plot of throughput over time: warm-up, stalls and restarts at a glance.

Columns before the end of warm-up are drawn in the warning colour, columns holding a stall in
the error colour, steady ones in the success colour; the row under the plot marks warm-up (w),
stalls (!) and restarts (↺) by shape as well, so the phases read apart without colour.
Columns with no measured progress stay blank: an unknown rate is not drawn as zero.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from trntui.core.throughput_series import ThroughputSeries
from trntui.ui.format import duration

_BLOCKS = " ▁▂▃▄▅▆▇█"
_PHASE_MARKS = {"yellow": "w", "red": "!"}
"""The mark under a column of each phase drawn in that colour (steady columns: none)."""


class ThroughputPlot(Widget):
    DEFAULT_CSS = """
    ThroughputPlot { height: 8; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._series: ThroughputSeries | None = None
        self._warmup_end_s: float | None = None
        self._stalls_s: tuple[tuple[float, float], ...] = ()
        self._message = "Select a run to see its throughput over time."

    @property
    def plot_columns(self) -> int:
        return max(10, self.size.width - 2 - 9)

    def show(
        self,
        series: ThroughputSeries | None,
        *,
        warmup_end_s: float | None,
        stalls_s: tuple[tuple[float, float], ...],
        message: str = "",
    ) -> None:
        self._series = series
        self._warmup_end_s = warmup_end_s
        self._stalls_s = stalls_s
        self._message = message or "No timed progress in this log: nothing to plot."
        self.refresh()

    def render(self) -> Text:
        series = self._series
        if series is None:
            return Text(self._message, style="italic")
        rows = max(1, self.size.height - 3)
        known = [r for r in series.rates if r is not None]
        top = max(known) if known else 0.0
        width = len(series.rates)
        span = series.end_s - series.start_s
        column_s = span / width if width else 0.0
        styles = []
        for index in range(width):
            middle = series.start_s + (index + 0.5) * column_s
            if any(a - column_s / 2 <= middle <= b + column_s / 2 for a, b in self._stalls_s):
                styles.append("red")
            elif self._warmup_end_s is not None and middle < self._warmup_end_s:
                styles.append("yellow")
            else:
                styles.append("green")
        text = Text(no_wrap=True, overflow="crop")
        label = f"{top:,.4g}"
        for row in range(rows):
            prefix = label.rjust(8) if row == 0 else " " * 8
            text.append(prefix + "│", style="dim")
            level_low = (rows - row - 1) / rows
            for index, rate in enumerate(series.rates):
                if rate is None or top <= 0:
                    text.append(" ")
                    continue
                fill = (rate / top - level_low) * rows
                block = _BLOCKS[max(0, min(8, round(fill * 8)))]
                text.append(block, style=styles[index])
            text.append("\n")
        # Under each column, its phase as a shape too, so phases read apart without colour
        # (NO_COLOR, a monochrome terminal): warm-up and stalls marked, steady left blank.
        marks = [_PHASE_MARKS.get(style, " ") for style in styles]
        for column in series.restart_columns:
            marks[column] = "↺"
        text.append(" " * 8 + "└", style="dim")
        for mark, style in zip(marks, styles, strict=True):
            text.append(mark, style="bold red" if mark == "↺" else style)
        text.append("\n")
        axis = f"0{' ' * max(1, width - 1 - len(duration(span)))}{duration(span)}"
        text.append(" " * 9 + axis + "\n", style="dim")
        legend = Text.assemble(
            (" " * 9 + series.unit + "  ", "dim"),
            ("w warm-up ", "yellow"),
            ("█ steady ", "green"),
            ("! stall ", "red"),
            ("↺ restart", "bold red"),
        )
        text.append_text(legend)
        return text
