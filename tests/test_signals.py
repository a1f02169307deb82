"""The session's typed signals (``ui/signals.py``): called at once, errors not swallowed, a
stopped node dropped, a held value published only when it changes."""

from __future__ import annotations

import pytest

from trntui.ui.signals import Held, Signal


class Node:
    def __init__(self) -> None:
        self.is_running = True


def test_a_subscriber_is_called_inside_publish_with_the_value() -> None:
    signal: Signal[int] = Signal("count")
    node, heard = Node(), []
    signal.subscribe(node, heard.append)
    signal.subscribe(node, lambda value: heard.append(value * 10))
    signal.publish(3)
    assert heard == [3, 30]


def test_a_node_that_stopped_running_is_dropped() -> None:
    signal: Signal[str] = Signal("name")
    running, stopped = Node(), Node()
    heard: list[tuple[str, str]] = []
    signal.subscribe(running, lambda value: heard.append(("running", value)))
    signal.subscribe(stopped, lambda value: heard.append(("stopped", value)))
    stopped.is_running = False
    signal.publish("a")
    stopped.is_running = True  # dropped for good, not skipped once
    signal.publish("b")
    assert heard == [("running", "a"), ("running", "b")]


def test_an_error_in_a_subscriber_reaches_the_publisher() -> None:
    signal: Signal[None] = Signal("runs")

    def broken(_: None) -> None:
        raise RuntimeError("a bug in a screen")

    node = Node()  # held by its screen in the app: a signal holds its subscribers weakly
    signal.subscribe(node, broken)
    with pytest.raises(RuntimeError, match="a bug in a screen"):
        signal.publish(None)


def test_a_held_value_is_published_only_when_it_changes() -> None:
    status = Held("status", ("", ""))
    heard: list[tuple[str, str]] = []
    node = Node()
    status.subscribe(node, heard.append)
    status.set(("Saved", ""))
    status.set(("Saved", ""))
    status.set(("Not saved", "error"))
    assert heard == [("Saved", ""), ("Not saved", "error")]
    assert status.value == ("Not saved", "error")
