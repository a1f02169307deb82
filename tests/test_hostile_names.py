"""Issue 30, items 9 and 10: a run-set or family name that no command could read back (only
spaces, a control character, bytes that are not UTF-8 from a command line) is refused where it
comes in and never written; one that reached ``sets.toml`` by hand is refused naming its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import loggen
from trntui.cli import main
from trntui.core.errors import InputFileError, UserError
from trntui.core.text import name_problem
from trntui.importers import import_file
from trntui.store.run_import import import_paths
from trntui.store.runs import add_run, default_set_name, load_runs
from trntui.store.set_sizes import load_family_names, name_family, sets_path

BAD_NAMES = ["   ", "", "bad\udcff", "a\x1b]0;T\x07b", "rl\u202eo", "two\nlines", "x" * 201]


@pytest.fixture
def nxd_log(tmp_path: Path) -> Path:
    path = tmp_path / "logs" / "nxd.log"
    path.parent.mkdir()
    loggen.write_nxd(path, loggen.NxdSpec())
    return path


@pytest.mark.parametrize("name", BAD_NAMES)
def test_the_cli_refuses_a_set_name_before_reading_a_log(
    new_project: Path, nxd_log: Path, capsys, name: str
) -> None:
    for command in (["import", str(new_project), str(nxd_log)],):
        with pytest.raises(SystemExit) as exited:
            main([*command, "--set", name])
        err = capsys.readouterr().err
        assert exited.value.code == 2
        assert "Traceback" not in err and "argument --set" in err
    assert load_runs(new_project).is_empty()


@pytest.mark.parametrize("name", BAD_NAMES)
def test_the_store_refuses_a_set_name_whatever_asks(
    new_project: Path, nxd_log: Path, name: str
) -> None:
    with pytest.raises(UserError, match="cannot name a run set"):
        add_run(new_project, import_file(nxd_log), name)
    with pytest.raises(UserError, match="cannot name a run set"):
        import_paths(new_project, [nxd_log], set_name=name)
    assert load_runs(new_project).is_empty()


def test_a_family_named_only_spaces_is_refused_and_sets_toml_stays_readable(
    new_project: Path, nxd_log: Path, capsys
) -> None:
    import_paths(new_project, [nxd_log], set_name="trial")
    assert main(["family", str(new_project), "   ", "trial"]) == 2
    assert "cannot name a scaling family" in capsys.readouterr().err
    with pytest.raises(UserError, match="scaling family"):
        name_family(new_project, ["trial"], "\x1b]52;c;QQ==\x07")
    assert not sets_path(new_project).exists()
    assert main(["runs", str(new_project)]) == 0


def test_a_hand_written_name_with_a_control_character_is_refused_naming_its_line(
    new_project: Path,
) -> None:
    sets_path(new_project).parent.mkdir(exist_ok=True)
    sets_path(new_project).write_text(
        'schema_version = 1\n\n[[set]]\nname = "ok"\nfamily = "f"\n\n'
        '[[set]]\nname = "a\\u001b]0;T\\u0007b"\nfamily = "f"\n'
    )
    with pytest.raises(InputFileError) as raised:
        load_family_names(new_project)
    assert raised.value.line == 8
    assert "control characters" in str(raised.value)


def test_a_default_set_name_from_folders_is_always_a_name(tmp_path: Path) -> None:
    folder = tmp_path / "run\x1b[2J" / "set\udcff"
    assert name_problem(default_set_name(folder / "x.log")) is None
    assert default_set_name(folder / "x.log") == "run\\x1b[2J/set\\udcff"
