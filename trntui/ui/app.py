"""The Textual app: one mode per area (Inventory, Runs, Prices, Scenarios).

The state lives in one ``Session`` (``ui/session.py``) that the App and every screen share:
screens change it through its checked methods (an invalid value never reaches the disk) and
follow it through its typed ``signals``. The App listens: it saves shortly after the last
keystroke (no separate "export" step), recomputes the estimate in a worker and hands the
outcome to the session, which publishes it. ctrl+z takes back the session's most recent
change, whichever screen made it.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.filter import LineFilter
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from trntui.core.errors import UserError
from trntui.core.text import printable
from trntui.loading import resume_collector
from trntui.store.project import Project
from trntui.ui.driver import (
    keep_pastes_whole,
    read_escape_then_key_as_alt,
    read_escape_then_sign,
    tolerate_bytes_that_are_not_utf8,
)
from trntui.ui.key_hold import KeyHold, ReleaseKeys, Settled, action_name
from trntui.ui.keys import (
    AppCommandsProvider,
    ScreenCommandsProvider,
    app_bindings,
    load_user_keymap,
)
from trntui.ui.screens.base import Status
from trntui.ui.screens.confirm import ConfirmScreen
from trntui.ui.session import (
    RELOAD,
    Change,
    Computed,
    Session,
    override_change,
    overrides_in_force,
)
from trntui.ui.text import TerminalSafe

if TYPE_CHECKING:
    from trntui.core.analysis import Analysis

SAVE_DELAY_S = 0.4
_FIRST_SCREEN = "first screen"
"""What the keys typed while the app starts wait for (``on_mount``, ``on_ready``)."""
_TERMINAL_SAFE = TerminalSafe()

MODES = {
    "inventory": ("trntui.ui.screens.inventory", "InventoryScreen"),
    "runs": ("trntui.ui.screens.runs", "RunsScreen"),
    "prices": ("trntui.ui.screens.prices", "PricesScreen"),
    "scenarios": ("trntui.ui.screens.scenarios", "ScenariosScreen"),
}
"""Each area's screen by module and class: a module is imported when its mode is first shown
(not at start-up: the first frame waits for nothing it does not show)."""


def _after_escape(key: str) -> str | None:
    """The key typed after esc when ``key`` is how the two arrived together: ``alt+a`` is
    ``a``, ``alt+shift+a`` is ``A``, ``alt+2`` is ``2``; None for any other key."""
    rest = key.removeprefix("alt+")
    if rest == key:
        return None
    if rest.startswith("shift+") and len(rest) == 7 and rest[-1].isalpha():
        return rest[-1].upper()
    return rest if len(rest) == 1 and rest.isalnum() else None


def _area_screen(app: TrnTuiApp, area: str) -> Screen:
    """A new screen for ``area`` (a key of ``MODES``), its module imported now."""
    module, name = MODES[area]
    screen: Screen = getattr(importlib.import_module(module), name)(app.session)
    # Textual creates a screen marked as styled under no theme (-1), so a mode's first visit
    # reparses every stylesheet source and restyles the whole app before it draws
    # (``App.refresh_css``: 0.28 s of a profiled Scenarios visit, 455 ms -> 201 ms without
    # it, ``benchmarks/bench_first_visit.py``), and so did the first return to the first
    # area. A new screen's widgets are styled with the stylesheet as it is now when they
    # mount, so it is styled under the app's current CSS generation: say so. Textual 8's
    # private counter; the snapshot tests hold the screens' looks.
    screen._css_update_count = app._css_update_count
    return screen


class TrnTuiApp(App[None]):
    TITLE = "trntui"
    CSS_PATH = "trntui.tcss"
    DEFAULT_MODE = "inventory"
    BINDINGS: ClassVar[list[BindingType]] = list(app_bindings())  # a list of the base's type
    COMMANDS: ClassVar = App.COMMANDS | {AppCommandsProvider, ScreenCommandsProvider}
    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset(
        {"undo", "help", "quit", "command_palette", "switch_mode"}
    )
    """Actions that open a dialog or show another area (built at its first visit): keys typed
    right after wait for it (``ui/key_hold.py``)."""
    save_delay_s: float = SAVE_DELAY_S
    """Seconds from the last edit to the save (tests set it per app: no waiting on a clock)."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then ``TerminalSafe``: no text from a project, a log or a paste
        reaches the terminal as a control sequence, whichever widget shows it."""
        return [*super().get_line_filters(), _TERMINAL_SAFE]

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, made to survive a byte that is not UTF-8, to
        read esc then a digit, sent at once, as alt+digit, and esc then a sign as both, and
        to keep a paste that holds an escape sequence whole (``ui/driver.py``)."""
        read_escape_then_key_as_alt()
        read_escape_then_sign()
        keep_pastes_whole()
        return tolerate_bytes_that_are_not_utf8(super().get_driver_class())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own palette entries, less its Quit: ours (ctrl+q) asks about unsaved
        work first and is listed with the app's commands."""
        for command in super().get_system_commands(screen):
            if command.title != "Quit":
                yield command

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.session = Session(project)
        for area in MODES:
            if area != self.DEFAULT_MODE:  # that one is added once it is shown (on_mount)
                self.add_mode(area, partial(_area_screen, self, area))
        self.session.listen(self._session_changed)
        self._save_timer: Timer | None = None
        self._generation = 0
        """Which recompute is the newest (see ``_recompute``)."""
        self._areas_loading = False
        """Whether the other areas' modules are being (or were) loaded (``_load_areas``)."""
        self._key_hold = KeyHold()
        """Keys typed while a key's work moves the focus wait for it (``ui/key_hold.py``)."""
        self._first_screen_ready = False
        """Whether Textual has said the first screen is laid out (``on_ready``)."""
        self.keymap: dict[str, str] = {}
        """The ``keymap.toml`` remappings in force (binding id -> keys): Help and the palette
        show these keys."""

    @property
    def project(self) -> Project:
        return self.session.project

    @property
    def status(self) -> tuple[str, str]:
        """(message, level) on every screen's status line (``SessionSignals.status``)."""
        return self.session.signals.status.value

    @status.setter
    def status(self, status: tuple[str, str]) -> None:
        self.session.signals.status.set(status)

    @property
    def analysis(self) -> Analysis | None:
        """The session's last valid estimate (the session owns it; screens read it there)."""
        return self.session.analysis

    @property
    def estimate_problem(self) -> str:
        """Why the session's last recompute failed ('' when it succeeded)."""
        return self.session.estimate_problem

    async def on_event(self, event: events.Event) -> None:
        """Textual's dispatch, except for two ways keys arrive that it reads otherwise:

        - A key typed while an earlier key's work is still moving the focus waits for it
          (``ui/key_hold.py``).
        - An alt+key that nothing is bound to is esc then the key: typed quickly, or sent at
          once by tmux or SSH, the two arrive as one alt+key (``ui/driver.py``), and the key
          went to the focused field as if esc had not been pressed. trntui binds Alt only for
          esc then a screen's digit."""
        if not isinstance(event, events.Key) or event.is_forwarded:
            await super().on_event(event)
            return
        if self._key_hold.takes(event):
            return
        key = _after_escape(event.key)
        if key is not None and event.key not in self.screen.active_bindings:
            await self.action_escape_then(key)
            return
        focused = self.focused
        holding = self._key_hold.holds_after(event, focused) or self._priority_holds(event.key)
        await super().on_event(event)
        origin = focused or self.screen
        if holding:
            origin.post_message(self._key_hold.start(origin))

    def _priority_holds(self, key: str) -> bool:
        """Whether ``key`` runs one of the App's priority bindings (f1, ctrl+q) that open a
        dialog. Those act over a dialog too, where the screen's bindings leave the App out:
        ctrl+q then y typed at once in a form typed the y into the field."""
        for binding in self.BINDINGS:
            if not isinstance(binding, Binding) or not binding.priority:
                continue
            keys = self.keymap.get(binding.id or "", binding.key)
            if key in (part.strip() for part in keys.split(",")) and (
                action_name(binding.action) in self.HOLDS_KEYS_AFTER
            ):
                return True
        return False

    def on_settled(self, marker: Settled) -> None:
        self._key_hold.arrived(marker)

    def exit(
        self, result: None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None:
        """Exit; keys still held wait for nothing any more (a marker may never come back from
        a closing app), so the hold ends with it."""
        self._key_hold.released(self._key_hold.number)
        super().exit(result, return_code, message)

    async def on_release_keys(self, message: ReleaseKeys) -> None:
        """Replay the held keys here, in order, ahead of any key read meanwhile (a replayed
        key that holds again takes the ones after it into its own hold)."""
        for event in self._key_hold.released(message.hold):
            await self.on_event(event)

    @property
    def key_hold(self) -> KeyHold:
        """Keys typed while a key's work moves the focus (``ui/key_hold.py``)."""
        return self._key_hold

    @property
    def keys_held(self) -> bool:
        """Whether typed keys wait for an earlier key's work (``ui/key_hold.py``)."""
        return self._key_hold.held is not None

    def get_default_screen(self) -> Screen:
        """The first area's screen, shown as the app's default screen rather than through a
        mode: Textual lays out a mode's first screen inside its start-up batch, drops that
        frame, and the first frame waits for a later layout (0.34 s -> 0.29 s to the first
        frame, ``benchmarks/bench_first_frame.py``)."""
        return _area_screen(self, self.DEFAULT_MODE)

    async def on_mount(self) -> None:
        # The first area's screen stack exists now (``get_default_screen``): as a mode it is
        # that stack's, so switch_mode returns to it like to any other area.
        self.add_mode(self.DEFAULT_MODE, partial(_area_screen, self, self.DEFAULT_MODE))
        # That screen is composed and focused after this, in its own task: keys typed while the
        # app starts wait for it (Textual's ``Ready``, ``on_ready``) instead of reaching no widget.
        if not self._first_screen_ready:
            self._key_hold.hold_until(self, _FIRST_SCREEN)
        self.sub_title = self._sub_title()
        keymap, warning = load_user_keymap()
        if keymap:
            self.keymap = keymap
            self.set_keymap(keymap)
        if warning:
            self.notify(warning, severity="warning")
        if self.project.read_only:
            self.status = (self.session.read_only_message, "warning")
        else:
            self.status = (f"Editing {self.session.short_path}", "")

    def on_ready(self) -> None:
        """The first screen is laid out, with its focus: the keys typed meanwhile go to it. The
        first estimate starts now, not at mount: its worker's import of Polars would take the
        GIL from the first screen's layout."""
        self._first_screen_ready = True
        resume_collector()  # paused by the command line while this screen was built
        self._key_hold.done(self, _FIRST_SCREEN)
        self._recompute()  # the bar says "computing" until it is done

    @work(thread=True, exclusive=True, group="preload", exit_on_error=False)
    def _load_areas(self) -> None:
        """Import the other areas' modules (and the dialogs they import) while the user reads
        the first screen, so a first visit builds its screen instead of loading Python first
        (the Runs area's modules took 2 s of a 2.4 s first visit on a busy 2-core machine;
        ``benchmarks/bench_first_visit.py``). Only imports: no screen is built and nothing is
        read, so a project the user never looks at costs nothing but memory."""
        for module, _ in MODES.values():
            if get_current_worker().is_cancelled:
                return
            importlib.import_module(module)

    def _sub_title(self) -> str:
        return self.session.title

    def on_status(self, message: Status) -> None:
        self.status = (message.text, message.level)

    # --- what a change sets off -------------------------------------------------------------

    def _session_changed(self, change: Change) -> None:
        if change in ("inventory", "inventory-replaced"):
            self.sub_title = self._sub_title()
            if self.session.dirty:
                self.status = ("Saving...", "")
                if self._save_timer is not None:
                    self._save_timer.stop()
                self._save_timer = self.set_timer(self.save_delay_s, self.save_now)
        self._recompute()

    def _recompute(self) -> None:
        """Recompute for the session as it is now. Only the newest recompute's outcome is
        shown: an older one that finishes later (or fails later) is ignored."""
        self._generation += 1
        self._compute(self._generation)

    @work(thread=True, exclusive=True, group="estimate", exit_on_error=False)
    def _compute(self, generation: int) -> None:
        session = self.session
        try:
            computed = session.compute(session.inventory, session.overrides, session.gpu_target)
        except (UserError, OSError) as error:
            self.call_from_thread(self._estimate_failed, str(error), generation)
            return
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._estimate_ready, computed, generation)

    def _estimate_ready(self, computed: Computed, generation: int) -> None:
        if generation != self._generation:
            return  # a newer change is being computed
        note = self.session.computed_ready(computed)
        if note:
            self.notify(f"Run {note}")
        if computed.problem is not None:
            self._estimate_failed(computed.problem, generation)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A bug in a recompute must not leave the bar silently old: say so. The first
        recompute's end (the bar shows its outcome) starts loading the other areas."""
        if event.worker.group != "estimate" or not event.worker.is_finished:
            return
        if event.state == WorkerState.ERROR:
            self._estimate_failed(f"internal error ({event.worker.error!r})", self._generation)
        if not self._areas_loading:
            self._areas_loading = True
            self.call_after_refresh(self._load_areas)

    def _estimate_failed(self, message: str, generation: int) -> None:
        if generation != self._generation:
            return
        self.session.estimate_failed(message)
        self.status = (f"Estimate not updated (last valid one shown): {message}", "error")

    def save_now(self) -> bool:
        """Write pending edits; report the outcome on the status line."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None
        if not self.session.dirty:
            return True
        try:
            self.session.save()
        except (UserError, OSError) as error:
            self.status = (f"Not saved: {error}", "error")
            self.notify(str(error), title="Not saved", severity="error", timeout=10)
            return False
        self.status = (f"Saved {time.strftime('%H:%M:%S')} to {self.session.short_path}", "")
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

    # --- actions ---------------------------------------------------------------------------

    def action_save(self) -> None:
        self.session.keep_typing()
        self.save_now()

    def action_undo(self) -> None:
        history = self.session.history
        if history and history[-1].kind == "inventory" and history[-1].label == RELOAD:
            # The step puts this session's inventory back over the file as reloaded: what was
            # changed outside the session would be gone, so the person decides.
            question = (
                f"Undo the reload? The inventory from before it goes back into "
                f"{self.session.short_path}, over the file as it was reloaded: the changes "
                "made to it outside this session are lost (no other copy is kept)."
            )
            self.push_screen(ConfirmScreen(question), lambda yes: self._undo() if yes else None)
            return
        self._undo()

    def _undo(self) -> None:
        in_force = self.session.overrides
        step, problem = self.session.undo()
        if problem is not None:
            self.status = (f"Cannot undo: {problem}", "error")
        elif step is None:
            self.notify("Nothing to undo.")
        elif step.kind == "kept":
            # A barrier: say that the change stays and how to reverse it; what the next
            # ctrl+z takes back is named, so that key press is a choice.
            history = self.session.history
            then = ""
            if history and history[-1].kind == "kept":
                then = f"; before it: {history[-1].label}, which ctrl+z keeps too"
            elif history:
                then = f"; ctrl+z again undoes {history[-1].label}"
            text = f"ctrl+z does not undo {step.label}: {step.before}"
            self.status = (text, "warning")
            self.notify(text + then, severity="warning")
        else:
            # Say what was taken back: the change itself, not the state it leaves.
            what = step.label
            if step.kind == "overrides":
                what = override_change(step.before, in_force) or what  # type: ignore[arg-type]
                what += f" (now {overrides_in_force(self.session.overrides)})"
            compared = self.session.gpu_target or "the first GPU target"
            if step.kind == "working":
                in_force_now = overrides_in_force(self.session.overrides)
                what += f" (now {in_force_now}; Trainium3 compared with {compared})"
            self.notify(f"Undid: {what}")
            if step.kind == "comparison":
                what += f" (now {compared})"
            if step.kind in ("overrides", "comparison", "working", "quotes", "runs"):
                self.status = (f"Undid: {what}", "")

    def action_reload(self) -> None:
        try:
            became_writable = self.session.reload()
        except UserError as error:
            self.status = (f"Reload failed: {error}", "error")
            return
        self.sub_title = self._sub_title()
        if became_writable:  # the forms followed the reload: they are editable now
            self.status = (f"Reloaded {self.session.short_path}; editing now (it was free)", "")
        elif self.project.read_only:
            self.status = (f"Reloaded; still {self.session.read_only_message.lower()}", "warning")
        else:
            self.status = (f"Reloaded {self.session.short_path}", "")

    def action_help(self) -> None:
        from trntui.ui.screens.help import HelpScreen  # Markdown: loaded when first asked for

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)  # f1 toggles Help
        else:
            self.push_screen(HelpScreen(self.screen))

    async def action_escape_then(self, key: str) -> None:
        """Esc then ``key`` arrived as one alt+key (typed quickly, or batched over SSH): do
        what esc does here (leave the field, close the dialog), then press ``key``.

        Esc runs its binding now, and ``key`` waits in a hold with the keys typed after it
        until the focus change esc causes is done (``ui/key_hold.py``): it reaches the screen
        esc led to, never the field esc left, and the keys after it follow it in order."""
        escape = self.screen.active_bindings.get("escape")
        if escape is not None and escape.enabled:
            await self.run_action(escape.binding.action, escape.node)
        screen = self.screen
        screen.post_message(self._key_hold.start(screen, [events.Key(key, key)]))

    async def action_quit(self) -> None:
        """Quit, asking first about what would be lost; once the focused field has handled
        the keys typed before ctrl+q (a priority key: it arrives ahead of them)."""
        focused = self.focused
        if focused is None:
            self.call_later(self._quit)
        else:
            focused.call_later(self._quit)

    async def _quit(self) -> None:
        if isinstance(self.screen, ConfirmScreen):
            return
        self.session.keep_typing()
        problems = list(self.session.invalid.items())
        saved = self.save_now()
        if saved and not problems:
            self.exit()
            return
        lines = []
        if not saved:
            lines.append(f"The last edits could not be saved: {self.status[0]}")
        if problems:
            lines.append("These fields hold text that is not valid and was not saved:")
            lines += [f"  {label}: {message}" for label, message in problems[:5]]
        lines.append("Quit anyway?")
        self.push_screen(ConfirmScreen("\n".join(lines)), lambda yes: self.exit() if yes else None)


def run_app(root: Path, *, read_only: bool = False) -> int:
    """Open the project and run the app; the exit code is non-zero if the app crashed."""
    project = Project.open(root, allow_read_only=True, read_only=read_only)
    try:
        app = TrnTuiApp(project)
        app.run()
        return app.return_code or 0
    finally:
        project.close()
