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


class RunsScreen(PlaceholderScreen):
    TEXT = """\
# Runs: not built yet

This screen will import trial-run logs (MLPerf, Megatron-LM, neuronx-distributed,
Hugging Face `trainer_state.json`) with a preview, and show per run its status,
phases, steady useful throughput, restarts, redone work and time to a verified
quality result, plus the spread over repeated runs.

No run data is shown here until that importer exists: nothing on this screen is
estimated or invented.
"""


class PricesScreen(PlaceholderScreen):
    TEXT = """\
# Prices: not built yet

This screen will fetch current prices from the AWS Price List for the exact
instance type, region and purchase option of each target, with the list's
publication date and the retrieval time, and take manual quotes (Trainium3,
discounts, Capacity Blocks, spot) with a source note and a date.

Until then every price is unknown, never a figure from elsewhere.
"""


class ScenariosScreen(PlaceholderScreen):
    TEXT = """\
# Scenarios: not built yet

This screen will show the live estimate per target with the provenance of every
input, the sensitivity of the total over the ranges seen in repeated runs,
saved scenario snapshots and the Trainium-vs-GPU comparison on the cost to reach
the same quality result.

It needs measured runs and dated prices first; no estimate is shown without them.
"""
