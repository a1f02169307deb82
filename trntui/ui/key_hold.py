"""Keys typed while a key's work is still moving the focus wait for it, then go where it led.

Textual sends each key to the widget focused when the App reads it. Enter on a section not
built yet builds the section's form (an await of a few hundred ms on a busy machine) and only
then focuses its first field: keys typed meanwhile, quickly or batched over SSH, went to the
section list, so the first value was lost and the next landed one field up (the walkthrough
saved ``months_stored = 500`` that way, with no error).

The rule: a widget lists the actions of its bindings after which the focus moves
asynchronously (``HOLDS_KEYS_AFTER``: by action, so a key remapped in ``keymap.toml`` holds
too). After a key bound to such an action the App holds the keys that follow and replays them,
in order, once everything that key started has run. "Everything" is known without a clock: a
``Settled`` marker is posted to the focused widget after the key and travels the same queues
the key's work does (each widget's queue runs its handlers one at a time, in order), twice:
the first trip ends after the key's binding ran at the App (the binding posts the widget's
messages, such as ``OptionSelected``, or pushes a dialog); the second ends after the screen's
handlers for those messages finished, including the focus they asked for. Then the release
takes one more hop through the current screen's queue, so a dialog the key opened has been
composed and has focused its first field before the keys reach it, and the App replays them
in its own task, ahead of any key read meanwhile. Work that goes on in a worker (opening a
run's detail) keeps the hold until it says it is done (``KeyHold.wait_for``/``done``). Each
hold has its own number: a marker of an earlier hold never releases a later one. If the
widget goes away before the marker comes back (the area was left), a timer releases the
keys: nothing is held for long.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from textual import events
from textual.app import App, ScreenStackError
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

RELEASE_AFTER_S = 3.0
"""Keys are replayed after this long even if the marker never came back (a widget removed
on the way): later than any build seen (0.5 s on a busy 2-core machine), soon enough that a
lost marker costs a pause, not the keys."""

TRIPS = 2
"""Trips the marker makes: to the App after the key's bindings, then after their messages."""


class HoldsKeys(Protocol):
    """A widget whose screen moves the focus asynchronously after some of its actions."""

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]]
    """The actions (as its bindings name them) after which keys wait."""


def action_name(action: str) -> str:
    """The action a binding runs, without its arguments or namespace: ``tab(1)`` is ``tab``,
    ``app.switch_mode('runs')`` is ``switch_mode``."""
    return action.split("(", 1)[0].rsplit(".", 1)[-1]


class Settled(Message):
    """Travels from the widget that got a holding key up to the App; see the module."""

    def __init__(self, widget: Widget, trip: int, hold: int) -> None:
        super().__init__()
        self.widget = widget
        self.trip = trip
        self.hold = hold
        """The number of the hold it belongs to."""


class ReleaseKeys(Message):
    """Asks the App to replay the keys of hold ``hold`` (posted from the current screen's
    queue, once it has handled what it had queued)."""

    def __init__(self, hold: int) -> None:
        super().__init__()
        self.hold = hold


MARKER = "marker"
"""What a hold waits for until its marker has made its trips."""


class KeyHold:
    """The App's held keys (``held`` is None when nothing is held)."""

    def __init__(self) -> None:
        self.held: list[events.Key] | None = None
        self.number = 0
        """The current hold's number (``Settled.hold``)."""
        self._waiting: set[str] = set()
        self._timer: Timer | None = None

    def takes(self, event: events.Key) -> bool:
        """Hold ``event`` if keys are held now; whether it was taken."""
        if self.held is None:
            return False
        self.held.append(event)
        return True

    def holds_after(self, event: events.Key, focused: Widget | None) -> bool:
        """Whether ``event`` is bound, where ``focused`` is, to an action after which the focus
        moves asynchronously (``HOLDS_KEYS_AFTER``)."""
        if focused is None or (event.is_printable and isinstance(focused, Input)):
            return False  # a field types a character before any binding of it could run
        active = focused.screen.active_bindings.get(event.key)
        if active is None or not active.enabled:
            return False
        holds: frozenset[str] = getattr(active.node, "HOLDS_KEYS_AFTER", frozenset())
        return action_name(active.binding.action) in holds

    def start(self, origin: Widget, first: list[events.Key] | None = None) -> Settled:
        """Start a hold (``first``: keys it holds already) and return its marker's first trip,
        for the caller to post to ``origin`` once the key that started it is on its way."""
        self._hold(origin.app, MARKER, first)
        return Settled(origin, 1, self.number)

    def hold_until(self, app: App[Any], reason: str) -> None:
        """Hold every key until ``done(reason)``, with no key that started it (the app's start,
        until its first screen has its widgets and its focus)."""
        self._hold(app, reason)

    def _hold(self, app: App[Any], reason: str, first: list[events.Key] | None = None) -> None:
        self.number += 1
        self.held = [*(self.held or []), *(first or [])]  # a hold still open keeps its keys
        self._waiting = {reason}
        if self._timer is not None:
            self._timer.stop()
        number = self.number
        self._timer = app.set_timer(RELEASE_AFTER_S, lambda: self._replay_soon(app, number))

    def arrived(self, marker: Settled) -> None:
        """The marker reached the App: send it on its next trip, or stop waiting for it."""
        if marker.hold != self.number or self.held is None:
            return  # a marker of a hold already released
        widget = marker.widget
        if marker.trip < TRIPS and widget.is_attached:
            widget.post_message(Settled(widget, marker.trip + 1, marker.hold))
            return
        self.done(widget.app, MARKER)

    def wait_for(self, reason: str) -> bool:
        """Keep the current hold until ``done(reason)`` (work the key started goes on in a
        worker); whether a hold was there to keep."""
        if self.held is None:
            return False
        self._waiting.add(reason)
        return True

    def done(self, app: App[Any], reason: str) -> None:
        """``reason`` is over; when nothing else is, the current screen, once it has handled
        what it has queued, asks the App to replay the keys."""
        self._waiting.discard(reason)
        if self.held is None or self._waiting:
            return
        number = self.number
        try:
            screen = app.screen
        except ScreenStackError:  # no screen: the app is closing, and nothing reads the keys
            self.released(number)
            return
        screen.call_later(app.post_message, ReleaseKeys(number))

    def _replay_soon(self, app: App[Any], number: int) -> None:
        """The timer's way out: replay now whatever the hold still waits for."""
        if number == self.number and self.held is not None:
            self._waiting.clear()
            app.post_message(ReleaseKeys(number))

    def released(self, number: int) -> list[events.Key]:
        """End hold ``number`` and return its keys, in the order typed, for the App to replay
        at once in its own task ([] for a hold already over)."""
        if number != self.number or self.held is None:
            return []
        held, self.held = self.held, None
        self._waiting = set()
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        return held


def key_hold_of(app: App[object]) -> KeyHold | None:
    """The App's key hold (None for an App without one, as in some tests): a screen whose
    key's work goes on in a worker keeps the hold with it (``wait_for``/``done``)."""
    hold = getattr(app, "key_hold", None)
    return hold if isinstance(hold, KeyHold) else None
