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
composed and has focused its first field before the keys reach it. If the widget goes away
before the marker comes back (the area was left), a timer releases the keys: nothing is held
for long.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual import events
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

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

    def __init__(self, widget: Widget, trip: int) -> None:
        super().__init__()
        self.widget = widget
        self.trip = trip


class KeyHold:
    """The App's held keys (``None`` when nothing is held)."""

    def __init__(self) -> None:
        self.held: list[events.Key] | None = None
        self._timer: Timer | None = None

    def takes(self, event: events.Key) -> bool:
        """Hold ``event`` if keys are held now; whether it was taken."""
        if self.held is None:
            return False
        self.held.append(event)
        return True

    def start_after(self, event: events.Key, focused: Widget | None) -> bool:
        """Start holding if ``event`` is bound, where ``focused`` is, to an action that moves
        the focus asynchronously; whether it is. The caller sends the marker's first trip once
        the key itself is on its way."""
        if focused is None:
            return False
        active = focused.screen.active_bindings.get(event.key)
        if active is None or not active.enabled:
            return False
        holds: frozenset[str] = getattr(active.node, "HOLDS_KEYS_AFTER", frozenset())
        if action_name(active.binding.action) not in holds:
            return False
        self.held = []
        self._timer = focused.app.set_timer(RELEASE_AFTER_S, lambda: self.release(focused))
        return True

    def arrived(self, marker: Settled) -> bool:
        """The marker reached the App: send it on its next trip, or have the current screen
        release the keys once it has handled what it has queued (True)."""
        widget = marker.widget
        if marker.trip < TRIPS and widget.is_attached:
            widget.post_message(Settled(widget, marker.trip + 1))
            return False
        screen = widget.app.screen
        return screen.call_later(self.release, widget)

    def release(self, widget: Widget) -> bool:
        """Replay the held keys to the App, in the order typed; whether any were held."""
        if self.held is None:
            return False
        held, self.held = self.held, None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        for event in held:
            widget.app.post_message(event)
        return True
