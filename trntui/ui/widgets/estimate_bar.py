"""One line on every screen: each target's total (or what it lacks), where the next training's
cost lands (its P10-P90 band with n, or why there is none) and the Trainium3/GPU ratio.

The bar renders the session's last valid ``Analysis``; it never computes. An incomplete target
names its first unknown input and how many more inputs it lacks ("and 8 more inputs"), so every
target keeps its place on the bar (Inventory > Checks and the Scenarios screen list them all).
The bar takes a second (and, with long names or several incomplete targets, a third) line when
one is not enough, and marks example data and a total made only of assumptions.
While a recompute is running the previous figures stay, so an edit never blanks the estimate;
a failed recompute leaves them too (the status line says why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from trntui.core.format import ratio, usd
from trntui.ui.format import fit_words, name_labels, plural

if TYPE_CHECKING:
    from collections.abc import Sequence

    from trntui.core.analysis import Analysis
    from trntui.core.estimate import TargetEstimate
    from trntui.core.prediction import Band
    from trntui.ui.session import Session


MAX_LINES = 3
_SEPARATOR = " · "
FULL, SHORT, NONE = 2, 1, 0
"""How much of a band the bar shows: ``(P10-P90 $a-$b t n=N)``, ``(P10-90 $a-$b t n=N)`` or
nothing (``t``: the t prediction interval, ``core.prediction``)."""
# (target name, missing-input label, say why the ratio is n/a, band): shorter and shorter. The
# band goes first, then how many more inputs a target lacks (``+5 more``), then names are cut
# between words (``fit_words``), and only then the first missing input (``: 6 inputs
# missing``; Inventory > Checks lists them all) before names are cut shorter.
_LEVELS: tuple[tuple[int | None, int | None, bool, int], ...]
_LEVELS = ((None, None, True, FULL), (None, None, False, FULL), (None, None, False, SHORT),
           (None, None, False, NONE), (None, 24, False, NONE),
           (24, 24, False, SHORT), (16, 24, False, SHORT),
           (24, 24, False, NONE), (16, 24, False, NONE), (12, 24, False, NONE),
           (16, 0, False, NONE), (12, 0, False, NONE), (10, 0, False, NONE),
           (8, 0, False, NONE))  # fmt: skip


def estimate_line(
    analysis: Analysis | None,
    problem: str = "",
    width: int | None = None,
    *,
    example: bool = False,
    lines: int = 1,
) -> Text:
    """``[EXAMPLE ·] [[working scenario: ]N overrides ·] Trn3 trial $11.35 (P10-P90
    $10.90-$12.10 t n=5) · GPU $11.82 (no band: n=2) · Trn3/GPU 0.96``, led by ``not
    updated`` when the last recompute failed (``problem`` says why); a total made only of
    assumptions says so. With several GPU targets the ratio names the one compared
    (``Trn3/B200 p6 0.52``) where names are shown whole.

    The parts are laid out on up to ``lines`` lines of ``width`` cells, wrapping between parts,
    never inside one. When they do not fit, missing-input labels, then target names are
    shortened (then shortened more), so that every total, the ratio and the example marker stay
    visible; names are cut between words, and never two the same.
    """
    text = Text()
    # A line fewer with full names and what targets lack in full (the band shortened) is
    # worth more than the full band: every line the bar takes is one the screen above it loses
    # at 80x24.
    full = [level for level in _LEVELS if level[0] is None and level[1] is None]
    tries = [(level, lines - 1) for level in full if lines > 1]
    tries += [(level, lines) for level in _LEVELS]
    for (names, labels, why, band), room in tries:
        parts = _parts(analysis, problem, names, labels, why, band, example)
        text = _layout(parts, width, room)
        if width is None or all(line.cell_len <= width for line in text.split()):
            # The working scenario named where the chosen layout has room for it.
            parts = _parts(analysis, problem, names, labels, why, band, example, named=True)
            named = _layout(parts, width, room)
            if width is None or all(line.cell_len <= width for line in named.split()):
                return named
            break
    return text


def _layout(parts: list[Text], width: int | None, lines: int) -> Text:
    """The parts joined by separators, a line break before a part that would not fit."""
    text = Text(no_wrap=True, overflow="ellipsis")
    line_len = 0
    used = 1
    for index, part in enumerate(parts):
        if index:
            if width is not None and used < lines and line_len + 3 + part.cell_len > width:
                text.append("\n")
                used += 1
                line_len = 0
            else:
                text.append(_SEPARATOR, style="dim")
                line_len += 3
        text.append_text(part)
        line_len += part.cell_len
    return text


def _parts(
    analysis: Analysis | None,
    problem: str,
    names: int | None,
    labels: int | None,
    why: bool,
    band: int,
    example: bool,
    *,
    named: bool = False,
) -> list[Text]:
    parts: list[Text] = []
    if problem:
        note = " (why: Scenarios, 4)" if names is None else ""
        parts.append(Text.assemble(("not updated", "bold red"), (note, "dim")))
    if example:
        parts.append(Text("EXAMPLE", style="bold yellow"))
    if analysis is None:
        parts.append(
            Text("no estimate yet" if problem else "Estimate: computing...", style="italic")
        )
        return parts
    targets = analysis.estimate.targets
    overrides = len(analysis.estimate.overrides)
    if overrides:
        lead = "working scenario: " if named else ""
        parts.append(Text(f"{lead}{plural(overrides, 'override')}", style="bold magenta"))
    if not targets:
        parts.append(Text("Estimate: no training target yet (Inventory > Training targets)"))
        return parts
    labelled = name_labels([item.name for item in targets], names)
    for item, item_band in zip(targets, analysis.bands, strict=True):
        part = Text(f"{labelled[item.name]} ")
        if item.complete:
            part.append(item.headline(), style="bold")
            if item.assumptions_only:
                part.append(" ")
                part.append("assumptions only", style="bold magenta")
            shown = _band_text(item_band, band)
            if shown:
                part.append(" ")
                part.append(shown, style="dim")
        else:
            lacking = _lacking(item.incomplete_inputs, labels)
            part.append(f"incomplete{lacking}", style="bold yellow")
        parts.append(part)
    comparison = analysis.comparison
    if comparison.comparable and comparison.cost_ratio is not None:
        # Which GPU target, where there is a choice (``t`` on Trn3 vs GPU picks it) and room
        # for its whole name: a cut one read as noise ("Trn3/…(1 x p5.48… 0.71").
        # Polars-backed, loaded by the time an analysis exists: not imported with the bar.
        from trntui.core.comparison import gpu_target_names

        against = "GPU"
        gpus = gpu_target_names(analysis.estimate)
        if len(gpus) > 1 and comparison.gpu is not None and names is None:
            against = comparison.gpu.name
        parts.append(Text(f"Trn3/{against} {ratio(comparison.cost_ratio)}", style="bold"))
    else:
        reason = comparison.reasons[0] if comparison.reasons else "not comparable"
        reason_text = _short_reason(reason, analysis.estimate.targets)
        parts.append(Text(f"ratio n/a ({reason_text})" if why else "ratio n/a", style="yellow"))
    return parts


def _short_reason(reason: str, targets: Sequence[TargetEstimate]) -> str:
    """A reason for no ratio, short: what follows a target's name (``GPU: no run reached the
    quality target``), or the heading of one that states a difference (``work to finish
    differs: <both amounts>``: the Trn3 vs GPU tab has them)."""
    for item in targets:  # a name may hold ": " itself
        if reason.startswith(item.name + ": "):
            return reason.removeprefix(item.name + ": ")
    return reason.partition(": ")[0]


def _lacking(missing: tuple[str, ...], labels: int | None) -> str:
    """What an incomplete target lacks: ``: Instance price and 5 more inputs`` in full, its
    first input cut to ``labels`` cells and ``+5 more``, or (``labels`` 0) only the count."""
    if not missing:
        return ""
    others = len(missing) - 1
    if labels == 0:
        return f": {plural(len(missing), 'input')} missing"
    if labels is None:
        more = f" and {plural(others, 'more input')}" if others else ""
        return f": {missing[0]}{more}"
    return f": {fit_words(missing[0], labels)}" + (f" +{others} more" if others else "")


def _band_text(band: Band, detail: int) -> str:
    """The band at ``detail``: ``(P10-P90 $a-$b t n=N)``, ``(P10-90 $a-$b t n=N)`` or nothing."""
    if detail == NONE:
        return ""
    if band.p10_usd is None:
        return f"(no band: n={band.runs})"
    if detail == FULL:
        return f"(P10-P90 {usd(band.p10_usd)}-{usd(band.p90_usd)} t n={band.runs})"
    return f"(P10-90 {usd(band.p10_usd, 0)}-{usd(band.p90_usd, 0)} t n={band.runs})"


class EstimateBar(Widget):
    """The line(s) at the bottom of every screen. The text is laid out for the width the bar is
    given, and the bar is as tall as that text (1 to ``MAX_LINES`` lines), both computed from
    the same call, so the height never lags the text."""

    DEFAULT_CSS = """
    EstimateBar { height: auto; max-height: 3; padding: 0 1; background: $boost; }
    """

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def on_mount(self) -> None:
        signals = self.session.signals
        signals.analysis.subscribe(self, self._changed)
        signals.estimate_problem.subscribe(self, self._changed)

    def _changed(self, _: object) -> None:
        self.refresh(layout=True)

    def text(self, width: int | None = None) -> Text:
        """The bar's text for ``width`` cells (default: its current width)."""
        session = self.session
        return estimate_line(
            session.analysis,
            session.estimate_problem,
            width=width or self.size.width or max(1, self.app.size.width - 2),
            example=bool(session.inventory.project.example),
            lines=MAX_LINES,
        )

    @property
    def content(self) -> str:
        """The text as shown, one line per bar line."""
        return self.text().plain

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return min(MAX_LINES, max(1, len(self.text(width).plain.splitlines())))

    def render(self) -> Text:
        return self.text()
