"""Typed change notification: what screens and widgets follow, named by an attribute that a
type checker sees, never by a string.

A ``Signal[T]`` is one kind of change, published with its value (a ``T``). A screen or a
widget subscribes once it is mounted, with the method that shows the change. The rules:

* a subscriber is called at once, inside ``publish`` (as a reactive's watcher is called
  inside the assignment), so whatever published sees every screen up to date when it returns;
* an exception in a subscriber propagates to the publisher: a bug stops the app and fails
  its test, as it did in a watcher;
* a subscriber whose node has stopped running (removed, its screen closed) is dropped at the
  next publish, and a signal holds its nodes weakly (a node nothing else holds is gone); a
  screen of another mode keeps running, so it follows changes made elsewhere.

``Held[T]`` is a signal that keeps its last value, for what a widget must show as soon as it
is mounted (the status line's message); setting an equal value publishes nothing.

Why not ``textual.signal.Signal``: it must belong to a DOM node (the ``Session`` that owns
these is none, and knows no Textual), and it logs and drops a subscriber's exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar
from weakref import WeakKeyDictionary

T = TypeVar("T")


class Node(Protocol):
    """What a subscriber is (a Textual widget or screen): something that runs until removed."""

    @property
    def is_running(self) -> bool: ...


class Signal(Generic[T]):
    """One kind of change, published with its value (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        """What changes, for a reader of a traceback."""
        self._subscribers: WeakKeyDictionary[Node, list[Callable[[T], object]]] = (
            WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"Signal({self.name!r})"

    def subscribe(self, node: Node, callback: Callable[[T], object]) -> None:
        """Call ``callback`` with each value published while ``node`` runs."""
        self._subscribers.setdefault(node, []).append(callback)

    def publish(self, value: T) -> None:
        for node, callbacks in list(self._subscribers.items()):
            if not node.is_running:
                del self._subscribers[node]
                continue
            for callback in callbacks:
                callback(value)


class Held(Signal[T]):
    """A signal that keeps its last value (see the module docstring)."""

    def __init__(self, name: str, value: T) -> None:
        super().__init__(name)
        self._value = value

    @property
    def value(self) -> T:
        return self._value

    def set(self, value: T) -> None:
        """Keep ``value`` and publish it, unless it equals the value kept."""
        if value != self._value:
            self._value = value
            self.publish(value)
