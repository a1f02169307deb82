"""What every screen of the app shares: the session, the status message and the read-only
guard.

State flows down: a screen gets the ``Session`` in its constructor, reads what it shows there
and subscribes to the session's typed ``signals`` (``SessionSignals``: ``inventory``,
``quotes``, ``runs``, ``recomputed``, ``analysis``, ``estimate_problem``, ``status``) for
changes; no attribute of the App is watched by name. Outcomes flow up as messages: a
``Status`` goes to the App, which sets ``signals.status`` for every screen's status line. No
screen imports the App.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from textual.message import Message
from textual.screen import Screen

from trntui.ui.session import Session


class Status(Message):
    """What the last action did (or why it did not), for the status line. ``level`` is '',
    'warning' or 'error'."""

    def __init__(self, text: str, level: str = "") -> None:
        super().__init__()
        self.text = text
        self.level = level


class SessionView:
    """Mixin for anything that shows the session: one way to report and to refuse edits."""

    session: Session

    def set_status(self, text: str, level: str = "") -> None:
        # Posted to the App itself, not bubbled: a dialog that reports and closes at once
        # would take an unprocessed message with it.
        self.app.post_message(Status(text, level))  # type: ignore[attr-defined]

    def writable(self) -> bool:
        """True when the project may be changed; otherwise say why (a notification)."""
        if self.session.read_only:
            self.notify(self.session.read_only_message, severity="warning")  # type: ignore[attr-defined]
            return False
        return True


def edits(action: Callable[..., Any]) -> Callable[..., Any]:
    """Mark an action that changes the project: in a read-only session it only says why."""

    @functools.wraps(action)
    def guarded(self: SessionView, *args: Any, **kwargs: Any) -> Any:
        if not self.writable():
            return None
        return action(self, *args, **kwargs)

    return guarded


class SessionScreen(SessionView, Screen[None]):
    """A screen of one area of the app (Inventory, Runs, Prices, Scenarios)."""

    def __init__(self, session: Session, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session
