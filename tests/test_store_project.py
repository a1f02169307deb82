"""The project directory: round trip, atomic writes, one writer, schema and error messages."""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests import REPO, SAMPLE
from tests.strategies import inventories
from trntui.core.errors import InputFileError
from trntui.core.inventory import Inventory, ModelInfo, ProjectInfo
from trntui.core.run_facts import RecordedQuality
from trntui.store.project import (
    PROJECT_FILE,
    ChangedOnDisk,
    NewerSchemaError,
    NotAProject,
    Project,
    ProjectLocked,
    ReadOnlyProject,
    acquire_lock,
    init_project,
    read_inventory,
    write_access,
)
from trntui.store.quality import load_recorded_quality, quality_path, record_quality


@settings(max_examples=60)
@given(inventory=inventories())
def test_every_inventory_field_survives_save_and_load(tmp_path: Path, inventory: Inventory) -> None:
    root = tmp_path / "rt"
    if not root.exists():
        init_project(root)
    with Project.open(root) as project:
        project.save_inventory(inventory)
    assert read_inventory(root).inventory == inventory


def test_saved_file_is_plain_toml_with_schema_version_first(new_project: Path) -> None:
    with Project.open(new_project) as project:
        project.save_inventory(Inventory(model=ModelInfo(parameters_billion=70.0)))
    lines = [ln for ln in (new_project / PROJECT_FILE).read_text().splitlines() if ln.strip()]
    first_setting = next(ln for ln in lines if not ln.startswith("#"))
    assert first_setting == "schema_version = 2"
    assert "parameters_billion = 70.0" in lines


def test_saving_the_same_inventory_twice_gives_identical_bytes(new_project: Path) -> None:
    inventory = Inventory(project=ProjectInfo(name="x"), model=ModelInfo(operators=("a", "b")))
    with Project.open(new_project) as project:
        project.save_inventory(inventory)
        first = project.path.read_bytes()
        project.save_inventory(inventory)
        assert project.path.read_bytes() == first


_WRITER = textwrap.dedent(
    """
    import sys
    from trntui.core.inventory import Inventory, ModelInfo, ProjectInfo
    from trntui.store.project import Project

    root = sys.argv[1]
    big = tuple(f"operator-{i}" * 20 for i in range(3000))
    versions = [
        Inventory(project=ProjectInfo(name="A"), model=ModelInfo(operators=big)),
        Inventory(project=ProjectInfo(name="B"), model=ModelInfo(operators=big[:1500])),
    ]
    with Project.open(root) as project:
        project.save_inventory(versions[0])
        print("saved once", flush=True)
        i = 1
        while True:
            project.save_inventory(versions[i % 2])
            i += 1
    """
)
SAVE_S = 0.03
"""About how long one save of the writer above takes here: the kill comes at a random point of
the next two saves, so its place within a save is random (waiting longer adds no new places)."""


def test_writer_killed_mid_save_leaves_a_whole_file(new_project: Path) -> None:
    """SIGKILL a process that saves in a loop, many times; the file must always load.

    The writer says when its first save is done, so every kill falls among later saves (and
    the file holds a save by the writer), however slow the machine is."""
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(15):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(new_project)],
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"saved once"
        time.sleep(rng.uniform(0.0, 2 * SAVE_S))  # where the kill falls, not a wait
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        loaded = read_inventory(new_project).inventory
        assert loaded.project.name in {"A", "B"}
    with Project.open(new_project):
        pass
    leftovers = list(new_project.glob(".trntui-tmp-*"))
    assert leftovers == []


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from trntui.store.project import Project
    project = Project.open(sys.argv[1])
    print("locked", flush=True)
    time.sleep(60)
    """
)


def _hold_lock_in_another_process(new_project: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(new_project)], stdout=subprocess.PIPE, env=env
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == b"locked"
    return holder


def test_second_writer_is_detected_and_named(new_project: Path) -> None:
    holder = _hold_lock_in_another_process(new_project)
    try:
        with pytest.raises(ProjectLocked) as caught:
            Project.open(new_project)
        assert f"pid {holder.pid}" in str(caught.value)
        with Project.open(new_project, allow_read_only=True) as second:
            assert second.read_only
            assert f"pid {holder.pid}" in second.holder
            before = second.path.read_bytes()
            with pytest.raises(ReadOnlyProject):
                second.save_inventory(Inventory(project=ProjectInfo(name="lost?")))
            assert second.path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    with Project.open(new_project) as third:
        assert not third.read_only


def test_store_writers_refuse_while_another_session_writes(new_project: Path) -> None:
    """A script writing through the store cannot write beside a session that holds the lock."""
    result = RecordedQuality(0.92, "eval job 17")
    holder = _hold_lock_in_another_process(new_project)
    try:
        with pytest.raises(ProjectLocked) as caught:
            record_quality(new_project, "0123456789abcdef", result)
        assert f"pid {holder.pid}" in str(caught.value)
        assert not quality_path(new_project).exists()
    finally:
        holder.kill()
        holder.wait()
    record_quality(new_project, "0123456789abcdef", result)
    assert load_recorded_quality(new_project) == {"0123456789abcdef": result}
    with Project.open(new_project) as session:
        # The session's own writes (UI, CLI) go through while it holds the lock.
        record_quality(session.root, "0123456789abcdef", None)
        assert load_recorded_quality(new_project) == {}
        assert not session.read_only
    with Project.open(new_project) as again:
        assert not again.read_only, "a write released the lock it took"


def test_threads_writing_without_a_session_take_turns_under_the_lock(new_project: Path) -> None:
    """A script's threads share no session: each write holds the kernel lock throughout."""
    first_inside = threading.Event()
    order: list[str] = []
    lock_free_inside: list[bool] = []

    second_trying = threading.Event()

    def writer(name: str, hold_s: float) -> None:
        if name == "b":
            second_trying.set()
        with write_access(new_project):
            first_inside.set()
            order.append(f"{name} in")
            if name == "a":
                assert second_trying.wait(10)
            time.sleep(hold_s)  # b, started, is meanwhile at the lock
            # Another open file description (as another process would have) cannot get it.
            other, _ = acquire_lock(new_project)
            lock_free_inside.append(other is not None)
            if other is not None:
                other.close()
            order.append(f"{name} out")

    first = threading.Thread(target=writer, args=("a", 0.05))
    first.start()
    assert first_inside.wait(10)
    second = threading.Thread(target=writer, args=("b", 0.0))
    second.start()
    first.join(10)
    second.join(10)
    assert order == ["a in", "a out", "b in", "b out"]
    assert lock_free_inside == [False, False]


