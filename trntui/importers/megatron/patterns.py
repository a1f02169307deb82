"""What Megatron-LM prints: the line patterns and field names read, the sniff, and
expressions that read a number or a timestamp after a pattern.
"""

from __future__ import annotations

import re

import polars as pl

NAME = "megatron"
ITERATION_START = r"iteration\s+\d+\s*/"
ITERATION_HEAD = r"iteration\s+(\d+)\s*/\s*(\d+)"
TIMESTAMP = r"^\s*\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\]"
ELAPSED = "elapsed time per iteration (ms):"
FIELDS = {
    "consumed samples": "samples",
    "elapsed time per iteration (ms)": "step_ms",
    "global batch size": "batch",
    "lm loss": "loss",
}
_SNIFF = re.compile(r"iteration\s+\d+\s*/\s*\d+\s*\|\s*consumed (?:samples|tokens):")
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S%.f"
NUMBER = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf))"
EXPECTED_ITERATION = (
    "' iteration N/ TOTAL | consumed samples: N | elapsed time per iteration (ms): X | ... |'"
)


COUNTS = (
    pl.col("it").str.strip_chars().cast(pl.Int64, strict=False).alias("step"),
    pl.col("of").str.strip_chars().cast(pl.Int64, strict=False).alias("planned"),
)
"""Iteration and planned iterations from the ``it`` / ``of`` halves of ``N/ TOTAL``."""


def sniff(head: str) -> bool:
    return _SNIFF.search(head) is not None


def float_expr(pattern: str) -> pl.Expr:
    return pl.col("text").str.extract(pattern, 1).cast(pl.Float64, strict=False)


def int_expr(pattern: str) -> pl.Expr:
    return pl.col("text").str.extract(pattern, 1).cast(pl.Int64, strict=False)


def timestamp_expr(pattern: str) -> pl.Expr:
    return (
        pl.col("text")
        .str.extract(pattern, 1)
        .str.strptime(pl.Datetime("us"), TIMESTAMP_FORMAT, strict=False)
    )
