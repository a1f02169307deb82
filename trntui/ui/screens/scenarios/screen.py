"""The Scenarios screen itself: its tabs, its keys, and every change it makes to the app.

The screen follows the session's ``analysis`` and ``estimate_problem`` (its ``signals``) and
passes them down to the tab widgets (``estimate``, ``inputs``, ``sensitivity``, ``compare``,
``scale``, ``snapshots`` beside this module), which only show what they are given. What changes
the app's state (setting, dropping and undoing overrides, saving and using snapshots) stays
here, as do its reads of the app; the dialogs are in ``modals``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import DataTable, Footer, TabbedContent
from textual.worker import get_current_worker

from trntui.core.comparison import gpu_target_names
from trntui.core.errors import UserError
from trntui.core.estimate import INPUT_SPECS, Override, implausible_overrides
from trntui.core.estimate import Input as EstimateInput
from trntui.core.report import Analysis
from trntui.store.scenarios import (
    Scenario,
    ScenarioInfo,
    compared_target,
    comparison_change,
    list_scenarios,
    load_scenario,
    staleness,
)
from trntui.ui.format import plural, title_name
from trntui.ui.screens.base import SessionScreen, edits
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.scenarios.compare import ComparePane
from trntui.ui.screens.scenarios.estimate import EstimatePane
from trntui.ui.screens.scenarios.inputs import InputsPane, overrides_for
from trntui.ui.screens.scenarios.modals import (
    DiffScreen,
    OverrideScreen,
    ReportScreen,
    SaveSnapshotScreen,
)
from trntui.ui.screens.scenarios.scale import ScalePane
from trntui.ui.screens.scenarios.sensitivity import SensitivityPane
from trntui.ui.screens.scenarios.snapshots import SnapshotsPane
from trntui.ui.session import Session, overrides_in_force
from trntui.ui.widgets.area_bar import AreaBar
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.status_line import StatusLine

_TAB_ACTIONS = {
    "add_override": ("inputs",),
    "drop_override": ("inputs",),
    "next_target": ("sensitivity", "scale", "compare"),
    "open_snapshot": ("snapshots",),
    "mark_snapshot": ("snapshots",),
    "compare_snapshots": ("snapshots",),
    "use_snapshot": ("snapshots",),
    "write_report": ("estimate", "compare"),
}


class ScenariosScreen(SessionScreen):
    """Six tabs (each a widget beside this module) that keep the estimate inside 80x24."""

    DEFAULT_CSS = """
    ScenariosScreen TabbedContent { height: 1fr; }
    ScenariosScreen TabPane { padding: 0; }
    ScenariosScreen VerticalScroll { padding: 0 1; }
    """

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset(
        {"add_override", "write_report", "save_snapshot", "compare_snapshots", "tab"}
    )
    """Actions that open a dialog, and ``tab`` (Textual's tab bar confirms a change with a
    message of its own, which undid a second ``]`` typed before it arrived): keys typed right
    after wait for them (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding(
            "right_square_bracket",
            "tab(1)",
            "Tab",
            key_display="]",
            tooltip="Next tab",
            id="scenarios.next",
        ),
        Binding(
            "left_square_bracket",
            "tab(-1)",
            "Prev tab",
            show=False,
            tooltip="Previous tab",
            id="scenarios.previous",
        ),
        Binding(
            "a",
            "add_override",
            "Override",
            tooltip="Override the highlighted input (Inputs tab), with who and why",
            id="scenarios.override",
        ),
        Binding(
            "x",
            "drop_override",
            "Drop",
            tooltip="Drop the highlighted override (Inputs tab)",
            id="scenarios.drop",
        ),
        Binding(
            "d",
            "drop_override",
            "Drop",
            show=False,
            tooltip="Drop the highlighted override (d deletes on every screen)",
            id="scenarios.drop_d",
        ),
        Binding(
            "t",
            "next_target",
            "Target",
            tooltip="Show the other target (Sensitivity and Scale tabs); on Trn3 vs GPU, "
            "compare Trainium3 with the next GPU target (kept in the working scenario)",
            id="scenarios.target",
        ),
        Binding(
            "s",
            "save_snapshot",
            "Save",
            tooltip="Save a scenario snapshot (every value the estimate used)",
            id="scenarios.save",
        ),
        Binding(
            "r",
            "write_report",
            "Report",
            tooltip="Write the report of the estimate shown: Markdown, CSV or JSON (as "
            "trntui report)",
            id="scenarios.report",
        ),
        Binding(
            "o",
            "open_snapshot",
            "Open",
            tooltip="Open the highlighted snapshot (Snapshots tab)",
            id="scenarios.open",
        ),
        Binding(
            "m",
            "mark_snapshot",
            "Mark A",
            show=False,  # the footer holds 80 columns; the tab's hint line names m and c
            tooltip="Mark the highlighted snapshot as A to compare with",
            id="scenarios.mark",
        ),
        Binding(
            "c",
            "compare_snapshots",
            "Compare",
            show=False,
            tooltip="Compare snapshot A with the highlighted one",
            id="scenarios.compare",
        ),
        Binding(
            "u",
            "use_snapshot",
            "Use",
            tooltip="Make the highlighted snapshot's overrides and GPU target compared the "
            "working scenario",
            id="scenarios.use",
        ),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session, id="scenarios-screen")
        self.target_index = 0
        self.marked: str | None = None
        self.opened: Scenario | None = None

    def compose(self) -> ComposeResult:
        yield AreaBar("screen.scenarios", self.session)
        with TabbedContent(id="tabs"):
            yield EstimatePane()
            yield InputsPane()
            yield SensitivityPane()
            yield ComparePane()
            yield ScalePane()
            yield SnapshotsPane()
        yield EstimateBar(self.session)
        yield StatusLine(self.session.signals.status)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        signals = self.session.signals
        signals.analysis.subscribe(self, self._show)
        signals.estimate_problem.subscribe(self, self._show_problem)
        self._show(self.session.analysis)
        self._show_problem(self.session.estimate_problem)
        self.call_after_refresh(self._read_snapshots)

    # --- tabs and keys ---------------------------------------------------------------------

    def _active_tab(self) -> str:
        active = self.query_one("#tabs", TabbedContent).active
        return {"inputs-tab": "inputs", "snapshots-tab": "snapshots"}.get(active, active)

    def prepare_action(self, action: str) -> None:
        """Show the tab ``action`` acts on (the palette runs actions from any tab)."""
        tabs = _TAB_ACTIONS.get(action)
        if tabs and self._active_tab() not in tabs:
            tab = tabs[0]
            names = {"inputs": "inputs-tab", "snapshots": "snapshots-tab"}
            self.query_one("#tabs", TabbedContent).active = names.get(tab, tab)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer a key only on the tab it acts on, and only when it has something to act on,
        so the footer stays inside 80 columns."""
        tabs = _TAB_ACTIONS.get(action)
        if tabs is None or not self.is_mounted:
            return True
        if self._active_tab() not in tabs:
            return False
        analysis = self.session.analysis
        if action == "drop_override":
            return bool(self.session.overrides)
        if action == "next_target":
            if analysis is None:
                return False
            if self._active_tab() == "compare":
                return len(gpu_target_names(analysis.estimate)) > 1
            return len(analysis.estimate.targets) > 1
        if action in ("open_snapshot", "mark_snapshot", "compare_snapshots", "use_snapshot"):
            return self.query_one(SnapshotsPane).row_count > 0
        return True

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id != event.tabbed_content.active:
            # A tab already left again (its message arrived after the next change): focusing
            # into its hidden pane would activate it once more, and the tabs flipped
            # between two without end.
            return
        self.refresh_bindings()
        if self._active_tab() == "scale":
            self._show_scale()
        self._focus_pane(event.pane)

    def _focus_pane(self, pane: Widget) -> None:
        """Focus the pane's table or scroll area, so the keys act on the tab shown."""
        for widget in pane.query("DataTable, VerticalScroll"):
            if widget.focusable:
                widget.focus()
                break

    def action_tab(self, step: int) -> None:
        tabs = self.query_one("#tabs", TabbedContent)
        panes = ["estimate", "inputs-tab", "sensitivity", "compare", "scale", "snapshots-tab"]
        tabs.active = panes[(panes.index(tabs.active) + step) % len(panes)]
        # The focus moves now, not when the tab bar's message comes back: left on the pane
        # just hidden, Textual would move it to another widget of that hidden pane.
        self._focus_pane(tabs.get_pane(tabs.active))

    # --- showing the analysis --------------------------------------------------------------

    def _show(self, analysis: Analysis | None) -> None:
        self.query_one(EstimatePane).show(analysis)
        if analysis is None:
            return
        self.query_one(InputsPane).show(analysis.estimate, self.session.overrides)
        self._show_input_detail()
        self._show_sensitivity(analysis)
        self.query_one(ComparePane).show(analysis)
        if self._active_tab() == "scale":
            self._show_scale()
        if self.opened is not None:
            self._show_opened()
        self.refresh_bindings()

    def _show_problem(self, problem: str) -> None:
        self.query_one(EstimatePane).show_problem(problem)

    @on(DataTable.RowHighlighted, "#inputs")
    def _input_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_input_detail()

    def _highlighted_input(self) -> tuple[str | None, EstimateInput] | None:
        return self.query_one(InputsPane).highlighted()

    def _show_input_detail(self) -> None:
        self.query_one(InputsPane).show_detail(self.session.analysis, self.session.overrides)

    def _show_sensitivity(self, analysis: Analysis) -> None:
        targets = analysis.estimate.targets
        if targets:
            self.target_index %= len(targets)
        self.query_one(SensitivityPane).show(analysis, self.target_index)

    def action_next_target(self) -> None:
        if self._active_tab() == "compare":
            self._compare_with_next_gpu()
            return
        self.target_index += 1
        if self.session.analysis is not None:
            self._show_sensitivity(self.session.analysis)
            targets = self.session.analysis.estimate.targets
            name = targets[self.target_index].name if targets else ""
            if title_name(name) != name:  # the tab's title cuts it: the whole name here
                self.set_status(f"Showing {name}")
        if self._active_tab() == "scale":
            self._show_scale()

    @edits
    def _compare_with_next_gpu(self) -> None:
        """Compare Trainium3 with the GPU target after the one compared now (in the
        inventory's order, round), kept in the working scenario through the session."""
        analysis = self.session.analysis
        if analysis is None:
            return
        names = gpu_target_names(analysis.estimate)
        if len(names) < 2:
            self.set_status("Only one GPU target: add another on Inventory > Training targets")
            return
        now = analysis.comparison.gpu.name if analysis.comparison.gpu is not None else None
        chosen = names[(names.index(now) + 1) % len(names)] if now in names else names[0]
        problem = self.session.compare_with(chosen)
        if problem is not None:
            self.set_status(f"Comparison not changed: {problem}", "error")
            return
        self.set_status(
            f"Trn3 vs GPU: Trainium3 against {chosen} ({names.index(chosen) + 1} of "
            f"{len(names)} GPU targets; kept in the working scenario, ctrl+z undoes)"
        )

    def _show_scale(self) -> None:
        """Price the current target at each instance count (in the tab's worker)."""
        context = self.session.estimate_context
        targets = context.inventory.targets if context is not None else ()
        if targets:
            self.target_index %= len(targets)
        self.query_one(ScalePane).show(context, self.target_index, self.session.overrides)

    # --- overrides -------------------------------------------------------------------------

    def action_add_override(self) -> None:
        analysis = self.session.analysis
        if analysis is None or not analysis.estimate.targets:
            self.notify("No estimate yet to set a parameter on.")
            return
        found = self._highlighted_input()
        key, target = ("steady_throughput", None) if found is None else (found[1].key, found[0])
        if target is None and INPUT_SPECS[key].per_target:
            target = analysis.estimate.targets[0].name
        existing = next(iter(overrides_for(self.session.overrides, key, target)), None)
        self.app.push_screen(
            OverrideScreen(
                analysis.estimate,
                self.session.overrides,
                key=key,
                target=target,
                check=self.session.check_overrides,
                existing=existing,
            ),
            self._override_kept,
        )

    def _override_kept(self, override: Override | None) -> None:
        """Apply ``override``; one of a price outside the plausibility band (the band of
        ``price add`` and ``price rate``) only when the user confirms it."""
        if override is None:
            return
        analysis = self.session.analysis
        targets = analysis.estimate.targets if analysis is not None else ()
        doubts = implausible_overrides(targets, (override,), self.session.inventory)
        if not doubts:
            self._apply_override(override)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._apply_override(override)
            else:
                self.set_status("Override not applied (implausible price): correct it", "error")

        listed = "\n".join(f"- {doubt}" for doubt in doubts[:4])
        self.app.push_screen(
            ConfirmScreen(f"The value looks implausible:\n{listed}\n\nUse it anyway?"), answered
        )

    def _apply_override(self, override: Override) -> None:
        before = self.session.overrides
        kept = tuple(o for o in before if (o.input, o.target) != (override.input, override.target))
        label = INPUT_SPECS[override.input].label
        problem = self.session.set_overrides((*kept, override), label=f"override of {label}")
        if problem is not None:
            self.set_status(f"Override not applied: {problem}", "error")
            return
        self.set_status(f"Override: {label} = {override.value:g} ({override.who}: {override.why})")

    def action_drop_override(self) -> None:
        found = self._highlighted_input()
        if found is None:
            return
        target, item = found
        before = self.session.overrides
        dropped = overrides_for(before, item.key, target)
        if not dropped:
            # An override whose target was renamed or deleted has no row to select; it is what
            # keeps the estimate from updating, so x offers to drop it from any row.
            names = {t.name for t in self.session.inventory.targets}
            dropped = [o for o in before if o.target is not None and o.target not in names]
        if not dropped:
            self.notify(f"{item.label} is not overridden here.")
            return
        what = ", ".join(
            f"{o.target + ': ' if o.target else ''}{INPUT_SPECS[o.input].label}" for o in dropped
        )
        problem = self.session.set_overrides(
            tuple(o for o in before if o not in dropped), label=f"dropping the override of {what}"
        )
        if problem is not None:
            self.set_status(f"Override not dropped: {problem}", "error")
            return
        self.notify(f"Dropped the override of {what}. ctrl+z undoes it.")
        in_force = overrides_in_force(self.session.overrides)
        self.set_status(f"Dropped the override of {what}; {in_force}")

    # --- snapshots -------------------------------------------------------------------------

    def reload_snapshots(self) -> None:
        try:
            infos = list_scenarios(self.session.root)
        except (UserError, OSError) as error:
            self._show_snapshots([], str(error))
        else:
            self._show_snapshots(infos, "")

    @work(thread=True, exclusive=True, group="snapshots", exit_on_error=False)
    def _read_snapshots(self) -> None:
        """``reload_snapshots`` off the event loop, for the screen's first visit: each
        snapshot is a TOML file parsed and checked in full, which took 110-130 ms of the
        first frame for two snapshots (``benchmarks/bench_first_visit.py``)."""
        try:
            infos = list_scenarios(self.session.root)
        except (UserError, OSError) as error:
            self.app.call_from_thread(self._show_snapshots, [], str(error))
        else:
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._show_snapshots, infos, "")

    def _show_snapshots(self, infos: list[ScenarioInfo], problem: str) -> None:
        if problem:
            self.set_status(problem, "error")
        self.query_one(SnapshotsPane).show_list(infos, self.marked, opened=self.opened is not None)
        self.refresh_bindings()

    def _selected_snapshot(self) -> str | None:
        return self.query_one(SnapshotsPane).selected()

    def action_write_report(self) -> None:
        if self.session.analysis is None:
            self.notify("The estimate is still being computed.")
            return
        self.app.push_screen(
            ReportScreen(self.session.root / "estimate.md", self.session.write_report),
            self._report_written,
        )

    def _report_written(self, written: Path | None) -> None:
        if written is not None:
            self.notify(f"Wrote the report to {written}")
            self.set_status(f"Wrote the report to {written}")

    @edits
    def action_save_snapshot(self) -> None:
        if self.session.estimate_context is None:
            self.notify("The estimate is still being computed.")
            return
        existing = {info.name for info in list_scenarios(self.session.root)}
        self.app.push_screen(SaveSnapshotScreen(existing), self._save)

    def _save(self, answer: tuple[str, str] | None) -> None:
        if answer is None or self.session.estimate_context is None:
            return
        name, note = answer
        try:
            path = self.session.save_snapshot(name, note)
        except (UserError, OSError) as error:
            self.set_status(f"Snapshot not saved: {error}", "error")
            return
        self.reload_snapshots()
        self.set_status(f"Saved snapshot {name!r} to {path.relative_to(self.session.root)}")

    @on(DataTable.RowSelected, "#snapshots")
    def _snapshot_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_snapshot()

    def action_open_snapshot(self) -> None:
        name = self._selected_snapshot()
        if name is None:
            return
        try:
            self.opened = load_scenario(self.session.root, name)
        except (UserError, OSError) as error:
            self.set_status(f"Cannot open {name!r}: {error}", "error")
            return
        self._show_opened()

    def _show_opened(self) -> None:
        scenario = self.opened
        if scenario is None:
            return
        context = self.session.estimate_context
        stale: tuple[str, ...] = ()
        if context is not None:
            try:
                stale = staleness(scenario, context)
            except UserError as error:
                stale = (f"cannot check against the project ({error})",)
        now = self.session.analysis.estimate if self.session.analysis else None
        self.query_one(SnapshotsPane).show_opened(scenario, now, stale)
        self.refresh_bindings()

    def action_mark_snapshot(self) -> None:
        name = self._selected_snapshot()
        if name is None:
            return
        self.marked = None if self.marked == name else name
        self.reload_snapshots()
        if self.marked:
            self.set_status(f"A = {name!r}: select another snapshot and press c")

    def action_compare_snapshots(self) -> None:
        """The marked snapshot (A) against the selected one (B), or the selected one against
        the estimate on screen now when nothing is marked."""
        name = self._selected_snapshot()
        if name is None:
            return
        root = self.session.root
        try:
            chosen = load_scenario(root, name)
            if self.marked and self.marked != name:
                marked = load_scenario(root, self.marked)
                a_name, a, a_compared = self.marked, marked.estimate(), marked.gpu_target
                b_name, b, b_compared = name, chosen.estimate(), chosen.gpu_target
            else:
                analysis = self.session.analysis
                if analysis is None:
                    return
                a_name, a, a_compared = name, chosen.estimate(), chosen.gpu_target
                b_name, b, b_compared = "now", analysis.estimate, self.session.gpu_target
        except (UserError, OSError) as error:
            self.set_status(f"Cannot compare: {error}", "error")
            return
        compared = comparison_change(compared_target(a, a_compared), compared_target(b, b_compared))
        self.app.push_screen(DiffScreen(a_name, a, b_name, b, compared))

    def action_use_snapshot(self) -> None:
        """Make the highlighted snapshot's overrides and GPU target compared the working
        scenario (opened or not: the list's cursor is what the person sees; the opened one when
        the list has none)."""
        name = self._selected_snapshot()
        scenario = self.opened
        if name is not None and (scenario is None or scenario.name != name):
            try:
                scenario = load_scenario(self.session.root, name)
            except (UserError, OSError) as error:
                self.set_status(f"Cannot use {name!r}: {error}", "error")
                return
        if scenario is None:
            self.notify("No snapshot saved yet: s saves one.")
            return
        problem = self.session.use_working_scenario(
            scenario.overrides, scenario.gpu_target, label=f"using {scenario.name!r}"
        )
        if problem is not None:
            self.set_status(f"Its overrides do not apply now: {problem}", "error")
            return
        compared = scenario.gpu_target or "the first GPU target"
        self.set_status(
            f"Working scenario: the {plural(len(scenario.overrides), 'override')} of "
            f"{scenario.name!r}, "
            f"against {compared} (ctrl+z undoes)"
        )
