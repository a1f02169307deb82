"""The command line: init, --version, and clear errors without tracebacks."""

from __future__ import annotations

import argparse
import copy
import gc
import json
import math
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import copy_sample, loggen
from trntui import __version__
from trntui.cli import main, run
from trntui.store.project import LOCK_FILE, PROJECT_FILE, Project, read_inventory


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trntui.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_version_prints_the_package_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"trntui {__version__}"


def test_init_creates_a_loadable_project(tmp_path: Path) -> None:
    target = tmp_path / "new-project"
    result = run_cli("init", str(target), "--name", "My model")
    assert result.returncode == 0, result.stderr
    assert (target / PROJECT_FILE).is_file()
    assert read_inventory(target).inventory.project.name == "My model"
    assert ".trntui.lock" in (target / ".gitignore").read_text()


def test_init_twice_fails_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "p")]) == 0
    assert main(["init", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "already holds a trntui project" in err


def test_opening_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    result = run_cli(str(missing))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(missing) in result.stderr
    assert "trntui init" in result.stderr


def test_opening_a_broken_file_names_the_line_and_exits_nonzero(tmp_path: Path) -> None:
    (tmp_path / PROJECT_FILE).write_text("schema_version = 1\n[model\n")
    result = run_cli(str(tmp_path))
    assert result.returncode == 2
    assert f"{tmp_path / PROJECT_FILE}:2" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "{missing}"),
        ("estimate", "{missing}"),
        ("telemetry", "{missing}", "capture.jsonl", "--run", "0123456789abcdef"),
        ("quality", "{project}", "0123456789abcdef"),
        ("map", "{missing}", "table.csv"),
        ("price", "list", "{missing}"),
    ],
)
def test_every_command_reports_errors_in_one_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    capsys.readouterr()
    filled = [a.format(missing=tmp_path / "nowhere", project=project) for a in args]
    assert main(filled) in (1, 2)
    err = capsys.readouterr().err.strip()
    assert err.startswith("trntui: error: "), err
    assert "Traceback" not in err


