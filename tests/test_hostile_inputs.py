"""Issue 16, cases 8, 9, 13 and 14: bad input gives one line naming the file, never a
traceback, never a half-written project, and nothing from a file reaches the terminal raw.

- 8: JSON nested without end (``[[[[...``) in every place an importer parses JSON.
- 9: the system refusing a write: a file-size limit (``ulimit -f``, in a subprocess), a full
  disk (ENOSPC) and a permission (EACCES), during import and save.
- 13: a log of one enormous line is refused after reading at most the line cap (lowered for
  the test), with the memory of the process to show it was never held whole.
- 14: hand-edited timelines (NaN, inf, time running back, negative steps) are suspect, with
  which run and why; CR-only line ends are line breaks; control characters are escaped.

Plus a fuzz of a real log and a project file: only ``UserError`` s, the project unchanged on
every refusal.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import MLPERF_DATA, SAMPLE, copy_sample
from tests.loggen import MegatronSpec, write_megatron
from trntui.cli import main
from trntui.importers import import_file
from trntui.store.project import init_project
from trntui.store.runs import runs_path, timeline_path

SUBMISSION = MLPERF_DATA / "v4.0" / "smc"
SYSTEM = "8xSMC-H100-SXM-80GB"
LOG = (
    SUBMISSION / "results" / SYSTEM / "llama2_70b_lora" / "result_4958-240509214046930092659_8.txt"
)
DEEP = "[" * 100_000 + "]" * 100_000
"""Far deeper than Python's parser can recurse."""
NEAR_LIMIT = "[" * 900 + "]" * 900
"""Just under Python's recursion limit: parses, then breaks whatever walks it next."""


