"""Keys and help (issue 14): every command in the palette, Help about the screen it is opened
on (with remapped keys and binding ids), q/esc go back and quit is visible, esc+digit typed
quickly (alt+digit) still switches screens. All at 80x24."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from tests import SIZE
from tests.ui_support import (
    open_new_target_form,
    open_section,
    settle,
    type_runs_filter,
    wait_until,
)
from trntui.store.project import Project, read_inventory
from trntui.ui.app import TrnTuiApp
from trntui.ui.keys import PLACES, owned_bindings, screen_commands
from trntui.ui.screens.attach_capture import AttachCaptureScreen
from trntui.ui.screens.help import HelpScreen
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.inventory import InventoryScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.run_detail import RunDetailScreen
from trntui.ui.screens.runs import RunsScreen

pytestmark = pytest.mark.usefixtures("instant_saves")


async def choose_in_palette(pilot, query: str) -> str:
    """Open the palette, type ``query``, choose the first hit; return that hit's text."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await settle(pilot)
    assert isinstance(app.screen, CommandPalette)
    await pilot.press(*query)
    hits = app.screen.query_one(CommandList)
    await wait_until(
        pilot, lambda: hits.option_count and hits.highlighted is not None, "a palette hit"
    )
    chosen = str(hits.get_option_at_index(hits.highlighted or 0).prompt)
    await pilot.press("enter")
    await settle(pilot)
    return chosen


def help_text(app: TrnTuiApp) -> str:
    assert isinstance(app.screen, HelpScreen)
    console = Console(width=74, record=True, file=io.StringIO())
    console.print(app.screen.query_one("#help-text", Static).content)
    return console.export_text()


def test_every_class_with_bindings_has_a_place_and_every_binding_a_description() -> None:
    owners = {owner for owner, _ in owned_bindings()}
    assert owners - set(PLACES) == set()
    commands = screen_commands()
    titles = {command.title for command in commands}
    for wanted in [
        "Runs: Import",
        "Prices: Fetch",
        "Prices: Quote",
        "Prices: Rate",
        "Scenarios: Override",
        "Scenarios: Save",
        "Scenarios: Compare",
        "Run detail: Attach telemetry",
        "Run detail: Record quality",
        "Inventory > Targets: Add",
    ]:
        assert wanted in titles


def test_the_palette_ranks_the_manual_quote_first_for_its_name() -> None:
    """A user typed "manual quote" in the palette and pressed enter: that ran Prices: Pin (its
    help named "the highlighted manual quote"), pinning a quote, where the add command's help
    never said "manual". Now the add command alone scores highest of every command the
    palette offers (the screens' and the app's), as the palette ranks them (``_score``)."""
    from textual.fuzzy import Matcher

    from trntui.ui.keys import APP_COMMANDS, _score

    matcher = Matcher("manual quote")
    scores = {c.title: _score(matcher, c.title, c.help) for c in screen_commands()}
    scores |= {c.title: _score(matcher, c.title, c.help) for c in APP_COMMANDS}
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    assert ranked[0][0] == "Prices: Quote" and ranked[0][1] > ranked[1][1], ranked[:3]


