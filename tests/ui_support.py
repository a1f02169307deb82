"""Driving the app in UI tests without sleeping: wait for a condition, never for a duration."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests import HANG_GUARD_S
from trntui.ui.screens.item_form import ItemFormScreen

SOON_S = 0.001
"""A timer delay for "at once" (Textual's timers refuse 0)."""


async def settle(pilot: Pilot) -> None:
    """Let every worker finish and the screens process all that the workers posted (including
    workers started by those messages, such as a plot load after a table refresh)."""
    app = pilot.app
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        # A cancelled or failed worker is finished too: the screens report it, not this wait.
        await asyncio.gather(*(worker.wait() for worker in app.workers), return_exceptions=True)
        await pilot.pause()
        # What the workers posted may change a widget's height (the estimate bar takes a
        # second line): done when the screen has no layout pending either.
        # Keys typed while an earlier key moved the focus are held until it has (key_hold.py);
        # an app that quit holds nothing for anyone.
        held = app.is_running and getattr(app, "keys_held", False)
        if (
            all(worker.is_finished for worker in app.workers)
            and not app.screen._layout_required
            and not held
        ):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"workers still running: {list(app.workers)}")


async def wait_until(pilot: Pilot, condition: Callable[[], object], what: str) -> None:
    """Settle until ``condition()`` is true; fail naming ``what`` if it never becomes true."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await settle(pilot)


async def open_section(pilot: Pilot, section: str) -> None:
    """Highlight ``section`` in the Inventory's section list and enter it with the enter key.

    The highlight is set, not walked to with arrow keys: each arrow key shows another section
    (about 0.15 s each), and the tests that use this are about the section, not the walk.
    ``test_target_list_snapshot`` walks with the arrow keys."""
    nav = pilot.app.screen.query_one("#nav", OptionList)
    nav.focus()
    ids = [nav.get_option_at_index(i).id for i in range(nav.option_count)]
    nav.highlighted = ids.index(section)
    await pilot.press("enter")
    await settle(pilot)


async def open_new_target_form(pilot: Pilot) -> ItemFormScreen:
    """Inventory > Training targets (``open_section``), then a new target's form (``a``)."""
    await open_section(pilot, "targets")
    await pilot.press("a")
    await settle(pilot)
    form = pilot.app.screen
    assert isinstance(form, ItemFormScreen), form
    return form


async def type_runs_filter(pilot: Pilot, text: str) -> Input:
    """Go to the Runs area (``2``), open its filter (``/``) and type ``text`` into it; the
    filter field, which has the focus then."""
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("slash", *text)
    await settle(pilot)
    field = pilot.app.screen.query_one("#runs-filter", Input)
    assert pilot.app.focused is field and field.value == text
    return field
