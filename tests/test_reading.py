"""Reading a named log ahead (``importers.reading.read_ahead``): what ``trntui import`` does
while Python loads Polars and the parsers."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trntui.core.errors import InputFileError
from trntui.importers import reading


def test_the_next_read_takes_the_read_ahead(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    first = b"iteration 1\niteration 2\n"
    log.write_bytes(first)
    reading.read_ahead(log)
    reading._AHEAD[os.path.abspath(log)].result(timeout=10)  # the read is done
    log.write_bytes(b"changed afterwards\n")
    source = reading.read_source(log)
    assert source.data == first  # what was read ahead, with its own hash
    assert source.sha256 == hashlib.sha256(first).hexdigest()
    again = reading.read_source(log)  # taken once: the next read reads the file
    assert again.data == b"changed afterwards\n"


@pytest.mark.parametrize("odd", [b"\xc3\xa9", b"\x00"], ids=["not-ascii", "nul"])
@pytest.mark.parametrize("at", [0, 5, 300_000, -1], ids=["first", "early", "later-piece", "last"])
def test_plain_says_whether_every_byte_is_ascii_and_not_nul(
    tmp_path: Path, odd: bytes, at: int
) -> None:
    """``plain`` is false for a byte that is not ASCII or is NUL anywhere (in any piece hashed),
    true for plain text; the same for a file read whole and one read in chunks."""
    import io

    text = b"".join(b"line %07d ok\n" % number for number in range(40_000))  # 640 kB
    where = at % len(text)
    cases = {text: True, text[:where] + odd + text[where:]: False}
    for data, plain in cases.items():
        log = tmp_path / "train.log"
        log.write_bytes(data)
        source = reading.read_source(log)
        assert (source.plain, source.sha256) == (plain, hashlib.sha256(data).hexdigest())
        _, digest, _ = reading._read_checked(io.BytesIO(data), log)
        assert digest.result() == (hashlib.sha256(data).hexdigest(), plain)


def test_a_read_ahead_error_is_raised_by_the_read_that_takes_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    reading.read_ahead(empty)
    with pytest.raises(InputFileError, match="file is empty"):
        reading.read_source(empty)


def test_a_named_pipe_read_ahead_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    reading.read_ahead(fifo)
    with pytest.raises(InputFileError, match="named pipe"):
        reading.read_source(fifo)


def test_cli_import_reads_the_named_log_once_ahead(tmp_path: Path) -> None:
    """``trntui import`` hands the first named log to a background read before loading the
    parsers, and the import uses that read (the file is read once)."""
    from tests import loggen

    log = tmp_path / "megatron.log"
    loggen.write_megatron(log)
    project = tmp_path / "project"
    script = f"""
import sys, threading
import trntui.importers.reading as reading
from trntui.cli import main
reads = []
original = reading._read
def counted(path):
    reads.append(threading.current_thread().name)
    return original(path)
reading._read = counted
assert main(["init", {str(project)!r}]) == 0
assert "polars" not in sys.modules
code = main(["import", {str(project)!r}, {str(log)!r}])
print(code, reads)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.splitlines()[-1] == "0 ['trntui-read-ahead']"


def test_the_hash_leaves_no_thread_the_exit_waits_for(tmp_path: Path) -> None:
    """A log read on the command's own thread (a folder's logs) is hashed on a daemon thread:
    an idle worker the interpreter waits for at exit would keep a headless command from
    ending at once (``cli._end_at_once``). In a process of its own: a hashing thread first
    started by another test's read-ahead thread would be a daemon by inheritance."""
    log = tmp_path / "train.log"
    log.write_bytes(b"iteration 1\n" * 1000)
    script = (
        "import sys, threading\n"
        "from trntui.importers.reading import read_source\n"
        "print(read_source(sys.argv[1]).sha256)\n"
        "print([t.daemon for t in threading.enumerate() if t.name.startswith('trntui-hash')])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, text=True, check=True
    )
    digest, daemons = result.stdout.splitlines()
    assert digest == hashlib.sha256(log.read_bytes()).hexdigest()
    assert daemons == "[True]", daemons


def test_the_hasher_runs_calls_in_order_and_hands_back_their_errors() -> None:
    done: list[int] = []
    futures = [reading._HASHER.submit(done.append, n) for n in range(50)]
    failed = reading._HASHER.submit(int, "not a number")
    assert [f.result(timeout=10) for f in futures] == [None] * 50
    assert done == list(range(50))
    with pytest.raises(ValueError, match="not a number"):
        failed.result(timeout=10)
