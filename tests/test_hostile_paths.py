"""Hostile paths (issue 16, cases 2, 3, 4, 7, 10, 11): links, FIFOs, hand-edited ids and a
deleted lock file never make trntui write, truncate or delete outside the project, never hang,
never print a traceback, and never lose what was stored.

Every test keeps a folder ``outside`` beside the project, with a file in it, and checks that
its contents and times are exactly as before (``_tree``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from tests import HANG_GUARD_S, REPO, loggen
from tests.telemetry_gen import nvidia_smi_lines
from trntui.cli import main
from trntui.core.errors import UserError
from trntui.store import runs as runs_store
from trntui.store import scenarios as scenarios_store
from trntui.store.project import LOCK_FILE, Project, ReadOnlyProject
from trntui.store.run_import import import_paths
from trntui.store.runs import load_runs, remove_run
from trntui.store.scenarios import check_name, load_scenario, scenario_path
from trntui.store.telemetry import captures_path, load_captures

VICTIM_TEXT = b"a file that is not the project's: trntui must leave it alone\n"


def _tree(folder: Path) -> dict[str, tuple[str, bytes | None, int]]:
    """Every entry below ``folder`` (and the folder itself): kind, content, mtime."""
    entries = {}
    for path in [folder, *sorted(folder.rglob("*"))]:
        info = path.lstat()
        if path.is_symlink():
            kind, content = "link", os.readlink(path).encode()
        elif path.is_dir():
            kind, content = "dir", None
        else:
            kind, content = "file", path.read_bytes()
        entries[str(path.relative_to(folder))] = (kind, content, info.st_mtime_ns)
    return entries


def _stored(project: Path) -> dict[str, tuple[str, bytes | None, int]]:
    """What a project stores: ``_tree`` but the lock file (rewritten by every writer)."""
    entries = _tree(project)
    entries.pop(LOCK_FILE, None)
    entries.pop(".", None)  # the folder's own time changes with the lock file's
    return entries


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding a file trntui must never touch."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_bytes(VICTIM_TEXT)
    return folder


@pytest.fixture
def nxd_log(tmp_path: Path) -> Path:
    path = tmp_path / "logs" / "nxd.log"
    path.parent.mkdir()
    loggen.write_nxd(path, loggen.NxdSpec())
    return path


@pytest.fixture
def second_log(tmp_path: Path) -> Path:
    path = tmp_path / "logs2" / "megatron.log"
    path.parent.mkdir()
    loggen.write_megatron(path)
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in this process: its exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    return code, out, err


def _cli_process(*argv: str, timeout: float = HANG_GUARD_S) -> subprocess.CompletedProcess[str]:
    """Run the CLI in another process; a hang fails the test instead of stalling the suite."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = "import sys; from trntui.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"trntui {' '.join(argv)} hung")
    assert "Traceback" not in done.stderr + done.stdout
    return done


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("trntui: error: ")
    return lines[0]


# --- case 2: a failed `scenario save --replace` keeps the saved snapshot -----------------------


