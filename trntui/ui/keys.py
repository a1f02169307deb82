"""The app's commands, each declared once: its key, footer label, help text and palette entry
(the CLI's subcommands are ``trntui/commands/``, a different thing).

App-wide commands live in ``APP_COMMANDS``; each screen declares its own in its ``BINDINGS``
(with an ``id`` and a ``tooltip``), and ``PLACES`` says which screen that is in the user's words
and how to get there. The bindings, the footer, the help screen and the command palette are all
generated from these, so a key shown in one place is the key that works everywhere. Each binding
has a stable ``id`` that a user can remap in ``keymap.toml`` (see ``load_user_keymap``), and
every place that shows a key shows the key as remapped (``current_key``).
"""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_config_dir
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode
    from textual.fuzzy import Matcher


@dataclass(frozen=True)
class AppCommand:
    id: str
    key: str
    action: str
    title: str
    help: str
    show: bool = True
    priority: bool = False
    key_display: str | None = None


APP_COMMANDS: tuple[AppCommand, ...] = (
    AppCommand(
        "screen.inventory",
        "1",
        "app.switch_mode('inventory')",
        "Inventory",
        "Workload inventory: model, stack, distribution, goal, risks, targets",
    ),
    AppCommand(
        "screen.runs",
        "2",
        "app.switch_mode('runs')",
        "Runs",
        "Imported trial runs and the facts measured from their logs",
    ),
    AppCommand(
        "screen.prices",
        "3",
        "app.switch_mode('prices')",
        "Prices",
        "Price quotes from the AWS Price List or entered by hand, with source and date",
    ),
    AppCommand(
        "screen.scenarios",
        "4",
        "app.switch_mode('scenarios')",
        "Scenarios",
        "Estimate, sensitivity, saved scenario snapshots, Trainium vs GPU",
    ),
    AppCommand(
        "app.help",
        "f1",
        "app.help",
        "Help",
        "The keys of this screen (as remapped), then the keys that work everywhere",
        priority=True,  # also on a dialog or the run detail (a modal hides app keys)
    ),
    AppCommand(
        "app.save",
        "ctrl+s",
        "app.save",
        "Save",
        "Write pending edits now (edits are also saved automatically)",
        show=False,
    ),
    AppCommand(
        "app.undo",
        "ctrl+z",
        "app.undo",
        "Undo",
        "Undo the last change: an inventory edit, a price or an override",
        key_display="^z",
    ),
    AppCommand(
        "app.reload",
        "ctrl+r",
        "app.reload",
        "Reload",
        "Read trntui.toml again from disk (after editing it by hand)",
        show=False,
    ),
    AppCommand(
        "app.quit",
        "ctrl+q",
        "app.quit",
        "Quit",
        "Save and leave trntui",
        priority=True,
        key_display="^q",
    ),
)


SCREENS_GROUP = Binding.Group("Screens", compact=True)
"""1-4 share one footer entry (``1234 Screens``): at 80 columns the footer keeps room for each
screen's own keys and for ``^q Quit``; Help and the palette name each screen's digit."""


def app_bindings() -> list[Binding]:
    bindings = [
        Binding(
            c.key,
            c.action.removeprefix("app."),
            c.title,
            show=c.show,
            priority=c.priority,
            tooltip=c.help,
            id=c.id,
            key_display=c.key_display,
            group=SCREENS_GROUP if c.id.startswith("screen.") else None,
        )
        for c in APP_COMMANDS
    ]
    bindings.append(Binding("question_mark", "help", "Help", show=False, id="app.help_alt"))
    # Esc then a digit typed quickly (or batched over SSH) reaches the app as alt+digit: do
    # what esc then the digit does. Priority: a focused field must not swallow it.
    bindings += [
        Binding(
            f"alt+{digit}",
            f"escape_then('{digit}')",
            "Esc, then the digit",
            show=False,
            priority=True,
            id=f"app.escape_{digit}",
        )
        for digit in "1234"
    ]
    # Textual moves focus on tab only after the key has bubbled up from the field, so keys
    # typed right after it (quickly, or batched over SSH: "name<tab>note<enter>") would still
    # land in the field left. As priority bindings the focus moves before the next key.
    bindings += [
        Binding("tab", "focus_next", "Next field", show=False, priority=True, id="app.next"),
        Binding(
            "shift+tab",
            "focus_previous",
            "Previous field",
            show=False,
            priority=True,
            id="app.previous",
        ),
    ]
    return bindings


def current_key(app: App[object], binding: Binding) -> str:
    """The key(s) that trigger ``binding`` now (after ``keymap.toml``), as the footer shows keys."""
    remapped = getattr(app, "keymap", {}).get(binding.id or "")
    if not remapped:
        return app.get_key_display(binding)
    keys = [key.strip() for key in remapped.split(",") if key.strip()]
    return "/".join(app.get_key_display(Binding(key, binding.action)) for key in keys)


