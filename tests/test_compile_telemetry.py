"""Compile telemetry: counts, bounded time, and the first-run-compiles / second-hits-cache case."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.loggen import NxdSpec, write_nxd
from tests.telemetry_gen import START, compiler_log
from trntui.core.compile_telemetry import (
    CACHED,
    COMPILED,
    FAILED,
    UNFINISHED,
    compile_recurrence,
    compile_summary,
    union_length,
)
from trntui.importers._base import read_lines, read_source


def _lines(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"line": list(range(1, len(texts) + 1)), "text": texts})


def test_first_run_compiles_second_hits_the_cache() -> None:
    first = compile_summary(_lines(compiler_log(4, cached=False, start=START, seconds_each=90)))
    second = compile_summary(_lines(compiler_log(4, cached=True, start=START, seconds_each=90)))
    assert (first.compilations, first.cache_hits, first.failures) == (4, 0, 0)
    assert (second.compilations, second.cache_hits) == (0, 4)
    assert first.compile_s == pytest.approx(4 * 90)
    assert second.compile_s is None
    recurrence = compile_recurrence([first, second])
    assert recurrence.first_compile_s == pytest.approx(360)
    assert recurrence.recurring_s == pytest.approx(0.0)
    assert recurrence.one_off_s == pytest.approx(360)
    single = compile_recurrence([first])
    assert single.recurring_s is None
    assert "not measured" in single.explanation


def test_nxd_log_compile_time_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "nxd.log"
    spec = NxdSpec()
    truth = write_nxd(path, spec)
    summary = compile_summary(read_lines(read_source(path)))
    assert summary.compilations == spec.graphs
    assert summary.cache_hits == spec.graphs  # the restart reloads every graph from the cache
    assert summary.compile_min_s <= truth.compile_s <= summary.compile_s
    assert all(item.outcome in (COMPILED, CACHED) for item in summary.items)


def test_failures_unfinished_and_parallel_summary() -> None:
    stamp = "2025-01-10 08:00:00.000000"
    later = "2025-01-10 08:05:00.000000"
    texts = [
        f"{stamp}: 1 INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc a",
        "Compiler status FAIL",
        f"{later}: 1 ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc']",
        f"{later}: 1 INFO ||NEURON_CC_WRAPPER||: Call compiler with cmd: neuronx-cc b",
        "Total graphs: 7",
        "Total successful compilations: 5",
        "Total failed compilations: 2",
    ]
    summary = compile_summary(_lines(texts))
    outcomes = [item.outcome for item in summary.items]
    assert outcomes.count(FAILED) == 1
    assert outcomes.count(UNFINISHED) == 1
    assert summary.failures == 1
    assert summary.unfinished == 1
    assert summary.compilations == 2
    assert (summary.parallel_graphs, summary.parallel_succeeded, summary.parallel_failed) == (
        7,
        5,
        2,
    )
    assert summary.compile_s == pytest.approx(300.0)
    assert summary.start_time == dt.datetime(2025, 1, 10, 8, 0)


def test_no_compiler_lines() -> None:
    summary = compile_summary(_lines(["hello", "world"]))
    assert not summary.found
    assert compile_recurrence([]).recurring_s is None


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 50)), max_size=20))
def test_union_length_is_at_most_the_sum_and_at_least_the_longest(pairs) -> None:
    intervals = [(a, a + b) for a, b in pairs]
    total = union_length(intervals)
    assert total <= sum(b - a for a, b in intervals) + 1e-9
    assert total >= max((b - a for a, b in intervals), default=0.0) - 1e-9


@settings(max_examples=80)
@given(st.lists(st.text(max_size=60), max_size=30))
def test_any_text_gives_a_summary(texts: list[str]) -> None:
    summary = compile_summary(_lines(texts))
    assert summary.compilations >= summary.failures - len(texts)
