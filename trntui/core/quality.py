"""What a run must reach to count, and a quality result recorded from outside its log.

Kept apart from ``run_facts`` (which needs Polars) so the inventory, and everything that only
reads ``trntui.toml``, loads without it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QualityTarget:
    """The quality criterion a run must meet to count (e.g. ``eval_accuracy >= 0.759``)."""

    metric: str | None
    threshold: float
    higher_is_better: bool

    def met_by(self, value: float) -> bool:
        return value >= self.threshold if self.higher_is_better else value <= self.threshold


@dataclass(frozen=True)
class RecordedQuality:
    """A quality result measured outside the run's log, with where it comes from."""

    value: float
    source: str
    evaluation_s: float | None = None
    """How long the evaluation took after the run ended, when known."""