async def test_the_palette_runs_a_screen_command_from_another_screen(
    sample_project: Project,
) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, InventoryScreen)
        chosen = await choose_in_palette(pilot, "import")
        assert chosen.startswith("Runs: Import")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportRunsScreen), "import dialog")
        assert app.current_mode == "runs"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_the_palette_adds_a_target_on_the_inventory_list(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        chosen = await choose_in_palette(pilot, "targets add")
        assert chosen.startswith("Inventory > Targets: Add")
        await wait_until(pilot, lambda: isinstance(app.screen, ItemFormScreen), "target form")
        assert app.current_mode == "inventory"
        assert "target" in str(app.screen.title_text).lower()


async def test_the_palette_edits_a_risk_on_a_list_not_shown_yet(sample_project: Project) -> None:
    """The Inventory's lists are built when first shown: a palette command on a list never
    shown acts once its table is there (it raised NoMatches before the table was mounted)."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        chosen = await choose_in_palette(pilot, "risks edit")
        assert chosen.startswith("Inventory > Risks: Edit")
        await wait_until(pilot, lambda: isinstance(app.screen, ItemFormScreen), "risk form")
        assert "risk" in str(app.screen.title_text).lower()


async def test_a_click_on_a_section_enters_it(sample_project: Project) -> None:
    """A click highlights and selects at once: the section is built, shown and focused."""
    from textual.widgets import DataTable, Input, OptionList

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        nav = app.screen.query_one("#nav", OptionList)
        ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
        for section, kind in (("targets", DataTable), ("model", Input)):
            await pilot.click("#nav", offset=(3, ids.index(section) + 1))
            await settle(pilot)
            assert app.screen.query_one("#sections").current == f"section-{section}"
            assert isinstance(app.focused, kind), (section, app.focused)
            assert app.focused in app.screen.query_one(f"#section-{section}").query(kind)


async def test_the_palette_attaches_telemetry_to_the_highlighted_run_from_another_screen(
    trn_project: tuple[Path, str],
) -> None:
    root, _ = trn_project
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            chosen = await choose_in_palette(pilot, "attach telemetry")
            assert chosen.startswith("Run detail: Attach telemetry")
            await wait_until(
                pilot, lambda: isinstance(app.screen, AttachCaptureScreen), "attach dialog"
            )
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, RunDetailScreen)


async def test_help_is_about_the_screen_it_is_opened_on_with_remapped_keys_and_ids(
    sample_project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keymap = tmp_path / "keymap.toml"
    keymap.write_text('"runs.import" = "f5"\n"screen.prices" = "f3"\n', encoding="utf-8")
    monkeypatch.setattr("trntui.ui.keys.keymap_path", lambda: keymap)
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        text = help_text(app)
        lines = text.splitlines()
        assert lines[1].strip() == "Keys on Runs", "the screen's own keys come first"
        import_line = next(line for line in lines if "runs.import" in line)
        assert import_line.split()[0] == "f5", "the key as remapped, next to its id"
        prices_line = next(line for line in lines if "screen.prices" in line)
        assert prices_line.split()[0] == "f3"
        assert "Keys everywhere" in text and "app.quit" in text
        assert str(keymap) in "".join(line.strip() for line in lines), "where keymap.toml is"
        await pilot.press("q")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("f5")
        await settle(pilot)
        assert isinstance(app.screen, ImportRunsScreen), "the key Help showed is the one that works"


async def test_q_and_esc_go_back_and_r_records_quality_in_the_run_detail(
    trn_project: tuple[Path, str],
) -> None:
    root, _ = trn_project
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await settle(pilot)
            for back in ("q", "escape"):
                await pilot.press("enter")
                await settle(pilot)
                assert isinstance(app.screen, RunDetailScreen)
                await pilot.press("f1")
                await settle(pilot)
                assert "Keys on Run detail" in help_text(app)
                await pilot.press(back)
                await settle(pilot)
                assert isinstance(app.screen, RunDetailScreen), f"{back} closes Help only"
                await pilot.press(back)
                await settle(pilot)
                assert isinstance(app.screen, RunsScreen), f"{back} closes the run detail"
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press("r")
            await settle(pilot)
            assert isinstance(app.screen, ItemFormScreen)


async def test_quit_is_visible_in_the_footer_of_every_screen(sample_project: Project) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        for key in "1234":
            await pilot.press(key)
            await settle(pilot)

            def footer_key(name: str) -> FooterKey | None:
                footer = app.screen.query_one(Footer)
                return next((k for k in footer.query(FooterKey) if k.key == name), None)

            # The footer recomposes when a screen's bindings settle: wait for its keys to be
            # laid out (under load this comes a frame after the workers finish).
            await wait_until(
                pilot,
                lambda: all(
                    (k := footer_key(name)) and k.region.width for name in ("ctrl+q", "f1")
                ),
                f"the footer's keys laid out on {key}",
            )
            quit_key, help_key = footer_key("ctrl+q"), footer_key("f1")
            assert quit_key is not None and help_key is not None
            assert quit_key.description == "Quit"
            assert quit_key.region.right <= SIZE[0], f"quit cut off on {key}"
            assert help_key.region.right <= SIZE[0]


async def test_esc_and_a_digit_arriving_as_alt_digit_switch_screens(
    sample_project: Project,
) -> None:
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_section(pilot, "model")
        assert isinstance(app.focused, Input), "typing in a field"
        await pilot.press("alt+2")
        await settle(pilot)
        assert app.current_mode == "runs"
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("alt+4")
        await settle(pilot)
        assert app.current_mode == "scenarios" and not isinstance(app.screen, HelpScreen)


async def test_keys_batched_after_tab_land_in_the_next_field(sample_project: Project) -> None:
    """``name<tab>note<enter>`` arriving at once (typed quickly, or batched over SSH) fills
    both fields of the snapshot dialog and saves: the focus moves before the next key."""
    from textual import events

    from trntui.store.scenarios import load_scenario

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        keys = [*"ab1", "tab", *"cd", "enter"]
        for key in keys:  # all queued before any is handled, as a burst from the terminal
            character = {"tab": "\t", "enter": "\r"}.get(key, key)
            app.post_message(events.Key(key, character))
        await settle(pilot)
    assert load_scenario(sample_project.root, "ab1").note == "cd"


async def test_the_top_line_names_every_area_and_marks_the_current_one(
    sample_project: Project,
) -> None:
    """Issue 26, item 1: after pressing 2 nothing on screen said where one was (the header
    read "trntui" and the project). The top line lists the areas by their keys in force and
    marks the one shown; clicking a name goes there."""
    from trntui.ui.widgets.area_bar import AreaBar

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        for key, name in (("1", "Inventory"), ("2", "Runs"), ("3", "Prices"), ("4", "Scenarios")):
            await pilot.press(key)
            await settle(pilot)
            line = app.screen.query_one(AreaBar).render()
            assert "1 Inventory  2 Runs  3 Prices  4 Scenarios" in line.plain
            marked = [line.plain[s.start : s.end] for s in line.spans if "reverse" in str(s.style)]
            assert marked == [f" {key} {name} "]
            assert sample_project.inventory.project.name[:10] in line.plain
        await pilot.click(AreaBar, offset=(line.plain.index("2 Runs") + 2, 0))
        await settle(pilot)
        assert app.current_mode == "runs"


async def test_keys_typed_while_a_section_is_first_built_land_in_its_fields(
    sample_project: Project,
) -> None:
    """Enter on a section not built yet, then values typed at once (quickly, or batched over
    SSH): the keys wait for the form and its first field, so none is lost and none lands one
    field up. The walkthrough saved ``months_stored = 500`` this way before."""
    from textual import events

    from trntui.ui.widgets.field_form import FieldForm

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InventoryScreen)
        assert [form.id for form in screen.forms()] == ["form-project"], "only the first built"
        screen.query_one("#nav").focus()
        await settle(pilot)
        before = app.session.inventory.distribution
        keys = ["down", "down", "down", "enter", "8", "tab", "4", "tab", "2"]
        for key in keys:  # all queued before any is handled, as a burst from the terminal
            character = {"tab": "\t", "enter": "\r", "down": None}.get(key, key)
            app.post_message(events.Key(key, character))
        await settle(pilot)
        screen.commit_pending()
        form = screen.query_one("#form-distribution", FieldForm)
        assert form.pending_changes() == [] and form.invalid_fields() == []
    after = app.session.inventory.distribution
    assert (after.data_parallel, after.tensor_parallel, after.pipeline_parallel) == (8, 4, 2), (
        f"before {before}"
    )


async def test_held_keys_are_replayed_even_if_the_marker_is_lost(
    sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The marker that releases held keys may never come back (its widget removed on the
    way): a timer replays them instead, so a key is delayed at worst, never lost."""
    from textual import events

    from trntui.ui import key_hold

    monkeypatch.setattr(key_hold, "RELEASE_AFTER_S", 2.0)
    monkeypatch.setattr(key_hold.Settled, "bubble", False)  # it never reaches the App
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#nav").focus()
        await settle(pilot)
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("x", "x"))
        await pilot.pause()
        assert app.keys_held, "the x waits for the enter's focus"
        await wait_until(pilot, lambda: not app.keys_held, "the held keys replayed")
        name = screen.query_one("#field-name", Input)
        assert app.focused is name and name.value.endswith("x")


