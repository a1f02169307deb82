"""Steady tokens per second, which MFU needs, from what each log states."""

from __future__ import annotations

import pytest

from tests import MLPERF_DATA, SAMPLE
from trntui.core.run_facts import run_facts
from trntui.importers import import_file


def test_sequences_per_second_times_the_stated_sequence_length() -> None:
    """The neuronx-distributed example prints seq/s and echoes SEQ_LEN: its tokens/s was
    'missing' for MFU though both are in the log."""
    run = import_file(SAMPLE / "logs" / "trn3-example" / "trn3-run1.log")
    length = int(run.metadata.protocol["sequence_length"])
    facts = run_facts(run)
    assert facts.throughput_unit == "samples/s" and facts.steady_throughput
    assert facts.steady_tokens_per_s == pytest.approx(facts.steady_throughput * length)
    assert any("sequence length the log states" in note for note in facts.notes)


def test_a_throughput_counted_in_tokens_is_the_tokens_per_second() -> None:
    """MLPerf GPT-3 counts its progress in tokens (epoch_count): tokens/s was 'missing'."""
    folder = MLPERF_DATA / "v4.0" / "Google" / "results" / "cloud-tpu-v5p-1024-maxtext" / "gpt3"
    facts = run_facts(import_file(sorted(folder.glob("result_*.txt"))[0]))
    assert facts.throughput_unit == "tokens/s" and facts.steady_throughput
    assert facts.steady_tokens_per_s == facts.steady_throughput