def _app_command_help(app: App[object], command: AppCommand) -> str:
    key = current_key(app, Binding(command.key, command.action, id=command.id))
    return f"{command.help}  · key {key}"


def _score(matcher: Matcher, title: str, help_text: str) -> float:
    """A match in a command's title ranks above one only in its help: "import" finds
    "Runs: Import" before "Runs" (whose help says "Imported trial runs")."""
    return max(matcher.match(title), matcher.match(f"{title} {help_text}") / 2)


class AppCommandsProvider(Provider):
    """Offers every entry of ``APP_COMMANDS`` in the command palette (ctrl+p)."""

    async def discover(self) -> Hits:
        for command in APP_COMMANDS:
            yield DiscoveryHit(
                command.title,
                partial(self.app.run_action, command.action),
                help=_app_command_help(self.app, command),
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in APP_COMMANDS:
            score = _score(matcher, command.title, command.help)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.title),
                    partial(self.app.run_action, command.action),
                    help=_app_command_help(self.app, command),
                )


@dataclass(frozen=True)
class Place:
    """Where a screen's or widget's bindings act, in the user's words, and how to get there."""

    title: str
    mode: str | None = None
    """The app mode showing it; ``None`` for a dialog (its keys act only while it is open)."""
    opens: str | None = None
    """An action of the mode's screen that opens it (the run detail: the highlighted run)."""
    section: str | None = None
    """An Inventory list section (``risks``, ``targets``) whose table the bindings act on."""


PLACES: dict[str, Place] = {
    "InventoryScreen": Place("Inventory", "inventory"),
    "ItemTable": Place("Inventory lists (Risks, Targets)", "inventory"),
    "RunsScreen": Place("Runs", "runs"),
    "RunDetailScreen": Place("Run detail", "runs", opens="open_run"),
    "PricesScreen": Place("Prices", "prices"),
    "ScenariosScreen": Place("Scenarios", "scenarios"),
    "HelpScreen": Place("Help"),
    "ConfirmScreen": Place("Question"),
    "ImportRunsScreen": Place("Import dialog"),
    "MappingScreen": Place("Map columns dialog"),
    "AttachCaptureScreen": Place("Attach telemetry dialog"),
    "FetchPricesScreen": Place("Fetch prices dialog"),
    "ItemFormScreen": Place("Item form"),
    "OverrideScreen": Place("Override dialog"),
    "SaveSnapshotScreen": Place("Save snapshot dialog"),
    "ReportScreen": Place("Write report dialog"),
    "DiffScreen": Place("Snapshot comparison"),
}
"""Every class with its own ``BINDINGS`` (a test holds it): a new screen adds its place here."""

LIST_SECTION_TITLES = {"risks": "Risks", "targets": "Targets"}


@dataclass(frozen=True)
class ScreenCommand:
    """One binding of a screen or widget, as the palette and Help offer it."""

    owner: str
    place: Place
    binding: Binding

    @property
    def title(self) -> str:
        where = self.place.title
        if self.place.section is not None:
            where = f"Inventory > {LIST_SECTION_TITLES[self.place.section]}"
        return f"{where}: {self.binding.description}"

    @property
    def help(self) -> str:
        return self.binding.tooltip or self.binding.description


def screen_commands() -> list[ScreenCommand]:
    """Every screen's and widget's bindings with their place; the Inventory's list keys once
    per list (``Add`` on Risks and on Targets are two commands)."""
    found: list[ScreenCommand] = []
    for owner, binding in owned_bindings():
        place = PLACES[owner]
        if owner == "ItemTable":
            found += [
                ScreenCommand(owner, Place("Inventory", "inventory", section=name), binding)
                for name in LIST_SECTION_TITLES
            ]
        else:
            found.append(ScreenCommand(owner, place, binding))
    return found


def offered(screen: DOMNode, commands: list[ScreenCommand]) -> Iterator[ScreenCommand]:
    """The commands the palette offers from ``screen``: every screen's (they switch to it),
    a dialog's only while it is open; the alternative key of a command once."""
    shown: set[tuple[str, str, str | None]] = set()
    for command in commands:
        if command.place.mode is None and type(screen).__name__ != command.owner:
            continue
        seen = (command.owner, command.binding.action, command.place.section)
        if seen in shown:
            continue
        shown.add(seen)
        yield command