@pytest.mark.parametrize("opening", ["a", "e", "enter"])
async def test_keys_typed_right_after_a_list_opens_its_form_land_in_the_form(
    sample_project: Project, opening: str
) -> None:
    """``a`` (add), ``e`` or enter (edit) on the targets list, then a name typed at once: the
    keys wait until the form is up with its first field focused, so none is lost."""
    from textual import events

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_section(pilot, "targets")
        before = str(app.focused)
        for key in [opening, "end", *"XYZ"]:  # a burst from the terminal
            app.post_message(events.Key(key, {"enter": "\r", "end": None}.get(key, key)))
        await settle(pilot)
        assert isinstance(app.screen, ItemFormScreen), f"focus was on {before}"
        name = app.screen.query_one("#field-name", Input)
        assert app.focused is name and name.value.endswith("XYZ")


def dialog_actions(source: str) -> dict[str, set[str]]:
    """Per class in ``source``: its ``action_*`` methods that push a screen (a dialog),
    directly or through another method of the class (by name, as ``self.method(...)``)."""
    import ast

    found: dict[str, set[str]] = {}
    for cls in [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)]:
        methods = {
            f.name: f for f in cls.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        }

        def pushes(
            method: ast.AST, seen: frozenset[str], methods: dict[str, ast.AST] = methods
        ) -> bool:
            for node in ast.walk(method):
                if isinstance(node, ast.Attribute) and node.attr == "push_screen":
                    return True
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "self"
                    and node.attr in methods
                    and node.attr not in seen
                    and pushes(methods[node.attr], seen | {node.attr})
                ):
                    return True
            return False

        actions = {
            name.removeprefix("action_")
            for name, method in methods.items()
            if name.startswith("action_") and pushes(method, frozenset({name}))
        }
        if actions:
            found[cls.name] = actions
    return found