def test_failed_scenario_replace_leaves_the_saved_snapshot_whole(
    sample_dir: Path, outside: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    path = scenario_path(sample_dir, "as-measured")
    saved = path.read_bytes()
    before = load_scenario(sample_dir, "as-measured").estimate()
    outside_before = _tree(outside)
    render = scenarios_store.render_scenario

    def unreadable(*args, **kwargs) -> str:
        # A rendering that parses but cannot be rebuilt (here: its date is missing).
        text = render(*args, **kwargs)
        return "\n".join(line for line in text.splitlines() if not line.startswith("today ="))

    # save_scenario renders through the module it lives in
    import trntui.store.scenarios.write as write_module

    monkeypatch.setattr(write_module, "render_scenario", unreadable)
    code, _, err = _cli(capsys, "scenario", "save", str(sample_dir), "as-measured", "--replace")
    assert path.read_bytes() == saved
    assert code == 2
    line = _one_error_line(err)
    assert "not saved" in line and "unchanged" in line
    monkeypatch.undo()
    assert load_scenario(sample_dir, "as-measured").estimate() == before
    assert not list((sample_dir / "scenarios").glob(".trntui-tmp-*"))
    assert _tree(outside) == outside_before


def test_scenario_note_that_is_not_text_is_refused_and_keeps_the_snapshot(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A note from a terminal that sent bytes that are not UTF-8 (``$'\\xff'``)."""
    path = scenario_path(sample_dir, "as-measured")
    saved = path.read_bytes()
    code, _, err = _cli(
        capsys,
        "scenario", "save", str(sample_dir), "as-measured", "--replace", "--note", "bad \udcff",
    )  # fmt: skip
    assert code == 2
    assert "not valid text" in _one_error_line(err)
    assert path.read_bytes() == saved


# --- case 3: `.trntui.lock` (or a data file) as a link is never followed -----------------------


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "dangling"])
def test_lock_file_as_a_link_is_never_followed(
    new_project: Path, outside: Path, nxd_log: Path, capsys, dangling: bool
) -> None:
    target = outside / ("created-by-trntui.txt" if dangling else "victim.txt")
    (new_project / LOCK_FILE).symlink_to(target)
    before = _tree(outside)
    code, _, err = _cli(capsys, "import", str(new_project), str(nxd_log))
    assert code == 2
    assert "symbolic link" in _one_error_line(err)
    with Project.open(new_project, allow_read_only=True) as project:
        assert project.read_only
        assert "symbolic link" in project.read_only_reason
    with pytest.raises(ReadOnlyProject, match="symbolic link"):
        Project.open(new_project)
    assert _tree(outside) == before
    assert (new_project / LOCK_FILE).is_symlink()
    assert load_runs(new_project).is_empty()


def test_lock_file_hard_linked_to_an_outside_file_is_never_written(
    new_project: Path, outside: Path, nxd_log: Path, capsys
) -> None:
    """A hard link is the outside file itself under a second name: the lock is written in
    place (truncated, the holder's text put in), so it would overwrite that file."""
    os.link(outside / "victim.txt", new_project / LOCK_FILE)
    before = _tree(outside)
    code, _, err = _cli(capsys, "import", str(new_project), str(nxd_log))
    assert code == 2
    assert "hard link" in _one_error_line(err)
    with Project.open(new_project, allow_read_only=True) as project:
        assert project.read_only
        assert "hard link" in project.read_only_reason
    with pytest.raises(ReadOnlyProject, match="hard link"):
        Project.open(new_project)
    assert _tree(outside) == before
    assert load_runs(new_project).is_empty()


def test_data_file_as_a_link_is_refused_not_written_through(
    sample_dir: Path, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = scenario_path(sample_dir, "as-measured")
    shutil.move(path, outside / "as-measured.toml")
    path.symlink_to(outside / "as-measured.toml")
    before = _tree(outside)
    code, _, err = _cli(capsys, "scenario", "save", str(sample_dir), "as-measured", "--replace")
    assert code == 2
    assert "symbolic link" in _one_error_line(err)
    assert path.is_symlink()
    assert _tree(outside) == before


# --- case 4: ids that become paths are checked when read --------------------------------------


def test_scenario_name_with_a_trailing_newline_is_refused(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UserError, match="not a usable scenario name"):
        check_name("fine\n")
    listing = sorted(os.listdir(sample_dir / "scenarios"))
    code, _, err = _cli(capsys, "scenario", "save", str(sample_dir), "fine\n")
    assert code == 2
    assert "not a usable scenario name" in _one_error_line(err)
    assert sorted(os.listdir(sample_dir / "scenarios")) == listing


def test_run_id_with_dot_dot_in_the_runs_table_is_refused_and_deletes_nothing(
    new_project: Path, outside: Path, nxd_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (outcome,) = import_paths(new_project, [nxd_log])
    assert outcome.run_id is not None
    # A hand edit that points the run's timeline at a file outside the project.
    (outside / "victim.parquet").write_bytes(VICTIM_TEXT)
    evil = "../../outside/victim"
    table = runs_store.runs_path(new_project)
    runs = pl.read_parquet(table)
    runs.with_columns(pl.lit(evil).alias("run_id")).write_parquet(table)
    edited = table.read_bytes()
    before = _tree(outside)
    kept = _stored(new_project)
    with pytest.raises(UserError, match="run id"):
        remove_run(new_project, evil)
    with pytest.raises(UserError, match="not a usable run id"):
        runs_store.timeline_path(new_project, evil)
    code, _, err = _cli(capsys, "runs", str(new_project))
    assert code == 2
    line = _one_error_line(err)
    assert "runs.parquet" in line and "run_id" in line and "'../../outside/victim'" in line
    assert _tree(outside) == before
    assert table.read_bytes() == edited  # nothing rewritten
    assert _stored(new_project) == kept
    assert runs_store.timeline_path(new_project, outcome.run_id).is_file()


def test_capture_id_with_dot_dot_in_the_captures_table_is_refused(
    new_project: Path, outside: Path, nxd_log: Path, tmp_path: Path, capsys
) -> None:
    (outcome,) = import_paths(new_project, [nxd_log])
    capture = tmp_path / "smi.csv"
    capture.write_text("\n".join(nvidia_smi_lines([(600, [70, 70])], start=loggen.LAUNCH)) + "\n")
    code, _, _ = _cli(capsys, "telemetry", str(new_project), str(capture), "--run", outcome.run_id)
    assert code == 0
    table = captures_path(new_project)
    captures = pl.read_parquet(table)
    captures.with_columns(pl.lit("../../outside/victim").alias("capture_id")).write_parquet(table)
    before = _tree(outside)
    with pytest.raises(UserError, match="capture id"):
        load_captures(new_project)
    code, _, err = _cli(capsys, "verdict", str(new_project))
    assert code == 2
    assert "captures.parquet" in _one_error_line(err)
    assert _tree(outside) == before


# --- case 7: a FIFO (or anything but a regular file) is refused before it is opened ----------


@pytest.mark.parametrize("how", ["detected", "--format", "in-a-folder", "attach"])
def test_importing_a_fifo_is_refused_without_hanging(
    new_project: Path, outside: Path, nxd_log: Path, tmp_path: Path, how: str
) -> None:
    (stored,) = import_paths(new_project, [nxd_log])
    runs_before, kept = load_runs(new_project), _stored(new_project)
    folder = tmp_path / "pipes"
    folder.mkdir()
    fifo = folder / "train.log"
    os.mkfifo(fifo)
    before = _tree(outside)
    if how == "detected":
        done = _cli_process("import", str(new_project), str(fifo))
    elif how == "--format":
        done = _cli_process("import", str(new_project), str(fifo), "--format", "nxd")
    elif how == "in-a-folder":
        done = _cli_process("import", str(new_project), str(folder))
    else:
        done = _cli_process("telemetry", str(new_project), str(fifo), "--run", str(stored.run_id))
    if how == "in-a-folder":
        # Not a log file: nothing to import, which is an error naming the folder.
        assert done.returncode == 2, done.stderr
        assert f"no files to import in {folder}" in done.stderr
    else:
        assert done.returncode == 1, done.stderr
        assert f"{fifo}: is a named pipe (FIFO)" in done.stdout + done.stderr
    # The write lock was released, and nothing stored changed.
    with Project.open(new_project) as project:
        assert not project.read_only
    assert load_runs(new_project).equals(runs_before)
    assert _stored(new_project) == kept
    assert _tree(outside) == before


def test_importing_a_socket_is_refused_naming_it(
    new_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    path = tmp_path / "s.log"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        code, out, _ = _cli(capsys, "import", str(new_project), str(path))
    assert code == 1
    assert f"{path}: is a socket, not a file" in out
    assert load_runs(new_project).is_empty()


@pytest.mark.parametrize(
    "stored", ["prices/quotes.toml", "runs/runs.parquet", "scenarios/as-measured.toml"]
)
def test_a_fifo_in_place_of_a_project_file_is_refused_without_hanging(
    sample_dir: Path, stored: str
) -> None:
    path = sample_dir / stored
    path.unlink()
    os.mkfifo(path)
    argv = {
        "prices/quotes.toml": ["price", "list", str(sample_dir)],
        "runs/runs.parquet": ["runs", str(sample_dir)],
        "scenarios/as-measured.toml": ["scenario", "show", str(sample_dir), "as-measured"],
    }[stored]
    done = _cli_process(*argv)
    assert done.returncode == 2
    assert f"{path} is not a regular file" in _one_error_line(done.stderr)


def test_a_fifo_among_the_snapshots_is_listed_as_unreadable_without_hanging(
    sample_dir: Path,
) -> None:
    fifo = sample_dir / "scenarios" / "stuck.toml"
    os.mkfifo(fifo)
    done = _cli_process("scenario", "list", str(sample_dir))
    assert done.returncode == 0, done.stderr
    assert "as-measured" in done.stdout
    assert f"{fifo} is not a regular file" in done.stdout


# --- case 10: a deleted lock file admits no second writer --------------------------------------

_HOLDER = textwrap.dedent(
    """
    import sys
    from trntui.core.run_facts import RecordedQuality
    from trntui.store.project import Project
    from trntui.store.quality import record_quality
    project = Project.open(sys.argv[1])
    print("locked", flush=True)
    for line in sys.stdin:
        if line.strip() == "write":
            record_quality(project.root, "0123456789abcdef", RecordedQuality(0.9, "eval"))
            print("written", flush=True)
    """
)


def test_a_deleted_lock_file_admits_no_second_writer(
    new_project: Path, nxd_log: Path, second_log: Path
) -> None:
    import_paths(new_project, [nxd_log])
    runs_before = load_runs(new_project)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(new_project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        (new_project / LOCK_FILE).unlink()  # as `git clean -fdX` does
        second = _cli_process("import", str(new_project), str(second_log))
        assert second.returncode == 2
        assert "is open for writing by another trntui session" in _one_error_line(second.stderr)
        assert load_runs(new_project).equals(runs_before)
        with pytest.raises(UserError, match="open for writing"):
            Project.open(new_project)
        # The holder still writes, and puts its lock file back (with its name) first.
        (new_project / LOCK_FILE).unlink(missing_ok=True)
        holder.stdin.write("write\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "written"
        assert f"pid {holder.pid}" in (new_project / LOCK_FILE).read_text()
        third = _cli_process("import", str(new_project), str(second_log))
        assert third.returncode == 2
        assert f"pid {holder.pid}" in third.stderr
    finally:
        holder.kill()
        holder.wait()
    done = _cli_process("import", str(new_project), str(second_log))
    assert done.returncode == 0, done.stderr
    assert load_runs(new_project).height == runs_before.height + 1


def test_a_lock_file_replaced_while_being_locked_is_opened_again(
    new_project: Path, second_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is replaced between being opened and being locked: the lock taken must be on
    the file now at that name, or a second process would lock that one and write beside us."""
    import fcntl

    path = new_project / LOCK_FILE
    real_flock = fcntl.flock
    swapped: list[bool] = []

    def replace_then_lock(fd, operation):
        if not swapped:
            swapped.append(True)
            path.unlink()
            path.write_text("")
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", replace_then_lock)
    with Project.open(new_project) as session:
        monkeypatch.undo()
        assert swapped and not session.read_only
        second = _cli_process("import", str(new_project), str(second_log))
        assert second.returncode == 2
        assert f"pid {os.getpid()}" in _one_error_line(second.stderr)
    assert load_runs(new_project).is_empty()


# --- case 11: symlinked project folders ----------------------------------------------------


def _write_into(folder: str, root: Path, log: Path, capture: Path, run_id: str) -> list[str]:
    """The command that writes into ``folder`` of the project."""
    return {
        "runs": ["import", str(root), str(log)],
        "runs/timelines": ["import", str(root), str(log)],
        "prices": [
            *("price", "add", str(root), "--instance-type", "trn3.48xlarge"),
            *("--region", "us-east-1", "--usd-per-hour", "61.5", "--source", "account team"),
        ],
        "scenarios": ["scenario", "save", str(root), "linked"],
        "telemetry": ["telemetry", str(root), str(capture), "--run", run_id],
    }[folder]


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-folder", "dangling"])
@pytest.mark.parametrize("folder", ["runs", "runs/timelines", "prices", "scenarios", "telemetry"])
def test_a_linked_project_folder_is_refused_and_nothing_lands_outside(
    new_project: Path,
    outside: Path,
    nxd_log: Path,
    second_log: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    folder: str,
    dangling: bool,
) -> None:
    (stored,) = import_paths(new_project, [nxd_log])
    assert stored.run_id is not None
    capture = tmp_path / "smi.csv"
    capture.write_text("\n".join(nvidia_smi_lines([(600, [70, 70])], start=loggen.LAUNCH)) + "\n")
    inside = new_project / folder
    elsewhere = outside / folder.replace("/", "-")
    if inside.exists():
        shutil.move(inside, elsewhere)
    elif not dangling:
        elsewhere.mkdir()
    if dangling:
        shutil.rmtree(elsewhere, ignore_errors=True)
    inside.symlink_to(elsewhere)
    before, kept = _tree(outside), _stored(new_project)
    argv = _write_into(folder, new_project, second_log, capture, stored.run_id)
    code, out, err = _cli(capsys, *argv)
    assert code in (1, 2), out + err
    message = out + err
    assert f"{inside} is a symbolic link" in message
    assert _tree(outside) == before
    assert _stored(new_project) == kept
    assert inside.is_symlink()
    # The lock was released and the project still opens.
    with Project.open(new_project) as project:
        assert not project.read_only


def test_stale_temp_files_are_cleaned_only_inside_the_project(
    new_project: Path, outside: Path
) -> None:
    leftover = outside / ".trntui-tmp-not-ours.parquet"
    leftover.write_bytes(VICTIM_TEXT)
    (new_project / "runs").symlink_to(outside)
    before = _tree(outside)
    with Project.open(new_project):
        pass
    assert _tree(outside) == before


def test_without_a_folder_lock_a_holder_whose_lock_file_was_taken_writes_nothing(
    new_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system that cannot lock folders, the lock file alone is the lock: a holder
    that finds its file deleted and re-taken by someone else refuses to write."""
    import fcntl

    from trntui.core.run_facts import RecordedQuality
    from trntui.store import project as project_store
    from trntui.store.quality import quality_path, record_quality

    monkeypatch.setattr(project_store.lock, "_lock_folder", lambda root: -1)
    with Project.open(new_project) as session:
        (new_project / LOCK_FILE).unlink()
        with open(new_project / LOCK_FILE, "w") as other:  # another process's new lock file
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with pytest.raises(UserError, match="nothing was written"):
                record_quality(session.root, "0123456789abcdef", RecordedQuality(0.9, "eval"))
    assert not quality_path(new_project).exists()
