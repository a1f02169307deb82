"""Every app-wide command declared once: its key, footer label, help text and palette entry.

The bindings, the footer, the help screen and the command palette are all generated from
``APP_COMMANDS``, so a key shown in one place is the key that works everywhere. Each binding has
a stable ``id`` that a user can remap in ``keymap.toml`` (see ``load_user_keymap``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from platformdirs import user_config_dir
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


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
        "Price quotes from the AWS Price List and manual quotes, with source and date",
    ),
    AppCommand(
        "screen.scenarios",
        "4",
        "app.switch_mode('scenarios')",
        "Scenarios",
        "Estimate, sensitivity, saved scenario snapshots, Trainium vs GPU",
    ),
    AppCommand("app.help", "f1", "app.help", "Help", "Show keys and how the screens fit together"),
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
        show=False,  # 80 columns: the screen keys need the room; help and the palette list it
    ),
)


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
        )
        for c in APP_COMMANDS
    ]
    bindings.append(Binding("question_mark", "help", "Help", show=False, id="app.help_alt"))
    return bindings


class AppCommandsProvider(Provider):
    """Offers every entry of ``APP_COMMANDS`` in the command palette (ctrl+p)."""

    async def discover(self) -> Hits:
        for command in APP_COMMANDS:
            yield DiscoveryHit(
                command.title,
                partial(self.app.run_action, command.action),
                help=f"{command.help}  [{command.key}]",
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in APP_COMMANDS:
            score = matcher.match(f"{command.title} {command.help}")
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(command.title),
                    partial(self.app.run_action, command.action),
                    help=f"{command.help}  [{command.key}]",
                )


def declared_bindings() -> list[Binding]:
    """The bindings trntui's own screens and widgets declare (not those they inherit)."""
    import importlib
    import pkgutil

    import trntui.ui.screens
    import trntui.ui.widgets

    found: list[Binding] = []
    for package in (trntui.ui.screens, trntui.ui.widgets):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__ == module.__name__:
                    own = vars(value).get("BINDINGS", ())
                    found += [binding for binding in own if isinstance(binding, Binding)]
    return found


def binding_ids() -> set[str]:
    """Every remappable binding id: the app's commands and each screen's and widget's keys."""
    ids = {command.id for command in APP_COMMANDS}
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