def test_a_mistyped_command_or_a_file_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "neither a command nor a project folder" in err
    assert "trntui init frobnicate" in err and "estimate" in err
    note = tmp_path / "notes.txt"
    note.write_text("not a project")
    assert main(["runs", str(note)]) == 2
    assert f"{note} is a file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["--version"], {"polars", "textual", "httpx", "trntui.importers"}),
        (["--help"], {"polars", "textual", "httpx", "trntui.importers"}),
        (["init", "{tmp}/p"], {"polars", "textual", "httpx", "trntui.importers"}),
        (["price", "list", "{tmp}/nowhere"], {"textual", "trntui.importers"}),
        # Polars loads in the thread that filters the download, once the file's header has
        # come: reaching the price list (here its empty cache) and the help need none of it.
        (["price", "fetch", "--help"], {"polars", "textual", "trntui.importers"}),
        (
            ["price", "fetch", "--region", "us-east-1", "--offline"],
            {"polars", "textual", "trntui.importers", "trntui.pricing.extract.scan"},
        ),
        (
            # Stored facts are read, never derived: no telemetry rules, no derivation; the
            # analysis and back-tests only load for a report, the snapshot code for scenarios.
            ["estimate", "{sample}", "--json"],
            {
                "textual",
                "httpx",
                "trntui.importers",
                "trntui.core.run_facts.derive",
                "trntui.core.utilization",
                "trntui.core.verdict",
                "trntui.core.sensitivity",
                "trntui.core.backtest",
                "trntui.store.scenarios.snapshot",
                "trntui.store.scenarios.write",
                "trntui.store.scenarios.compare",
                "tomlkit",  # reading never needs the comment-keeping writer
            },
        ),
    ],
)
def test_a_command_loads_only_what_it_uses(tmp_path: Path, args: list[str], absent: set) -> None:
    sample = copy_sample(tmp_path / "sample") if "{sample}" in args else tmp_path
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{sample}", str(sample)) for a in args]
    probe = (
        "import os, sys\n"
        f"os.environ['TRNTUI_CACHE_DIR'] = {str(tmp_path / 'cache')!r}\n"
        "from trntui.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {sorted(absent)!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout + result.stderr
    if "{sample}" in args:
        assert '"total_usd": ' in result.stdout  # the estimate was made


def test_an_import_in_a_named_format_loads_only_that_parser(tmp_path: Path) -> None:
    """``trntui import --format megatron`` loads neither the other formats' parsers nor, without
    ``--json``, what ``trntui runs --json`` reads, nor the price rules."""
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    log = tmp_path / "run.log"
    loggen.write_megatron(log)
    absent = [
        "trntui.commands.runs",
        "trntui.core.quotes",
        *(f"trntui.importers.{name}" for name in ("hf", "hf_console", "lightning", "mlperf")),
        *(f"trntui.importers.{name}" for name in ("nemo_printer", "nxd", "tensorboard")),
    ]
    probe = (
        "import sys\n"
        "from trntui.cli import main\n"
        f"code = main(['import', {str(root)!r}, {str(log)!r}, '--format', 'megatron'])\n"
        f"print(code, sorted(m for m in {absent!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.startswith("added "), result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout + result.stderr


def test_help_before_a_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from trntui.cli import main
    from trntui.commands import COMMANDS

    with pytest.raises(SystemExit):
        main(["-h", "price"])
    listed = capsys.readouterr().out
    assert all(f"    {name} " in listed or f"    {name}\n" in listed for name in COMMANDS)


def test_the_command_list_names_what_each_module_registers() -> None:
    import importlib

    from trntui.commands import COMMANDS

    for module_name in {entry.module for entry in COMMANDS.values()}:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(module_name).register(sub)
        listed = {name for name, entry in COMMANDS.items() if entry.module == module_name}
        assert set(sub.choices) == listed, module_name
        shown = {action.dest: action.help for action in sub._choices_actions}
        assert shown == {name: COMMANDS[name].help for name in listed}
    parser, names = __import__("trntui.cli", fromlist=["_build_parser"])._build_parser("scale")
    assert names == {"init", "open", *COMMANDS}
    assert parser.parse_args(["scale", "x", "--target", "t"]).target == "t"


def test_importing_a_folder_with_utilization_captures_says_attach_them(tmp_path: Path) -> None:
    import shutil

    from tests import SAMPLE

    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    logs = tmp_path / "trn3-example"
    shutil.copytree(SAMPLE / "logs" / "trn3-example", logs)
    captures = sorted(logs.glob("*.neuron-monitor.jsonl"))
    assert captures
    result = run_cli("import", str(root), str(logs))
    assert result.returncode == 0, result.stderr
    for capture in captures:
        line = next(x for x in result.stdout.splitlines() if str(capture) in x)
        assert line.startswith("skipped")
        assert "neuron-monitor utilization capture" in line and "--run RUN" in line
    assert sum(x.startswith("added") for x in result.stdout.splitlines()) == 3


def test_a_bad_value_is_told_once_with_its_file_line_and_key(tmp_path: Path) -> None:
    """What was expected is said once, with the file, the line and the key (not repeated
    after the key)."""
    root = copy_sample(tmp_path / "p")
    path = root / PROJECT_FILE
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith("instance_count = "))
    lines[number] = 'instance_count = "x"'
    path.write_text("\n".join(lines) + "\n")
    result = run_cli("estimate", str(root))
    assert result.returncode == 2
    message = result.stderr.strip()
    assert f"trntui.toml:{number + 1}:" in message and "instance_count'" in message, message
    assert message.count("expected a whole number") == 1, message


def test_a_list_of_quotes_in_json_pieces_joins_as_json_dumps_at_every_batch() -> None:
    """``price fetch --json`` prints its quotes ``batch`` dicts at a time: the joins between
    batches are indented as ``json.dumps`` indents them, and a NaN in any batch is null."""
    from trntui.commands import json_pieces

    quotes = [
        {"instance_type": f"p5.{n}xlarge", "usd_per_hour": n * 1.5, "note": "a, b}, {c"}
        for n in range(7)
    ]
    document = {"region": "us-east-1", "quotes": quotes, "notes": ["x"], "missing": []}
    expected = json.dumps(document, indent=2)
    for batch in range(1, 9):
        assert "".join(json_pieces(document, batch)) == expected
    quotes[5]["usd_per_hour"] = math.nan
    with_nan = json.dumps(document, indent=2).replace("NaN", "null")
    assert "".join(json_pieces(document, 2)) == with_nan


def test_runs_text_fits_80_columns_with_unknowns_and_units_in_their_columns(
    sample_dir: Path,
) -> None:
    """``trntui runs`` printed lines of about 115 characters, with no header and no log
    names. Now each set heads a table of its runs within 80 columns; a run whose time and
    throughput are unknown reads "unknown" in those columns, and one in another unit than
    its set's names it."""
    from trntui.commands.runs import runs_report, runs_text
    from trntui.store.project_store import ProjectStore

    with ProjectStore.open(sample_dir, read_only=True) as store:
        report = runs_report(store)
    wider = copy.deepcopy(report)
    first, second = report["runs"][0], report["runs"][1]
    first.update(run_s=None, steady_throughput=None)
    second.update(throughput_unit="tokens/s")
    lines = runs_text(report)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    header = next(line for line in lines if line.lstrip().startswith("run "))
    row = next(line for line in lines if first["run_id"] in line)
    other = next(line for line in lines if second["run_id"] in line)
    log = Path(first["source"]).name
    assert log in row and "log" in header and "run min" in header
    # "unknown" sits under "run min", right-aligned as the column's numbers are.
    assert row.index("unknown") + len("unknown") == header.index("run min") + len("run min")
    assert row.count("unknown") == 2, row
    assert other.split()[-2] == "tok" and "samples/s" in header, (header, other)
    # The longest format and status there are widen their columns; the log's name gives way.
    wider["runs"][2].update(format="nemo-printer", outcome="incomplete")
    lines = runs_text(wider)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    header = next(line for line in lines if line.lstrip().startswith("run "))
    long = next(line for line in lines if wider["runs"][2]["run_id"] in line)
    assert long.index("incomplete") == header.index("status"), (header, long)
    assert "…" in long and long.index("nemo-printer") == header.index("format"), long


@settings(max_examples=300, deadline=None)
@given(
    document=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
        ),
        max_leaves=30,
    )
)
def test_json_pieces_join_as_json_dumps_with_indent_2(document: object) -> None:
    """Character for character, but a float that is not finite is null: JSON has no NaN."""
    from trntui.commands import json_pieces

    def finite(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: finite(item) for key, item in value.items()}
        if isinstance(value, list):
            return [finite(item) for item in value]
        return value

    expected = json.dumps(finite(document), indent=2, allow_nan=False)
    assert "".join(json_pieces(document)) == expected
    # A list of dicts is encoded some dicts at a time: the pieces join up at every size.
    for batch in (1, 2, 3):
        assert "".join(json_pieces(document, batch)) == expected


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "{missing}", "--json"),
        ("estimate", "{missing}", "--json"),
        ("import", "{missing}", "{project}", "--json"),
        ("price", "list", "{missing}", "--json"),
        ("price", "fetch", "--region", "../x", "--json"),  # refused by argparse
        ("price", "fetch", "--offline", "--region", "eu-west-3", "--json"),  # nothing cached
    ],
)
def test_a_command_asked_for_json_reports_its_error_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    """Issue 26, item 10: `price fetch --json` printed a plain-text error. With --json, stdout
    holds exactly one JSON object, {"error": ...}, and the exit status is as without it."""
    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    capsys.readouterr()
    filled = [a.format(missing=tmp_path / "nowhere", project=project) for a in args]
    try:
        code = main(filled)
    except SystemExit as exited:  # argparse's refusal
        code = exited.code
    out, err = capsys.readouterr()
    assert code == 2
    document = json.loads(out)
    assert list(document) == ["error"] and document["error"]
    assert "error" in err and "Traceback" not in err