@pytest.mark.parametrize("ending", ["chdir-then-close", "dropped-without-close"])
def test_a_finished_session_no_longer_lets_writes_through(
    new_project: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    monkeypatch.chdir(new_project.parent)
    session: Project | None = Project.open(Path(new_project.name))
    assert session is not None and not session.read_only
    if ending == "chdir-then-close":
        monkeypatch.chdir("/")
        session.close()
    else:
        session = None
        gc.collect()
    holder = _hold_lock_in_another_process(new_project)
    try:
        with pytest.raises(ProjectLocked):
            record_quality(new_project, "0123456789abcdef", RecordedQuality(0.9, "eval"))
    finally:
        holder.kill()
        holder.wait()
    assert not quality_path(new_project).exists()


def test_writing_into_a_folder_that_is_not_a_project_says_so(tmp_path: Path) -> None:
    with pytest.raises(NotAProject, match="no such folder"):
        record_quality(tmp_path / "nowhere", "0123456789abcdef", RecordedQuality(0.9, "eval"))
    with pytest.raises(NotAProject, match="not a trntui project"):
        record_quality(tmp_path, "0123456789abcdef", RecordedQuality(0.9, "eval"))
    assert list(tmp_path.iterdir()) == []


def test_edit_made_on_disk_meanwhile_is_not_overwritten(new_project: Path) -> None:
    with Project.open(new_project) as project:
        path = project.path
        hand_edit = path.read_text().replace('name = "test project"', 'name = "hand edit"')
        path.write_text(hand_edit)
        with pytest.raises(ChangedOnDisk):
            project.save_inventory(Inventory(project=ProjectInfo(name="session edit")))
        assert path.read_text() == hand_edit
        assert project.reload().project.name == "hand edit"
        project.save_inventory(Inventory(project=ProjectInfo(name="after reload")))
    assert read_inventory(new_project).inventory.project.name == "after reload"


def test_newer_schema_is_refused_and_left_untouched(new_project: Path) -> None:
    path = new_project / PROJECT_FILE
    path.write_text('schema_version = 3\n[project]\nname = "future"\nsomething_new = 1\n')
    before = path.read_bytes()
    with pytest.raises(NewerSchemaError, match="schema_version 3"):
        Project.open(new_project)
    assert path.read_bytes() == before


def test_syntax_error_names_file_and_line(new_project: Path) -> None:
    path = new_project / PROJECT_FILE
    path.write_text('schema_version = 1\n\n[model]\nname = "Llama\nversion = "2"\n')
    before = path.read_bytes()
    with pytest.raises(InputFileError) as caught:
        Project.open(new_project)
    assert caught.value.line == 4
    assert str(path) in str(caught.value)
    assert path.read_bytes() == before


def test_wrong_type_names_line_key_and_expectation(new_project: Path) -> None:
    path = new_project / PROJECT_FILE
    path.write_text(
        "schema_version = 1\n[project]\nname = 'p'\n\n[model]\n"
        "name = 'x'\nparameters_billion = \"seventy\"\n"
    )
    with pytest.raises(InputFileError) as caught:
        read_inventory(new_project)
    error = caught.value
    assert error.line == 7
    assert error.key == "model.parameters_billion"
    assert "number" in (error.expected or "")
    assert f"{path}:7" in str(error)


def test_problem_in_second_target_points_at_its_own_lines(new_project: Path) -> None:
    path = new_project / PROJECT_FILE
    path.write_text(
        "schema_version = 1\n"
        "[[targets]]\nname = 'a'\ninstance_type = 'p5.48xlarge'\ninstance_count = 1\n"
        "region = 'us-east-1'\npurchase_option = 'on-demand'\n"
        "[[targets]]\nname = 'b'\ninstance_type = 'trn3.48xlarge'\ninstance_count = -4\n"
        "region = 'us-east-1'\npurchase_option = 'on-demand'\n"
    )
    with pytest.raises(InputFileError) as caught:
        read_inventory(path.parent)
    assert caught.value.line == 11
    assert caught.value.key == "targets[1].instance_count"


def test_missing_schema_version_is_an_error_not_a_guess(new_project: Path) -> None:
    (new_project / PROJECT_FILE).write_text("[project]\nname = 'p'\n")
    with pytest.raises(InputFileError, match="schema_version"):
        read_inventory(new_project)


def test_non_utf8_file_reports_the_line(new_project: Path) -> None:
    (new_project / PROJECT_FILE).write_bytes(b"schema_version = 1\n[project]\nname = '\xff'\n")
    with pytest.raises(InputFileError) as caught:
        read_inventory(new_project)
    assert caught.value.line == 3


def test_folder_without_project_file_is_not_a_project(tmp_path: Path) -> None:
    with pytest.raises(NotAProject, match="trntui init"):
        Project.open(tmp_path)


def test_init_refuses_to_overwrite_an_existing_project(new_project: Path) -> None:
    before = (new_project / PROJECT_FILE).read_bytes()
    with pytest.raises(Exception, match="already holds"):
        init_project(new_project)
    assert (new_project / PROJECT_FILE).read_bytes() == before


def test_sample_project_loads_and_is_labelled_as_an_example() -> None:
    inventory = read_inventory(SAMPLE).inventory
    assert inventory.project.example is True
    families = {t.accelerator_family for t in inventory.targets}
    assert {"Trainium3", "GPU"} <= families
    assert inventory.warnings() == []


def test_short_list_items_are_still_written_one_block_each(new_project: Path) -> None:
    from trntui.core.inventory import MigrationRisk

    inventory = Inventory(risks=(MigrationRisk(title="a"), MigrationRisk(title="b")))
    with Project.open(new_project) as project:
        project.save_inventory(inventory)
        text = project.path.read_text()
    assert text.count("[[risks]]") == 2
    assert 'title = "a"' in text.splitlines()


def test_a_v1_file_opens_and_its_first_save_keeps_it_as_a_backup(new_project: Path) -> None:
    path = new_project / PROJECT_FILE
    v1 = (
        "# trntui project file (format v1): the workload inventory.\n"
        'schema_version = 1\n\n[project]\nname = "old"\n\n[goal]\nwork_amount = 3072.0\n'
        'work_unit = "samples"\n'
    )
    path.write_text(v1)
    with Project.open(new_project) as project:
        assert project.inventory.goal.work_amount == 3072.0
        assert path.read_text() == v1  # opening changes nothing
        project.save_inventory(project.inventory)
        project.save_inventory(project.inventory)  # the backup is taken once
    backup = new_project / f"{PROJECT_FILE}.v1.bak"
    assert backup.read_text() == v1
    saved = path.read_text()
    assert "schema_version = 2" in saved and 'name = "old"' in saved
    with Project.open(new_project) as project:
        assert project.inventory.goal.work_amount == 3072.0


def test_a_read_only_project_takes_the_lock_once_it_is_free(sample_dir: Path) -> None:
    """Issue 30, item 15: read-only because another held the lock is not read-only for good;
    read-only on request is."""
    holder = Project.open(sample_dir)
    looking = Project.open(sample_dir, allow_read_only=True)
    asked = Project.open(sample_dir, read_only=True)
    try:
        assert looking.read_only and not looking.take_lock()
        assert holder.holder.split(" (")[0] in looking.read_only_reason
        holder.close()
        assert looking.take_lock() and not looking.read_only
        with pytest.raises(ProjectLocked):
            Project.open(sample_dir)  # the lock is this session's now
        assert not asked.take_lock() and asked.read_only
    finally:
        holder.close()
        looking.close()
        asked.close()