# --- helpers -----------------------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``trntui ARGV`` in this process: exit code, stdout, stderr. An exception that is not a
    ``UserError`` escapes ``main`` and fails the test (that is a traceback for a user)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_cli(*argv: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``trntui ARGV`` in a fresh interpreter, after ``prelude`` (limits, a lowered cap)."""
    code = textwrap.dedent(prelude) + "\nimport sys\nfrom trntui.cli import main\n"
    code += "sys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-B", "-c", code, *argv],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a project but its lock, by relative path."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".trntui.lock"
    }


def no_temp_files(root: Path) -> bool:
    return not any(".trntui-tmp-" in path.name for path in root.rglob("*"))


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A project with one run already stored (the Megatron log of seed 1)."""
    root = init_project(tmp_path / "project", "hostile")
    log = tmp_path / "first.log"
    write_megatron(log, MegatronSpec(seed=1, train_iters=200, crash_at=None, stall_at=None))
    assert main(["import", str(root), str(log), "--set", "first"]) == 0
    assert main(["size", str(root), "first", "1", "8", "--source", "test"]) == 0
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project whose contents no command may change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("untouched\n")
    return folder


# --- case 8: deeply nested JSON ----------------------------------------------------------


def _trainer_state(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "trainer_state.json"
    path.write_text(
        '{"max_steps": 1,\n "log_history": [\n  {"step": 1, "loss": 1.0, "x": ' + DEEP + "}\n]}\n"
    )
    return path, 1


def _mllog_line(tmp_path: Path) -> tuple[Path, int]:
    lines = LOG.read_text().splitlines()
    lines.insert(5, ':::MLLOG {"key": "x", "time_ms": 1, "value": ' + NEAR_LIMIT + "}")
    path = tmp_path / "result_deep.txt"
    path.write_text("\n".join(lines) + "\n")
    return path, 6


def _jsonl(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "loss": ' + DEEP + "}\n")
    return path, 2


@pytest.mark.parametrize("make", [_trainer_state, _mllog_line])
def test_deeply_nested_json_in_a_log_is_refused_naming_file_and_line(
    make, stored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, line = make(tmp_path)
    before = snapshot(stored)
    code, out, err = cli(capsys, "import", str(stored), str(log))
    assert code == 1
    assert f"{log}:{line}: JSON nested more than 64 levels deep" in out
    assert "Traceback" not in out + err
    assert snapshot(stored) == before


def test_deeply_nested_jsonl_table_is_refused_naming_its_line(tmp_path: Path) -> None:
    from trntui.core.errors import InputFileError
    from trntui.importers.mapped import read_table

    path, line = _jsonl(tmp_path)
    with pytest.raises(InputFileError, match="nested more than 64 levels") as caught:
        read_table(path)
    assert (caught.value.path, caught.value.line) == (str(path), line)


def test_deeply_nested_neuron_monitor_report_is_refused_naming_its_line(tmp_path: Path) -> None:
    from trntui.core.errors import InputFileError
    from trntui.importers.neuron_monitor import import_neuron_monitor

    path = tmp_path / "capture.jsonl"
    path.write_text('{"neuron_runtime_data": [], "x": ' + DEEP + "}\n")
    with pytest.raises(InputFileError, match="nested more than 64 levels") as caught:
        import_neuron_monitor(path)
    assert (caught.value.path, caught.value.line) == (str(path), 1)


@pytest.mark.parametrize("where", ["systems", "sysjson", "scaling"])
def test_deep_json_beside_or_inside_an_mlperf_log_gives_no_traceback(
    where: str, stored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The submission's ``systems/<system>.json``, a ``:::SYSJSON`` line and ``scaling.json``
    are read with the log: a bad one is a note (size not taken) or a one-line refusal."""
    submission = tmp_path / "smc"
    shutil.copytree(SUBMISSION, submission)
    log = submission / LOG.relative_to(SUBMISSION)
    if where == "systems":
        (submission / "systems" / f"{SYSTEM}.json").write_text('{"number_of_nodes": ' + DEEP + "}")
    elif where == "sysjson":
        lines = log.read_text().splitlines()
        lines.insert(1, ':::SYSJSON {"number_of_nodes": ' + DEEP + "}")
        log.write_text("\n".join(lines) + "\n")
    else:
        (log.parent / "scaling.json").write_text('{"scaling_factor": ' + DEEP + "}")
    before = snapshot(stored)
    code, out, err = cli(capsys, "import", str(stored), str(log))
    assert "Traceback" not in out + err
    if where == "scaling":
        assert code == 1
        assert "scaling.json:1: JSON nested more than 64 levels deep" in out
        assert snapshot(stored) == before
    else:
        assert code == 0, out + err
    if where == "systems":
        notes = import_file(log).metadata.notes
        assert any(f"systems/{SYSTEM}.json" in note and "nested" in note for note in notes)


# --- case 9: the system refuses a write ----------------------------------------------------


def test_file_size_limit_during_import_names_the_file_and_changes_nothing(
    stored: Path, tmp_path: Path, outside: Path
) -> None:
    """``ulimit -f``: the kernel refuses writes past the limit with EFBIG (SIGXFSZ ignored,
    as a shell's ``ulimit`` leaves it for a process that handles it)."""
    before = snapshot(stored)
    outside_before = snapshot(outside)
    result = run_cli(
        "import",
        str(stored),
        str(LOG),
        prelude="""
            import resource, signal
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        """,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert "cannot be written (File too large); nothing was changed" in result.stdout
    assert str(stored / "runs" / "timelines") in result.stdout
    assert snapshot(stored) == before
    assert no_temp_files(stored)
    assert snapshot(outside) == outside_before


def _fail_fsync_of(monkeypatch: pytest.MonkeyPatch, folder: Path, error: int) -> None:
    """Make flushing a new file in ``folder`` fail as a full disk or a permission would."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        target = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if target.parent == folder and target.name.startswith(".trntui-tmp-"):
            raise OSError(error, os.strerror(error))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EACCES, errno.EFBIG])
def test_runs_table_that_cannot_be_written_leaves_the_stored_runs_whole(
    error: int,
    stored: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The new timeline is written, then the runs table fails: the timeline is removed again,
    the old table and timelines are as they were, no temporary file is left."""
    before = snapshot(stored)
    _fail_fsync_of(monkeypatch, runs_path(stored).parent, error)
    log = tmp_path / "second.log"
    write_megatron(log, MegatronSpec(seed=2, train_iters=200, crash_at=None, stall_at=None))
    code, out, err = cli(capsys, "import", str(stored), str(log))
    assert code == 1
    assert f"{runs_path(stored)}: cannot be written ({os.strerror(error)})" in out
    assert "Traceback" not in out + err
    assert snapshot(stored) == before
    assert no_temp_files(stored)


async def test_the_app_shows_a_full_disk_on_import_as_one_line(
    stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import dialog stores in a worker: the same ``StorageError`` is its message, and
    the project is as it was."""
    from tests import SIZE
    from tests.test_ui_runs import message_of, open_import
    from tests.ui_support import settle
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp

    log = tmp_path / "second.log"
    write_megatron(log, MegatronSpec(seed=2, train_iters=200, crash_at=None, stall_at=None))
    before = snapshot(stored)
    with Project.open(stored) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            screen = await open_import(pilot, app, str(log))
            await settle(pilot)
            _fail_fsync_of(monkeypatch, runs_path(stored).parent, errno.ENOSPC)
            await pilot.press("ctrl+s")
            await settle(pilot)
            message = message_of(screen)
    assert message.startswith("Import failed: ")
    assert f"{runs_path(stored)}: cannot be written (No space left on device)" in message
    assert snapshot(stored) == before
    assert no_temp_files(stored)


def test_read_only_runs_folder_refuses_other_writes_in_one_line(
    stored: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only ``runs/`` (EACCES when creating the temporary file; simulated, as the tests
    may run as root, for whom permissions do not apply): ``runs size`` says which file."""
    real_open = os.open

    def refuse(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if flags & os.O_CREAT and str(path).startswith(".trntui-tmp-"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    before = snapshot(stored)
    code, out, err = cli(capsys, "size", str(stored), "first", "1", "8", "--source", "test")
    assert code == 2
    assert err.count("\n") == 1
    assert "runs/sets.toml: cannot be written (Permission denied)" in err
    assert "Traceback" not in out + err
    assert snapshot(stored) == before


def test_unreadable_log_is_one_line(
    stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    log = tmp_path / "locked.log"
    write_megatron(log, MegatronSpec(seed=3, train_iters=200, crash_at=None, stall_at=None))
    real_open = os.open

    def refuse(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == log:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    before = snapshot(stored)
    code, out, err = cli(capsys, "import", str(stored), str(log))
    assert code == 1
    assert f"{log}: cannot be read (Permission denied)" in out
    assert "Traceback" not in out + err
    assert snapshot(stored) == before


# --- case 13: memory -----------------------------------------------------------------------


def test_a_log_of_one_huge_line_is_refused_without_being_held(stored: Path, tmp_path: Path) -> None:
    """64 MB in one line, under a line cap lowered to 1 MB: refused naming the file and the
    line, and the process's peak memory grows by far less than the file (it was read once in
    1 MB pieces, never whole and never split)."""
    log = tmp_path / "result_one_line.txt"
    with log.open("wb") as handle:
        handle.write(b':::MLLOG {"key": "x", "time_ms": 1, "value": "')
        block = b"x" * (1 << 20)
        for _ in range(64):
            handle.write(block)
        handle.write(b'"}')
    before = snapshot(stored)
    report = tmp_path / "peak.txt"
    result = run_cli(
        "import",
        str(stored),
        str(log),
        prelude=f"""
            import atexit, resource
            import trntui.importers.reading as base
            from trntui.cli import main as _load_everything
            base.MAX_LINE_BYTES = 1 << 20
            start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            def report():
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                open({str(report)!r}, "w").write(f"{{start}} {{peak}}")
            atexit.register(report)
        """,
    )
    assert result.returncode == 1
    assert f"{log}:1: line is longer than 1,048,576 bytes" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    start_kb, peak_kb = map(int, report.read_text().split())
    assert peak_kb - start_kb < 24 * 1024, "the 64 MB line was held in memory"
    assert snapshot(stored) == before


def test_the_line_cap_names_the_long_line(tmp_path: Path, monkeypatch) -> None:
    import trntui.importers.reading as base
    from trntui.core.errors import InputFileError

    monkeypatch.setattr(base, "MAX_LINE_BYTES", 1000)
    log = tmp_path / "long.log"
    log.write_text("short\n" * 3 + "y" * 5000 + "\nshort\n")
    with pytest.raises(InputFileError, match="longer than 1,000 bytes") as caught:
        base.read_source(log)
    assert caught.value.line == 4


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.integers(0, 3000), min_size=1, max_size=12),
    cap=st.integers(1, 2500),
    final_break=st.booleans(),
)
def test_the_line_cap_check_from_windows_agrees_with_reading_every_line(
    lines: list[int], cap: int, final_break: bool
) -> None:
    """The check that reads windows around a point every half cap (before a log is read whole)
    says a text fits exactly when no line is longer than the cap, and the read names the same
    first long line as the chunked reader."""
    import io

    import trntui.importers.reading as base

    text = b"\n".join(b"x" * length for length in lines) + (b"\n" if final_break else b"")
    fits = base._lines_fit(len(text), cap, lambda start, end: text[start:end])
    assert fits == (max(lines) <= cap)
    original = base.MAX_LINE_BYTES
    base.MAX_LINE_BYTES = cap
    try:
        if fits:
            data, digest, _ = base._read_checked(io.BytesIO(text), Path("t.log"))
            assert data == text and digest.result() == (hashlib.sha256(text).hexdigest(), True)
        else:
            with pytest.raises(base.InputFileError) as caught:
                base._read_checked(io.BytesIO(text), Path("t.log"))
            assert caught.value.line == next(i for i, n in enumerate(lines, 1) if n > cap)
    finally:
        base.MAX_LINE_BYTES = original


# --- case 14: hand-edited timelines, CR-only lines, control characters ---------------------


def _edit_timeline(root: Path, run_id: str, edit) -> None:
    path = timeline_path(root, run_id)
    frame = pl.read_parquet(path)
    edit(frame).write_parquet(path)


def _row_mask(frame: pl.DataFrame, index: int) -> pl.Expr:
    return pl.int_range(pl.len()) == index


def _steps_index(frame: pl.DataFrame) -> list[int]:
    return [i for i, kind in enumerate(frame["kind"].cast(pl.String)) if kind == "step"]


EDITS = {
    "nan time": (
        lambda f: f.with_columns(
            pl.when(_row_mask(f, _steps_index(f)[3]))
            .then(float("nan"))
            .otherwise(pl.col("t_s"))
            .alias("t_s")
        ),
        "t_s is nan",
    ),
    "infinite time": (
        lambda f: f.with_columns(
            pl.when(_row_mask(f, _steps_index(f)[3]))
            .then(float("inf"))
            .otherwise(pl.col("t_s"))
            .alias("t_s")
        ),
        "t_s is inf",
    ),
    "time backwards": (
        lambda f: f.with_columns(
            pl.when(_row_mask(f, _steps_index(f)[5]))
            .then(pl.lit(1.0))
            .otherwise(pl.col("t_s"))
            .alias("t_s")
        ),
        "time runs backwards",
    ),
    "negative step": (
        lambda f: f.with_columns(
            pl.when(_row_mask(f, _steps_index(f)[2]))
            .then(pl.lit(-5, dtype=pl.Int64))
            .otherwise(pl.col("step"))
            .alias("step")
        ),
        "step is negative (-5)",
    ),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_hand_edited_timeline_is_suspect_with_which_run_and_why(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_sample(tmp_path / SAMPLE.name)
    runs = pl.read_parquet(runs_path(root))
    run_id = runs.filter(pl.col("set_name") == "trn3-example")["run_id"][0]
    edit, why = EDITS[name]
    _edit_timeline(root, run_id, edit)

    code, out, err = cli(capsys, "runs", str(root))
    assert code == 0 and "Traceback" not in out + err
    (line,) = [text for text in out.splitlines() if text.strip().startswith(run_id)]
    assert "suspect" in line
    assert f"suspect, not counted: {why}" in " ".join(out.split())

    code, out, err = cli(capsys, "estimate", str(root))
    assert code == 0 and "Traceback" not in out + err
    assert f"1 suspect run left out: {run_id}" in " ".join(out.split())
    assert "nan" not in out.lower().replace("nanosec", "")


def test_a_log_with_cr_only_line_ends_reads_like_the_same_log_with_lf(tmp_path: Path) -> None:
    lf = tmp_path / "lf" / "result_0.txt"
    cr = tmp_path / "cr" / "result_0.txt"
    for path in (lf, cr):
        path.parent.mkdir()
    text = LOG.read_bytes().replace(b"\r\n", b"\n")
    lf.write_bytes(text)
    cr.write_bytes(text.replace(b"\n", b"\r"))
    expected = import_file(lf)
    read = import_file(cr)
    assert read.timeline.height > 20
    assert read.timeline.equals(expected.timeline)
    assert read.metadata.sha256 == hashlib.sha256(cr.read_bytes()).hexdigest()


def test_control_characters_from_files_never_reach_the_terminal(
    stored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A set name in a hand-edited runs table, a log's file name and a fact from a log, each
    with terminal control sequences: the CLI shows them escaped, in text and in errors."""
    evil = "evil\x1b[2J\x1b]52;c;aGk=\x07\x9b31m\u202e"
    runs = pl.read_parquet(runs_path(stored))
    runs.with_columns(pl.lit(evil).alias("set_name")).write_parquet(runs_path(stored))
    missing = tmp_path / f"log{evil}.txt"
    outputs = []
    for argv in (("runs", str(stored)), ("import", str(stored), str(missing))):
        _code, out, err = cli(capsys, *argv)
        outputs.append(out + err)
    shown = "".join(outputs)
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in shown
    assert "evil\\x1b[2J\\x1b]52;c;aGk=\\x07\\x9b31m\\u202e" in shown


async def test_the_app_shows_a_hostile_set_name_escaped(stored: Path, tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from tests import SIZE
    from tests.ui_support import settle
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp

    runs = pl.read_parquet(runs_path(stored))
    runs.with_columns(pl.lit("x\x1b[2J[/]").alias("set_name")).write_parquet(runs_path(stored))
    with Project.open(stored) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await settle(pilot)
            table = app.screen.query_one("#runs", DataTable)
            cell = table.get_row_at(0)[0]
            assert str(cell) == "x\\x1b[2J[/]"


# --- the fuzz: a real log and a project file, mutated ---------------------------------------

_MUTATIONS = st.sampled_from(
    [
        "flip",
        "truncate",
        "deep",
        "control",
        "cr",
        "nan",
        "long_line",
        "drop_lines",
        "nul",
    ]
)


def _mutate(data: bytes, how: str, at: float, byte: int) -> bytes:
    cut = int(len(data) * at)
    line_start = data.rfind(b"\n", 0, cut) + 1
    if how == "flip":
        return data[:cut] + bytes([byte]) + data[cut + 1 :]
    if how == "truncate":
        return data[:cut]
    if how == "deep":
        deep = b':::MLLOG {"key": "x", "value": ' + DEEP.encode() + b"}\n"
        return data[:line_start] + deep + data[line_start:]
    if how == "control":
        return data[:cut] + b"\x1b[2J\x07\x9b" + data[cut:]
    if how == "cr":
        return data.replace(b"\n", b"\r")
    if how == "nan":
        return data.replace(b'"time_ms": 1', b'"time_ms": NaN', 1 + byte % 5)
    if how == "long_line":
        return data[:line_start] + b"z" * 100_000 + data[line_start:]
    if how == "drop_lines":
        return data[:line_start] + data[cut:]
    return data[:cut] + b"\x00" + data[cut:]


_PROJECT_FILES = ["trntui.toml", "runs/sets.toml", "runs/runs.parquet"]


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    log_mutation=_MUTATIONS,
    log_at=st.floats(0.0, 1.0),
    byte=st.integers(0, 255),
    project_file=st.sampled_from([None, *_PROJECT_FILES]),
    project_at=st.floats(0.0, 1.0),
)
def test_fuzz_mutated_log_and_project_file_give_only_user_errors(
    stored: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    log_mutation: str,
    log_at: float,
    byte: int,
    project_file: str | None,
    project_at: float,
) -> None:
    import trntui.importers.reading as base

    monkeypatch.setattr(base, "MAX_LINE_BYTES", 64 << 10)
    root = tmp_path / "fuzzed"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(stored, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    if project_file is not None:
        path = root / project_file
        data = path.read_bytes()
        path.write_bytes(_mutate(data, "flip", project_at, byte))
    log = tmp_path / "logs" / LOG.name
    log.parent.mkdir(exist_ok=True)
    log.write_bytes(_mutate(LOG.read_bytes(), log_mutation, log_at, byte))
    capsys.readouterr()
    before = snapshot(root)

    code = main(["import", str(root), str(log)])  # anything but a UserError escapes: a bug
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    for raw in ("\x1b", "\x07", "\x9b"):
        assert raw not in out + err
    if code != 0:
        assert snapshot(root) == before, "a refused import changed the project"
        assert no_temp_files(root)
    main(["runs", str(root)])
    capsys.readouterr()


@pytest.mark.parametrize("name", ["trntui.toml", "prices/quotes.toml", "runs/sets.toml"])
def test_toml_nested_thousands_deep_is_one_line(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """tomllib recurses per level: 2,000 nested arrays ended in a RecursionError traceback."""
    root = copy_sample(tmp_path / "sample")
    path = root / name
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\ndeep = " + "[" * 2000 + "]" * 2000 + "\n")
    before = path.read_bytes()
    assert main(["estimate", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"{name}: arrays or tables nested too deeply to read" in err
    assert "Traceback" not in err and path.read_bytes() == before


@pytest.mark.parametrize("ending", [b"\r", b"\r\n"])
def test_a_cr_only_log_of_each_format_is_recognised(tmp_path: Path, ending: bytes) -> None:
    """The sample's neuronx-distributed log with CR-only line ends was 'not recognised' (the
    format sniffers anchor on LF), though `--format nxd` read it like the LF log."""
    from trntui.importers import detect_format

    source = SAMPLE / "logs" / "trn3-example" / "trn3-run1.log"
    megatron = tmp_path / "megatron.log"
    write_megatron(megatron, MegatronSpec(train_iters=200))
    for log in (source, megatron):
        plain = log.read_bytes().replace(b"\r\n", b"\n")
        converted = tmp_path / f"{log.stem}-converted.log"
        converted.write_bytes(plain.replace(b"\n", ending))
        assert detect_format(converted) == detect_format(log)
        expected = import_file(log)
        assert import_file(converted).timeline.equals(expected.timeline)


def test_an_nxd_log_cut_off_mid_line_imports_without_that_line(tmp_path: Path) -> None:
    """A job killed while writing leaves a half step line at the end, without a line break:
    the whole log was refused, so the crashed run could not be recorded as a failure. The same
    malformed line with a line break after it (or in the middle) is still refused."""
    from trntui.core.errors import InputFileError
    from trntui.core.run_facts import run_facts

    source = (SAMPLE / "logs" / "trn3-example" / "trn3-run1.log").read_bytes()
    lines = source.splitlines(keepends=True)
    at = next(n for n, line in enumerate(lines) if b"step_loss" in line and n > 60)
    cut = b"".join(lines[:at]) + lines[at][:40]
    log = tmp_path / "killed.log"
    log.write_bytes(cut)
    run = import_file(log)
    whole = tmp_path / "whole.log"
    whole.write_bytes(b"".join(lines[:at]))
    assert run.timeline.equals(import_file(whole).timeline)
    assert any("cut off" in note and f"({at + 1})" in note for note in run.metadata.notes)
    assert run_facts(run, None, None, None).status != "succeeded"
    log.write_bytes(cut + b"\n")
    with pytest.raises(InputFileError) as refused:
        import_file(log)
    assert refused.value.line == at + 1


def test_the_same_run_twice_in_the_runs_table_is_refused_naming_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A duplicated row counted the run twice (11/11 succeeded; the MLPerf score moved)."""
    root = copy_sample(tmp_path / "sample")
    path = runs_path(root)
    table = pl.read_parquet(path)
    pl.concat([table, table[2:3]]).write_parquet(path)
    assert main(["runs", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"row {table.height + 1} repeats run_id {table['run_id'][2]!r}" in err


def test_a_run_set_stated_twice_is_refused_naming_the_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second [[set]] of the same name silently replaced the first's size."""
    root = copy_sample(tmp_path / "sample")
    path = root / "runs" / "sets.toml"
    text = path.read_text()
    first = text.index("[[set]]")
    block = text[first:].split("\n\n")[0]
    path.write_text(text.rstrip("\n") + "\n\n" + block + "\n")
    assert main(["runs", str(root)]) == 2
    err = capsys.readouterr().err
    line = (
        len(text.rstrip("\n").splitlines())
        + 2
        + block.splitlines().index(next(x for x in block.splitlines() if x.startswith("name = ")))
    )
    assert f"sets.toml:{line}: run set" in err and "is stated twice" in err


def _with_loss(tmp_path: Path, name: str, nan_steps: range) -> Path:
    """The sample's first Trainium3 log with the loss of the given step lines set to nan."""
    import re

    lines = (SAMPLE / "logs" / "trn3-example" / "trn3-run1.log").read_text().splitlines(True)
    count = 0
    out = []
    for line in lines:
        if "step_loss" in line:
            count += 1
            if count in nan_steps:
                line = re.sub(r"step_loss : \S+", "step_loss : nan", line)
        out.append(line)
    path = tmp_path / name
    path.write_text("".join(out))
    return path


def test_a_run_whose_loss_went_nan_is_a_failed_run_not_a_suspect_one(tmp_path: Path) -> None:
    """A diverged run (loss nan to the end) was 'suspect, not counted': left out of the
    estimate as if it never ran, so the failure share was understated. It is a failed run."""
    from trntui.core.estimate import estimate
    from trntui.core.run_facts import run_facts
    from trntui.store.estimate_context import derive_and_store_context
    from trntui.store.run_import import import_paths

    diverged = _with_loss(tmp_path, "diverged.log", range(150, 10_000))
    facts = run_facts(import_file(diverged))
    assert facts.status == "aborted" and not facts.counts_as_completed
    assert any(n.startswith("diverged: the training loss is nan") for n in facts.notes)
    blip = _with_loss(tmp_path, "blip.log", range(150, 153))
    recovered = run_facts(import_file(blip))
    assert recovered.status == "succeeded"
    assert any("later steps log a finite loss again" in n for n in recovered.notes)

    root = copy_sample(tmp_path / "sample")
    before = estimate(derive_and_store_context(root))
    (outcome,) = import_paths(root, [diverged], set_name="trn3-example")
    assert outcome.outcome == "added"
    after = estimate(derive_and_store_context(root))
    target = next(t for t in after.targets if t.target.run_set == "trn3-example")
    share = target.input("failed_fraction")
    assert (
        share.value == pytest.approx(1 / 4)
        and "1 of 4 runs did not count" in share.provenance.detail
    )
    assert target.total_usd > before.target(target.name).total_usd


@pytest.mark.parametrize(
    ("content", "says"),
    [("", "schema_version is missing"), ("schema_version = 9\n", "unsupported schema_version 9")],
)
@pytest.mark.parametrize("name", ["runs/sets.toml", "runs/quality.toml"])
def test_a_schema_version_missing_or_unknown_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str, name: str
) -> None:
    """An emptied sets.toml said 'unsupported schema_version None', with no line."""
    root = copy_sample(tmp_path / "sample")
    (root / name).write_text(content)
    assert main(["runs", str(root)]) == 2
    assert f"{name}:1: {says}" in capsys.readouterr().err