def test_the_dialog_finder_follows_a_helper_method() -> None:
    source = """
class A:
    def action_open(self):
        self._ask()
    def _ask(self):
        self.app.push_screen(X())
    def action_move(self):
        self.x += 1
"""
    assert dialog_actions(source) == {"A": {"open"}}


def test_every_action_that_opens_a_dialog_holds_the_keys_typed_after_it() -> None:
    """A key typed right after one that opens a dialog goes to the dialog's field, not to the
    screen under it (``ui/key_hold.py``): every such action is listed in its class's
    ``HOLDS_KEYS_AFTER``."""
    import importlib

    package = Path(__file__).resolve().parent.parent / "trntui" / "ui"
    missing = []
    for path in sorted(package.rglob("*.py")):
        found = dialog_actions(path.read_text(encoding="utf-8"))
        if not found:
            continue
        parts = path.relative_to(package.parent.parent).with_suffix("").parts
        module = importlib.import_module(".".join(parts))
        for name, actions in found.items():
            holds = getattr(getattr(module, name), "HOLDS_KEYS_AFTER", frozenset())
            missing += [f"{name}.action_{action}" for action in sorted(actions - holds)]
    assert missing == []


async def test_tab_keys_typed_at_once_step_one_tab_each(sample_project: Project) -> None:
    """``]`` three times at once on Scenarios lands three tabs on: a later ``]`` waits until
    the tab the earlier one showed has taken over (Textual's tab bar confirms a change with a
    message of its own, which undid a quicker second change)."""
    from textual import events
    from textual.widgets import TabbedContent

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        tabs = app.screen.query_one("#tabs", TabbedContent)
        assert tabs.active == "estimate"
        for _ in range(3):
            app.post_message(events.Key("right_square_bracket", "]"))
        await settle(pilot)
        assert tabs.active == "compare"
        for _ in range(2):
            app.post_message(events.Key("left_square_bracket", "["))
        await settle(pilot)
        assert tabs.active == "inputs-tab"


