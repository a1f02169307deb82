"""Screens whose capability is not built yet: they say honestly what will fill them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown

from trntui.ui.widgets.status_line import StatusLine


class PlaceholderScreen(Screen[None]):
    DEFAULT_CSS = """
    PlaceholderScreen VerticalScroll { padding: 0 1; }
    """

    TEXT = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Markdown(self.TEXT)
        yield StatusLine()
        yield Footer(compact=True)


class ScenariosScreen(PlaceholderScreen):
    TEXT = """\
# Scenarios: not built yet

This screen will show the live estimate per target with the provenance of every
input, the sensitivity of the total over the ranges seen in repeated runs,
saved scenario snapshots and the Trainium-vs-GPU comparison on the cost to reach
the same quality result.

It needs measured runs and dated prices first; no estimate is shown without them.
"""