def test_import_json_speaks_of_the_files_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: `import --json` of one file printed every run of the project."""
    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    for name, spec in (("a", loggen.NxdSpec()), ("b", loggen.NxdSpec(seed=2))):
        log = tmp_path / name / "nxd.log"
        log.parent.mkdir()
        loggen.write_nxd(log, spec)
        assert main(["import", str(project), str(log), "--set", f"set-{name}"]) == 0
    capsys.readouterr()
    assert main(["import", str(project), str(tmp_path / "b" / "nxd.log"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [entry["outcome"] for entry in document["imported"]] == ["duplicate"]
    assert [run["set"] for run in document["runs"]] == ["set-b"]
    assert [entry["name"] for entry in document["sets"]] == ["set-b"]


class _Ended(Exception):
    """Raised by a stand-in for ``os._exit`` with the status it was given."""


def _ends_with(
    monkeypatch: pytest.MonkeyPatch, *argv: str, threads: tuple[threading.Thread, ...] = ()
) -> int | None:
    """Run the console script's ``run`` with ``argv``: the status it ended the process with at
    once (``os._exit``, after the exit functions ran), or None when it returned to let the
    interpreter exit. This process's own exit functions (pytest's) are not run: a stand-in
    records that they would have been, before the end. The threads ``run`` sees are the main
    one and ``threads``, not the test runner's own."""
    order: list[str] = []

    def ended(code: int) -> None:
        order.append("end")
        raise _Ended(code)

    monkeypatch.setattr(sys, "argv", ["trntui", *argv])
    monkeypatch.setattr("os._exit", ended)
    monkeypatch.setattr(threading, "enumerate", lambda: [threading.main_thread(), *threads])
    monkeypatch.setattr("atexit._run_exitfuncs", lambda: order.append("exit functions"))
    try:
        run()
    except _Ended as end:
        assert order == ["exit functions", "end"]
        return int(end.args[0])
    assert order == []
    return None


