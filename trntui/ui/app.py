"""The Textual app: one mode per area (Inventory, Runs, Prices, Scenarios).

The app owns the open ``Project`` and the current ``Inventory``. Screens send edits to
``apply_inventory``, which checks the whole document (the same check a hand-edited file gets),
keeps an undo history and saves shortly after the last keystroke, so there is no separate
"export" step and an invalid value never reaches the disk.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from trntui.core.errors import UserError
from trntui.core.inventory import Inventory, InventoryInvalid
from trntui.core.text import printable
from trntui.store.project import Project
from trntui.ui.commands import (
    AppCommandsProvider,
    ScreenCommandsProvider,
    app_bindings,
    load_user_keymap,
)
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.screens.inventory import InventoryScreen

if TYPE_CHECKING:
    from trntui.core.estimate import EstimateContext, Override, TargetInputs
    from trntui.core.report import Analysis

SAVE_DELAY_S = 0.4
UNDO_COALESCE_S = 2.0
UNDO_LIMIT = 200


def _mode(module: str, name: str) -> Callable[[], Screen]:
    """A mode's screen, its module imported when the mode is first shown (not at start-up:
    the first frame waits for nothing it does not show)."""

    def make() -> Screen:
        return getattr(importlib.import_module(module), name)()

    return make


class TrnTuiApp(App[None]):
    TITLE = "trntui"
    CSS_PATH = "trntui.tcss"
    MODES: ClassVar = {
        "inventory": InventoryScreen,
        "runs": _mode("trntui.ui.screens.runs", "RunsScreen"),
        "prices": _mode("trntui.ui.screens.prices", "PricesScreen"),
        "scenarios": _mode("trntui.ui.screens.scenarios", "ScenariosScreen"),
    }
    DEFAULT_MODE = "inventory"
    BINDINGS: ClassVar = app_bindings()
    COMMANDS: ClassVar = App.COMMANDS | {AppCommandsProvider, ScreenCommandsProvider}
    save_delay_s: float = SAVE_DELAY_S
    """Seconds from the last edit to the save (tests set it per app: no waiting on a clock)."""

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own palette entries, less its Quit: ours (ctrl+q) asks about unsaved
        work first and is listed with the app's commands."""
        for command in super().get_system_commands(screen):
            if command.title != "Quit":
                yield command

    status: reactive[tuple[str, str]] = reactive(("", ""))
    """(message, level) shown on every screen's status line; level is '', 'warning' or 'error'."""

    estimate_problem: reactive[str] = reactive("")
    """Why the last recompute failed ('' when it succeeded); the estimate bar keeps showing it
    next to the last valid figures until a recompute succeeds."""

    analysis: var[Analysis | None] = var(None, always_update=True)
    """The last valid estimate, comparison, sensitivity and resampling; ``None`` until the first
    one is computed. A failed recompute never replaces it."""

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        self.inventory: Inventory = project.inventory
        self._undo: list[tuple[Inventory, str, float]] = []
        self._save_timer: Timer | None = None
        self._dirty = False
        self.overrides: tuple[Override, ...] = ()
        """Scenario parameters in force: the estimate everywhere is computed with them."""
        self.kept_overrides: tuple[Override, ...] = ()
        """The overrides as last saved in (or taken from) a snapshot: quitting asks only when
        ``overrides`` differ from them."""
        self.estimate_context: EstimateContext | None = None
        self._prepared: list[TargetInputs] | None = None
        self.keymap: dict[str, str] = {}
        """The ``keymap.toml`` remappings in force (binding id -> keys): Help and the palette
        show these keys."""

    async def on_mount(self) -> None:
        self.sub_title = self._sub_title()
        keymap, warning = load_user_keymap()
        if keymap:
            self.keymap = keymap
            self.set_keymap(keymap)
        if warning:
            self.notify(warning, severity="warning")
        if self.project.read_only:
            self.status = (f"Read-only: {self.project.read_only_reason}", "warning")
        else:
            self.status = (f"Editing {self._short_path()}", "")
        self.estimate_inputs_changed()  # the first frame shows now; the bar says "computing"

    def _short_path(self) -> str:
        """The project file as folder/name: enough to recognise, short enough for 80 columns."""
        return f"{self.project.root.resolve().name}/{self.project.path.name}"

    def _sub_title(self) -> str:
        name = self.inventory.project.name
        suffix = " (example data)" if self.inventory.project.example else ""
        return f"{name}{suffix}" + (" [read-only]" if self.project.read_only else "")

    # --- inventory edits -------------------------------------------------------------------

    def apply_inventory(self, inventory: Inventory, *, label: str) -> bool:
        """Make ``inventory`` current and schedule its save; refuse an invalid document."""
        if self.project.read_only:
            self.notify_read_only()
            return False
        try:
            Inventory.from_dict(inventory.to_dict())
        except InventoryInvalid as invalid:
            self.status = (f"Not saved: {invalid.problems[0].message}", "error")
            return False
        now = time.monotonic()
        last = self._undo[-1] if self._undo else None
        if not (last and last[1] == label and now - last[2] < UNDO_COALESCE_S):
            self._undo.append((self.inventory, label, now))
            del self._undo[:-UNDO_LIMIT]
        self._set_inventory(inventory)
        return True

    def _set_inventory(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self._dirty = True
        self.sub_title = self._sub_title()
        self.status = ("Saving...", "")
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(self.save_delay_s, self.save_now)
        self._refresh_inventory_screen(inventory, reload_forms=False)
        self.estimate_inputs_changed()

    # --- the live estimate -----------------------------------------------------------------

    def estimate_inputs_changed(self) -> None:
        """Recompute the estimate after an inventory edit, a quote change or a run import.

        Run facts are derived once per import and cached by ``load_context`` (keyed on the runs
        table, the quality criterion and the planned steps), so after an ordinary edit the
        worker only re-reads the quote book and re-runs the Polars formula.
        """
        self._recompute(self.inventory, self.overrides)

    def _compute(
        self, inventory: Inventory, overrides: tuple[Override, ...]
    ) -> tuple[EstimateContext, list[TargetInputs], Analysis]:
        from trntui.core.estimate import prepare
        from trntui.core.report import analyze
        from trntui.store.scenarios import load_context

        context = load_context(self.project.root, inventory)
        prepared = prepare(context)
        return context, prepared, analyze(context, overrides, prepared=prepared)

    def check_overrides(self, overrides: Sequence[Override]) -> str | None:
        """Why ``overrides`` cannot apply to the current inputs (``None`` when they can)."""
        if self._prepared is None:
            return None
        from trntui.core.estimate import apply_overrides

        try:
            apply_overrides(self._prepared, overrides)
        except UserError as error:
            return str(error)
        return None

    def set_overrides(self, overrides: Sequence[Override]) -> str | None:
        """Make ``overrides`` the scenario parameters; refuse (with the reason) invalid ones."""
        problem = self.check_overrides(overrides)
        if problem is None:
            self.overrides = tuple(overrides)
            self.estimate_inputs_changed()
        return problem

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def _recompute(self, inventory: Inventory, overrides: tuple[Override, ...]) -> None:
        try:
            computed = self._compute(inventory, overrides)
        except (UserError, OSError) as error:
            self.call_from_thread(self._estimate_failed, str(error))
            return
        if get_current_worker().is_cancelled:
            return  # a newer edit started its own recompute
        self.call_from_thread(self._estimate_ready, *computed)

    def _estimate_ready(
        self, context: EstimateContext, prepared: list[TargetInputs], analysis: Analysis
    ) -> None:
        self.estimate_context = context
        self._prepared = prepared
        self.estimate_problem = ""
        self.analysis = analysis

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A bug in a recompute must not leave the bar silently old: say so."""
        if event.worker.group == "estimate" and event.state == WorkerState.ERROR:
            self._estimate_failed(f"internal error ({event.worker.error!r})")

    def _estimate_failed(self, message: str) -> None:
        self.estimate_problem = message
        self.status = (f"Estimate not updated (last valid one shown): {message}", "error")

    def inventory_screen(self) -> InventoryScreen | None:
        """The mounted inventory screen, whichever mode is current."""
        try:
            stack = self.get_screen_stack("inventory")
        except KeyError:
            return None
        for screen in stack:
            if isinstance(screen, InventoryScreen) and screen.is_mounted:
                return screen
        return None

    def _refresh_inventory_screen(self, inventory: Inventory, *, reload_forms: bool) -> None:
        screen = self.inventory_screen()
        if screen is None:
            return
        if reload_forms:
            screen.refresh_from(inventory)
        else:
            screen.refresh_lists(inventory)

    def save_now(self) -> bool:
        """Write pending edits; report the outcome on the status line."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        if not self._dirty:
            return True
        try:
            self.project.save_inventory(self.inventory)
        except (UserError, OSError) as error:
            self.status = (f"Not saved: {error}", "error")
            self.notify(str(error), title="Not saved", severity="error", timeout=10)
            return False
        self._dirty = False
        self.status = (f"Saved {time.strftime('%H:%M:%S')} to {self._short_path()}", "")
        return True

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Notifications quote names and errors from files: shown literally and printable
        (``core.text.printable``), never as markup."""
        super().notify(
            printable(message),
            title=printable(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def notify_read_only(self) -> None:
        self.notify(f"Read-only: {self.project.read_only_reason}", severity="warning")

    # --- actions ---------------------------------------------------------------------------

    def _commit_pending(self) -> None:
        screen = self.inventory_screen()
        if screen is not None and not self.project.read_only:
            screen.commit_pending()

    def action_save(self) -> None:
        self._commit_pending()
        self.save_now()

    def action_undo(self) -> None:
        screen_undo = getattr(self.screen, "undo", None)  # a screen's own changes come first
        if callable(screen_undo) and screen_undo():
            return
        if not self._undo:
            self.notify("Nothing to undo.")
            return
        previous, label, _ = self._undo.pop()
        self._set_inventory(previous)
        self._refresh_inventory_screen(previous, reload_forms=True)
        self.notify(f"Undone: {label}")

    def action_reload(self) -> None:
        try:
            before = self.inventory
            inventory = self.project.reload()
        except UserError as error:
            self.status = (f"Reload failed: {error}", "error")
            return
        if inventory != before:
            self._undo.append((before, "reload", time.monotonic()))
        self.inventory = inventory
        self._dirty = False
        self.sub_title = self._sub_title()
        self._refresh_inventory_screen(inventory, reload_forms=True)
        self.estimate_inputs_changed()
        self.status = (f"Reloaded {self._short_path()}", "")

    def action_help(self) -> None:
        from trntui.ui.screens.help import HelpScreen  # Markdown: loaded when first asked for

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)  # f1 toggles Help
        else:
            self.push_screen(HelpScreen(self.screen))

    async def action_escape_then(self, key: str) -> None:
        """Esc then ``key`` arrived as one alt+key (typed quickly, or batched over SSH): do
        what esc does here (leave the field, close the dialog), then press ``key``.

        Esc runs its binding now and ``key`` is posted behind the focus change that causes, so
        the key reaches the screen esc led to, never the field esc left."""
        escape = self.screen.active_bindings.get("escape")
        if escape is not None and escape.enabled:
            await self.run_action(escape.binding.action, escape.node)
        self.call_later(self.post_message, events.Key(key, key))

    async def action_quit(self) -> None:
        if isinstance(self.screen, ConfirmScreen):
            return
        self._commit_pending()
        problems = self.invalid_entries()
        saved = self.save_now()
        unkept = bool(self.overrides) and self.overrides != self.kept_overrides
        if saved and not problems and not unkept:
            self.exit()
            return
        lines = []
        if not saved:
            lines.append(f"The last edits could not be saved: {self.status[0]}")
        if problems:
            lines.append("These fields hold text that is not valid and was not saved:")
            lines += [f"  {label}: {message}" for label, message in problems[:5]]
        if unkept:
            count = len(self.overrides)
            lines.append(
                f"{count} scenario override(s) are in force but live only in this session: "
                "save a snapshot (Scenarios, s) to keep them."
            )
        lines.append("Quit anyway?")
        self.push_screen(ConfirmScreen("\n".join(lines)), lambda yes: self.exit() if yes else None)

    def invalid_entries(self) -> list[tuple[str, str]]:
        screen = self.inventory_screen()
        if screen is None:
            return []
        found = []
        for form in screen.forms():
            found += [(f"{form.section_cls.TITLE} > {lbl}", m) for lbl, m in form.invalid_fields()]
        return found


def run_app(root: Path, *, read_only: bool = False) -> int:
    """Open the project and run the app; the exit code is non-zero if the app crashed."""
    project = Project.open(root, allow_read_only=True, read_only=read_only)
    try:
        app = TrnTuiApp(project)
        app.run()
        return app.return_code or 0
    finally:
        project.close()
