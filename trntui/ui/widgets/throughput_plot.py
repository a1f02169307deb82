"""A small bar plot of throughput over time: warm-up, steady rate, stalls and restarts at a
glance, readable at 80x24.

The y axis spans the rates the run showed, not 0 to the top: a run at a steady pace would
otherwise fill every row alike (a solid block) and hide a slower first block or a dip. Its
floor sits below the slowest rate by the spread of the rates (at least 2% of the fastest; at 0
when that goes below 0), and is labelled, as are the top and the middle row, so the cut axis
reads as one. The steady throughput of the run facts is marked on the axis (``┤``, labelled
when its row has no label yet) and named in the legend.

Warm-up is what the run facts count as warm-up time (``PhaseSplit.warmup_s``: the warm
intervals' time beyond the median pace), from the start of training, at least one column when
there is any: the first interval of a coarse log (an MLPerf block of several minutes) is
warm-up by rule, yet nearly all of it runs at the steady pace, and marking all of it hid half
the plot under the mark. Columns holding a stall are drawn in the error colour, warm-up in the
warning colour, the rest in the success colour; the row under the plot marks warm-up (w),
stalls (!) and restarts (↺) by shape as well, so the phases read apart without colour.
Columns with no measured progress (evaluation between blocks, downtime) stay blank: an unknown
rate is not drawn as zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

from rich.text import Text
from textual.widget import Widget

from trntui.core.throughput_series import ThroughputSeries
from trntui.ui.format import duration

_BLOCKS = " ▁▂▃▄▅▆▇█"
_PHASE_MARKS = {"yellow": "w", "red": "!"}
"""The mark under a column of each phase drawn in that colour (steady columns: none)."""
_LABEL_WIDTH = 8
_MIN_SPAN = 0.02
"""The y axis spans at least this share of the fastest rate (a flat run stays readable)."""


@dataclass(frozen=True)
class PlotFacts:
    """What the run facts say about the plotted run (``RunFacts``)."""

    warmup_s: float | None = None
    """Warm-up time (``phases.warmup_s``), marked from the start of training."""
    warmup_end_s: float | None = None
    """Where the facts' steady window starts: the warm-up mark never runs past it."""
    steady: float | None = None
    """Steady throughput, in ``unit``."""
    unit: str | None = None
    stalls_s: tuple[tuple[float, float], ...] = ()
    """(start, end) of each stall, in seconds of the timeline."""


def axis_floor(known: list[float]) -> float:
    """The y axis's lowest value for rates ``known`` (see the module docstring)."""
    top = max(known)
    spread = max(top - min(known), _MIN_SPAN * top)
    return max(0.0, min(known) - spread)


def _append_runs(text: Text, cells: list[tuple[str, str]]) -> None:
    """Append each ``(character, style)`` of ``cells``, one span for each run of cells in
    one style: a span per cell (some 500 a plot) made Textual spend 15-30 ms converting and
    cutting them at every highlighted run, most of a key's frame."""
    for style, run in groupby(cells, key=itemgetter(1)):
        text.append("".join(character for character, _ in run), style=style or None)


class ThroughputPlot(Widget):
    DEFAULT_CSS = """
    ThroughputPlot { height: 8; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._series: ThroughputSeries | None = None
        self._facts = PlotFacts()
        self._message = "Select a run to see its throughput over time."

    @property
    def plot_columns(self) -> int:
        return max(10, self.size.width - 2 - _LABEL_WIDTH - 1)

    def show(
        self, series: ThroughputSeries | None, facts: PlotFacts | None = None, message: str = ""
    ) -> None:
        self._series = series
        self._facts = facts or PlotFacts()
        self._message = message or "No timed progress in this log: nothing to plot."
        self.refresh()

    def _styles(self, series: ThroughputSeries) -> list[str]:
        """Each column's phase colour: stall, warm-up (the facts' warm-up time from the
        start of training) or steady."""
        width = len(series.rates)
        column_s = (series.end_s - series.start_s) / width if width else 0.0
        facts = self._facts
        warm_until = None
        if facts.warmup_s:
            warm_until = series.start_s + facts.warmup_s
            if facts.warmup_end_s is not None:
                warm_until = min(warm_until, facts.warmup_end_s)
        styles = []
        for index in range(width):
            begin = series.start_s + index * column_s
            middle = begin + column_s / 2
            if any(a - column_s / 2 <= middle <= b + column_s / 2 for a, b in facts.stalls_s):
                styles.append("red")
            elif warm_until is not None and begin < warm_until:
                styles.append("yellow")
            else:
                styles.append("green")
        return styles

    def render(self) -> Text:
        series = self._series
        if series is None:
            return Text(self._message, style="italic")
        rows = max(1, self.size.height - 3)
        known = [r for r in series.rates if r is not None]
        top = max(known) if known else 0.0
        floor = axis_floor(known) if known and top > 0 else 0.0
        scale = top - floor
        styles = self._styles(series)
        labels = {0: top, rows // 2: floor + scale * (rows - rows // 2) / rows}
        steady = self._facts.steady if self._facts.unit == series.unit else None
        steady_row = None
        if steady is not None and scale > 0 and floor <= steady <= top * 1.05:
            level = (steady - floor) / scale
            steady_row = max(0, min(rows - 1, rows - 1 - int(level * rows - 1e-9)))
            labels.setdefault(steady_row, steady)  # the top and middle keep their values
        text = Text(no_wrap=True, overflow="crop")
        for row in range(rows):
            label = f"{labels[row]:,.4g}" if row in labels else ""
            text.append(label.rjust(_LABEL_WIDTH), style="dim")
            text.append("┤" if row == steady_row else "│", style="dim")
            level_low = (rows - row - 1) / rows
            cells = []
            for index, rate in enumerate(series.rates):
                if rate is None or scale <= 0:
                    cells.append((" ", ""))
                    continue
                fill = ((rate - floor) / scale - level_low) * rows
                cells.append((_BLOCKS[max(0, min(8, round(fill * 8)))], styles[index]))
            _append_runs(text, cells)
            text.append("\n")
        # Under each column, its phase as a shape too, so phases read apart without colour
        # (NO_COLOR, a monochrome terminal): warm-up and stalls marked, steady left blank.
        marks = [_PHASE_MARKS.get(style, " ") for style in styles]
        for column in series.restart_columns:
            marks[column] = "↺"
        text.append(f"{floor:,.4g}".rjust(_LABEL_WIDTH) + "└", style="dim")
        _append_runs(
            text,
            [
                (mark, "bold red" if mark == "↺" else style)
                for mark, style in zip(marks, styles, strict=True)
            ],
        )
        text.append("\n")
        span = series.end_s - series.start_s
        width = len(series.rates)
        axis = f"0{' ' * max(1, width - 1 - len(duration(span)))}{duration(span)}"
        text.append(" " * (_LABEL_WIDTH + 1) + axis + "\n", style="dim")
        steady_text = "█ steady " if steady is None else f"█ steady ┤{steady:,.4g} "
        legend = Text.assemble(
            (" " * (_LABEL_WIDTH + 1) + series.unit + "  ", "dim"),
            ("w warm-up ", "yellow"),
            (steady_text, "green"),
            ("! stall ", "red"),
            ("↺ restart", "bold red"),
        )
        text.append_text(legend)
        return text
