"""One line on every screen: each target's total (or what it lacks) and the Trainium3/GPU ratio.

The bar renders the app's last valid ``Analysis``; it never computes. An incomplete target
names its first unknown input and how many more there are, so every target keeps its place on
the line (the Scenarios screen lists them all). While a recompute is
running the previous figures stay, so an edit never blanks the estimate; a failed recompute
leaves them too (the status line says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from trntui.ui.format import fit

if TYPE_CHECKING:
    from trntui.core.report import Analysis


def estimate_line(analysis: Analysis | None, problem: str = "", width: int | None = None) -> Text:
    """``[N overrides ·] Trn3 trial $11.35 · GPU $11.82 · ratio n/a (why)`` on one line,
    led by ``not updated`` when the last recompute failed (``problem`` says why).

    When the line is wider than ``width`` cells, target names and missing-input labels are
    shortened (then shortened more) so that every total and the ratio stay visible.
    """
    text = Text()
    # (target name, missing-input label, say why the ratio is n/a): shorter and shorter.
    for names, labels, why in ((None, None, True), (None, None, False), (16, 12, False),
                               (12, 9, False), (9, 6, False)):  # fmt: skip
        text = _line(analysis, problem, names, labels, why)
        if width is None or text.cell_len <= width:
            break
    return text


def _line(
    analysis: Analysis | None, problem: str, names: int | None, labels: int | None, why: bool
) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if problem:
        text.append("not updated", style="bold red")
        text.append(" (why: Scenarios, 4) · " if names is None else " · ", style="dim")
    if analysis is None:
        text.append("no estimate yet" if problem else "Estimate: computing...", style="italic")
        return text
    targets = analysis.estimate.targets
    overrides = len(analysis.estimate.overrides)
    if overrides:
        text.append(f"{overrides} override{'s' if overrides > 1 else ''}", style="bold magenta")
        text.append(" · ", style="dim")
    if not targets:
        text.append("Estimate: no training target yet (Inventory > Training targets)")
        return text
    for index, item in enumerate(targets):
        if index:
            text.append(" · ", style="dim")
        text.append(f"{fit(item.name, names)} ")
        if item.complete:
            text.append(item.headline(), style="bold")
        else:
            missing = item.incomplete_inputs
            first = f": {fit(missing[0], labels)}" if missing else ""
            more = f" +{len(missing) - 1}" if len(missing) > 1 and (labels or 9) > 6 else ""
            text.append(f"incomplete{first}{more}", style="bold yellow")
    comparison = analysis.comparison
    text.append(" · ", style="dim")
    if comparison.comparable and comparison.cost_ratio is not None:
        text.append(f"Trn3/GPU {comparison.cost_ratio:.2f}", style="bold")
    else:
        reason = comparison.reasons[0] if comparison.reasons else "not comparable"
        reason_text = reason.split(": ", 1)[-1]
        text.append(f"ratio n/a ({reason_text})" if why else "ratio n/a", style="yellow")
    return text


class EstimateBar(Static):
    DEFAULT_CSS = """
    EstimateBar { height: 1; padding: 0 1; background: $boost; }
    """

    def on_mount(self) -> None:
        self.watch(self.app, "analysis", self._show, init=True)
        self.watch(self.app, "estimate_problem", self._show, init=False)

    def _show(self) -> None:
        app = self.app
        self.update(
            estimate_line(
                getattr(app, "analysis", None),
                getattr(app, "estimate_problem", ""),
                width=self.size.width or None,
            )
        )

    def on_resize(self) -> None:
        self._show()