async def test_tab_keys_in_bursts_walk_round_the_tabs_and_stop_where_sent(
    sample_project: Project,
) -> None:
    """Pairs of ``]`` at once, round the six tabs and past Snapshots: each pair moves two
    tabs and the screen stays there. Crossing Snapshots, Textual moved the focus off its
    hidden table into the hidden pane, whose focus activated Snapshots again, whose focus
    went back to the tab shown: the tabs flipped between two without end (found in review)."""
    from textual import events
    from textual.widgets import TabbedContent

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("4")
        await settle(pilot)
        tabs = app.screen.query_one("#tabs", TabbedContent)
        walked = []
        for _ in range(5):
            for _ in range(2):
                app.post_message(events.Key("right_square_bracket", "]"))
            await settle(pilot)
            walked.append(tabs.active)
        await pilot.pause(0.2)
        assert tabs.active == walked[-1], "nothing moves after the keys"
    assert walked == ["sensitivity", "scale", "estimate", "sensitivity", "scale"]


async def test_esc_then_a_letter_at_once_keeps_the_keys_after_it_in_order(
    sample_project: Project,
) -> None:
    """Esc then ``a`` arriving as one alt+a on an open target form, then ``XY``: esc closes
    the form, ``a`` opens a new one, and ``XY`` fills its name (the X and Y went to the list
    under the form before the ``a`` ran, found in review)."""
    from textual import events

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        first = await open_new_target_form(pilot)
        for key, character in [("alt+a", "a"), ("X", "X"), ("Y", "Y")]:
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert isinstance(app.screen, ItemFormScreen) and app.screen is not first
        assert app.screen.query_one("#field-name", Input).value == "XY"


async def test_a_key_typed_right_after_enter_on_a_run_reaches_its_detail(
    trn_project: tuple[Path, str],
) -> None:
    """Enter on a run reads its detail in a worker, then shows it: ``r`` typed at once waits
    for the detail and opens its quality form there (it was lost on the Runs table)."""
    from textual import events

    root, _ = trn_project
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await settle(pilot)
            app.post_message(events.Key("enter", "\r"))
            app.post_message(events.Key("r", "r"))
            await settle(pilot)
            stack = [type(screen) for screen in app.screen_stack]
            assert RunDetailScreen in stack and isinstance(app.screen, ItemFormScreen), stack


async def test_a_late_marker_of_an_earlier_hold_never_releases_a_later_one(
    sample_project: Project,
) -> None:
    """Hold A ended by its timer, hold B started: A's marker arriving late leaves B's keys
    held until B's own marker is done (found in review)."""
    from trntui.ui.key_hold import TRIPS, Settled

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        hold, widget = app.key_hold, app.screen.query_one("#nav")
        first = hold.start(widget)
        assert hold.released(first.hold) == [] and not app.keys_held
        second = hold.start(widget)
        hold.arrived(Settled(widget, TRIPS, first.hold))
        await pilot.pause()
        assert app.keys_held, "the late marker of the first hold released the second"
        hold.arrived(Settled(widget, TRIPS, second.hold))
        await wait_until(pilot, lambda: not app.keys_held, "the second hold released")