def test_a_headless_command_ends_the_process_at_once_after_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: the interpreter's teardown cost an import of a 109 MB log 0.03-0.05 s of CPU.
    The console script ends the process itself, with the command's status, once its output is
    flushed and the project's lock released (the lock file no longer names the holder)."""
    project = tmp_path / "project"
    assert _ends_with(monkeypatch, "init", str(project)) == 0
    log = tmp_path / "nxd.log"
    loggen.write_nxd(log, loggen.NxdSpec())
    assert _ends_with(monkeypatch, "import", str(project), str(log), "--json") == 0
    out = capfd.readouterr().out
    assert out.startswith("Created trntui project")
    document = json.loads(out[out.index("{") :])
    assert [entry["outcome"] for entry in document["imported"]] == ["added"]
    assert (project / LOCK_FILE).read_bytes() == b""
    assert _ends_with(monkeypatch, "import", str(project), str(tmp_path / "none.log")) == 1


def test_the_process_ends_as_usual_while_a_lock_is_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A write lock still held at the end is released by the interpreter's exit (which clears
    the holder's name from the lock file): the process is not ended before that."""
    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    with Project.open(project):
        assert _ends_with(monkeypatch, "init", str(tmp_path / "other")) is None
    assert _ends_with(monkeypatch, "init", str(tmp_path / "third")) == 0