async def run_screen_command(app: App[object], screen: DOMNode, command: ScreenCommand) -> None:
    """Go where ``command`` acts (its mode, list section or the highlighted run) and run it."""
    place = command.place
    if place.mode is None:
        await app.run_action(command.binding.action, screen)
        return
    if app.current_mode != place.mode:
        await app.switch_mode(place.mode)
    target: DOMNode | None = next(
        (s for s in reversed(app.screen_stack) if type(s).__name__ == command.owner), None
    )
    if place.opens is not None and target is None:
        target = await _open_from(app, place)
        if target is None:
            return
    if place.section is not None:
        target = await _show_list_section(app, place.section)
    if target is None:
        return
    prepare = getattr(target, "prepare_action", None)
    if callable(prepare):
        prepare(command.binding.action)
    name = command.binding.action.split("(", 1)[0]
    if target.check_action(name, ()) is False:
        app.notify(f"{command.title} does not apply here now.", severity="warning")
        return
    await app.run_action(command.binding.action, target)


async def _open_from(app: App[object], place: Place) -> DOMNode | None:
    """Open a screen that its mode's screen opens in a worker (the run detail), and wait for it."""
    opener = app.screen
    await _workers_done(app, opener)  # a screen shown just now is still loading its rows
    await app.run_action(str(place.opens), opener)
    await _workers_done(app, opener)  # the worker's push_screen has run
    if app.screen is opener:
        app.notify(f"No {place.title.lower()} to open: choose one first.", severity="warning")
        return None
    return app.screen


async def _workers_done(app: App[object], node: DOMNode) -> None:
    """Wait for ``node``'s workers, and for those they started, to finish."""
    while pending := [w for w in app.workers if w.node is node and not w.is_finished]:
        await asyncio.gather(*(w.wait() for w in pending), return_exceptions=True)
        await asyncio.sleep(0)  # what the workers posted back runs (and may start more)


async def _show_list_section(app: App[object], section: str) -> DOMNode | None:
    from textual.widgets import OptionList

    from trntui.ui.screens.inventory import InventoryScreen

    screen = app.screen
    if not isinstance(screen, InventoryScreen):  # not the Inventory: nothing to act on
        return None
    nav = screen.query_one("#nav", OptionList)
    ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
    nav.highlighted = ids.index(section)
    slot = await screen.show_section(section)  # a list is built when first shown
    return slot.query_one(f"#items-{section}")


class ScreenCommandsProvider(Provider):
    """Offers every screen's own commands in the palette, with their key and their screen;
    choosing one goes to that screen and runs it."""

    def _hits(self) -> Iterator[tuple[ScreenCommand, str]]:
        for command in offered(self.screen, screen_commands()):
            key = current_key(self.app, command.binding)
            yield command, f"{command.help}  · key {key}"

    def _run(self, command: ScreenCommand) -> Callable[[], Awaitable[None]]:
        return partial(run_screen_command, self.app, self.screen, command)

    async def discover(self) -> Hits:
        for command, help_text in self._hits():
            yield DiscoveryHit(command.title, self._run(command), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command, help_text in self._hits():
            score = _score(matcher, command.title, command.help)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(command.title), self._run(command), help=help_text
                )


@cache
def owned_bindings() -> tuple[tuple[str, Binding], ...]:
    """The bindings trntui's own screens and widgets declare (not those they inherit), each
    with the name of the class declaring it. Read once: the palette asks on every keystroke."""
    import importlib
    import pkgutil

    import trntui.ui.screens
    import trntui.ui.widgets

    found: list[tuple[str, Binding]] = []
    for package in (trntui.ui.screens, trntui.ui.widgets):
        # Every module, also those of a screen split into a package (``screens/scenarios/``).
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__ == module.__name__:
                    own = vars(value).get("BINDINGS", ())
                    found += [(value.__name__, b) for b in own if isinstance(b, Binding)]
    return tuple(found)


def declared_bindings() -> list[Binding]:
    """The bindings trntui's own screens and widgets declare (not those they inherit)."""
    return [binding for _, binding in owned_bindings()]


def bindings_of(owner: str) -> list[Binding]:
    """The bindings one screen or widget class declares itself."""
    return [binding for name, binding in owned_bindings() if name == owner]


def binding_ids() -> set[str]:
    """Every remappable binding id: the app's commands and each screen's and widget's keys."""
    ids = {binding.id for binding in app_bindings() if binding.id}
    return ids | {binding.id for binding in declared_bindings() if binding.id}


def keymap_path() -> Path:
    return Path(user_config_dir("trntui")) / "keymap.toml"


def load_user_keymap(path: Path | None = None) -> tuple[dict[str, str], str | None]:
    """Read ``{binding id = "key"}`` overrides; return them and a warning if the file is bad."""
    path = path or keymap_path()
    if not path.is_file():
        return {}, None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return {}, f"{path}: ignored ({error})"
    known = binding_ids()
    keymap = {k: v for k, v in data.items() if k in known and isinstance(v, str)}
    unknown = sorted(set(data) - known)
    warning = f"{path}: unknown binding ids ignored: {', '.join(unknown)}" if unknown else None
    return keymap, warning