async def test_ctrl_q_then_a_key_at_once_in_a_dialog_answers_the_question(
    sample_project: Project,
) -> None:
    """ctrl+q acts over a dialog too (a priority key of the App) and asks first while an
    entry does not parse: a key typed at once after it goes to that question, not into the
    dialog's field (found in review: the screen's bindings leave the App out in a dialog)."""
    from textual import events

    from trntui.ui.screens.confirm import ConfirmScreen

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_section(pilot, "model")
        await pilot.press("tab", "tab", "tab", *"abc")  # the parameters must be a number
        await settle(pilot)
        assert app.session.invalid, "an entry that does not parse"
        await pilot.press("escape", "2", "i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ImportRunsScreen)
        paths = app.focused
        assert isinstance(paths, Input) and paths.value == ""
        for key, character in [("ctrl+q", None), ("n", "n")]:
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert app.screen is dialog, "n answered the question: back in the dialog"
        assert paths.value == "" and app.is_running
        assert not any(isinstance(screen, ConfirmScreen) for screen in app.screen_stack)


async def test_esc_then_a_digit_in_one_burst_leaves_the_field_and_switches(
    sample_project: Project,
) -> None:
    """esc then 2 arriving at once (typed quickly, or batched over SSH) in a form field: esc
    moves the focus to the section list, and the 2 waits for that and switches to Runs. It
    used to be typed into the field, over its selected value: the project's name became 2."""
    from textual import events

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        name = app.screen.query_one("#field-name", Input)
        before = name.value
        assert app.focused is name and before
        for key, character in [("escape", "\x1b"), ("2", "2")]:  # queued before either runs
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert app.current_mode == "runs"
        assert name.value == before
    assert read_inventory(sample_project.root).inventory.project.name == before


async def test_keys_typed_after_a_digit_wait_for_that_area_first_shown(
    sample_project: Project,
) -> None:
    """2 then /trn3 arriving at once (typed quickly, or batched over SSH) from the Inventory:
    the Runs area is built at its first visit, and the keys after the 2 wait for it, so the
    filter gets trn3. They used to reach the area being left: / and trn were lost, and the 3
    switched to Prices."""
    from textual import events

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in ["2", "slash", *"trn3"]:  # queued before any runs
            app.post_message(events.Key(key, "/" if key == "slash" else key))
        await settle(pilot)
        assert app.current_mode == "runs"
        assert isinstance(app.focused, Input) and app.focused.value == "trn3"


async def test_esc_leaves_the_runs_filter_and_a_digit_after_it_switches(
    sample_project: Project,
) -> None:
    """In the Runs filter esc did nothing, so 3 typed after it went into the filter and the
    only way out was enter. esc now leaves the field for the table, the filter kept, and esc
    then 3 arriving at once (typed quickly, or batched over SSH) switches to Prices."""
    from textual import events
    from textual.widgets import DataTable

    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        field = await type_runs_filter(pilot, "trn")
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.focused, DataTable) and field.value == "trn"
        await pilot.press("slash")
        await settle(pilot)
        assert app.focused is field
        for key, character in [("escape", "\x1b"), ("3", "3")]:  # queued before either runs
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert app.current_mode == "prices"
        assert field.value == "trn"


def typing_ahead(project: Project, keys: list[str]) -> TrnTuiApp:
    """The app with ``keys`` queued while it loads, before its first screen exists (typed
    while the app starts, quickly, or batched over SSH or tmux)."""
    from textual import events

    import trntui.ui.app

    characters = {"enter": "\r", "slash": "/"}

    class TypingAhead(TrnTuiApp):
        CSS_PATH = str(Path(trntui.ui.app.__file__).with_name(TrnTuiApp.CSS_PATH))

        def on_load(self) -> None:
            for key in keys:
                self.post_message(events.Key(key, characters.get(key, key)))

    return TypingAhead(project)


async def test_keys_typed_before_the_first_screen_is_ready_wait_for_it(
    sample_project: Project,
) -> None:
    """Keys typed while the app starts reach the App before the Inventory has its widgets
    and its focus: they wait for it. enter x y typed that early lost the x and y, which went
    to no widget."""
    app = typing_ahead(sample_project, ["enter", "x", "y"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        name = app.screen.query_one("#field-name", Input)
        assert app.focused is name and name.value == "xy"


async def test_a_digit_typed_while_the_app_starts_holds_the_keys_after_it(
    sample_project: Project,
) -> None:
    """2 then /trn3 typed while the app starts: the 2 waits for the first screen, and the
    keys after it for the Runs area."""
    app = typing_ahead(sample_project, ["2", "slash", *"trn3"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.current_mode == "runs"
        assert isinstance(app.focused, Input) and app.focused.value == "trn3"