def test_the_process_ends_as_usual_while_a_thread_it_would_wait_for_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thread that is no daemon is waited for by the interpreter's exit: the process is not
    ended under it (a daemon thread does not hold it)."""
    release = threading.Event()
    waited = threading.Thread(target=release.wait, daemon=False)
    waited.start()
    try:
        assert _ends_with(monkeypatch, "init", str(tmp_path / "one"), threads=(waited,)) is None
    finally:
        release.set()
        waited.join()
    daemon = threading.Thread(target=release.wait, daemon=True)
    release.clear()
    daemon.start()
    try:
        assert _ends_with(monkeypatch, "init", str(tmp_path / "two"), threads=(daemon,)) == 0
    finally:
        release.set()
        daemon.join()


def test_the_exit_functions_run_before_a_headless_command_ends(tmp_path: Path) -> None:
    """What the interpreter's exit would run (``atexit``) still runs, in a real process."""
    code = (
        "import atexit, sys\n"
        "from trntui.cli import run\n"
        "atexit.register(lambda: print('exit function ran', flush=True))\n"
        f"sys.argv = ['trntui', 'init', {str(tmp_path / 'p')!r}]\n"
        "run()\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "exit function ran", done.stdout
    assert "not reached" not in done.stdout
    assert (tmp_path / "p" / PROJECT_FILE).is_file()


def test_an_import_loads_polars_without_the_collectors_passes(tmp_path: Path) -> None:
    """Issue 29: the garbage collector passed over Polars' and the store's modules as they
    loaded (13 ms of CPU per import). The command line's import loads them with it paused and
    keeps them out of its later passes (``gc.freeze``); it runs again after. Called where Polars
    is loaded already (in process), the import leaves the collector as it was."""
    root = tmp_path / "p"
    assert main(["init", str(root)]) == 0
    log = tmp_path / "nxd.log"
    loggen.write_nxd(log, loggen.NxdSpec())
    probe = (
        "import gc, sys\n"
        "from trntui.cli import main\n"
        f"code = main(['import', {str(root)!r}, {str(log)!r}])\n"
        "print(code, 'polars' in sys.modules, gc.isenabled(), gc.get_freeze_count() > 1000)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip().splitlines()[-1] == "0 True True True", result.stdout
    frozen = gc.get_freeze_count()
    assert main(["import", str(root), str(log)]) == 0  # a duplicate, with Polars loaded
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_estimate_text_fits_80_columns(sample_dir: Path, capsys) -> None:
    """A user review read 12 of the sample estimate's 46 lines wider than 80 columns (up to
    223: a decision fact); over SSH each broke mid-word. Its prose now wraps, hanging under
    its first word, and no line is wider than 80."""
    from trntui.cli import main

    assert main(["estimate", str(sample_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    decision = lines.index("Decision: pause")
    facts = lines[decision + 1 :]
    assert facts and all(line.startswith(("  - ", "    ")) for line in facts), facts


def test_scenario_list_fits_80_columns(sample_dir: Path, capsys) -> None:
    """The sample's two snapshots were listed on lines of 142 and 152 characters: each now
    gives its name, time and note, then its totals by target, within 80 columns."""
    from trntui.cli import main

    assert main(["scenario", "list", str(sample_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    at = next(n for n, line in enumerate(lines) if line.startswith("as-measured "))
    assert "$28.21" in lines[at + 1] and lines[at + 1].startswith("    "), lines


def test_price_list_fits_80_columns_with_each_note_under_the_tables(
    sample_dir: Path, capsys
) -> None:
    """The sample's price list had lines of 164-195 characters: a notes column and a rate's
    source inside the tables. The tables now fit 80 columns and each quote's notes and each
    rate's source follow them, wrapped, naming the quote or rate they belong to."""
    from trntui.cli import main
    from trntui.store.quotes import load_quote_book

    assert main(["price", "list", str(sample_dir)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    book = load_quote_book(sample_dir)
    joined = " ".join(out.split())
    for quote in book.quotes:
        assert f"{quote.instance_type} {quote.purchase_option} in {quote.region}: " in joined
    for rate in book.rates:
        assert f"{rate.service.value} (manual): {rate.source_note}" in joined
