"""Time to the first frame: ``trntui SAMPLE`` in an 80x24 tmux pane vs a blank Textual app.

Each run starts a detached tmux session at 80x24 and polls the pane until the first screen's
text is there (the Inventory's "Project name" field; the blank app's one line), as a user would
see it. Pairs alternate so machine noise hits both alike; prints the medians, their ratio
(issue 15's target: <= 1.5x) and, for trntui, the time until the estimate bar shows its totals.
Needs tmux. Run: ``python benchmarks/bench_first_frame.py [PAIRS] [--model-compiled]``
(default 5 pairs) from the repository root. ``--model-compiled`` adds an experiment to each
round (``MODEL_COMPILED``): trntui with the methods of its frozen dataclasses compiled ahead,
what another representation of the domain model could at best take off the first frame.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_cli_start import trntui_command

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "llama2-70b-lora"
BLANK_APP = """
from textual.app import App
from textual.widgets import Static

class Blank(App):
    def compose(self):
        yield Static("BLANK-READY")

Blank().run()
"""

SAME_WIDGETS_APP = """
import sys
from textual.app import App
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, OptionList, Select, Static

ROWS = [("Project name", "Llama-2-70B LoRA"), ("Description", "a fine-tune"),
        ("Owner", "ml-platform team"), ("Example data", None), ("Engineer day rate", "800")]

class Widgets(Screen):
    CSS = '''
    #nav { width: 20; border: tall $panel; }
    .row { height: 1; }
    .row Label { width: 20; }
    .row Input, .row Select { width: 1fr; }
    .bar { height: 1; }
    '''
    BINDINGS = [Binding(key, key, key) for key in ("escape", "ctrl+z", "f1", "1", "2")]

    def compose(self):
        yield Header()
        with Horizontal():
            yield OptionList(*[f"Section {n}" for n in range(11)], id="nav")
            with Vertical():
                yield Label("Project")
                yield Static("Name the project; 'Example data' marks illustrations.")
                for label, value in ROWS:
                    with Horizontal(classes="row"):
                        yield Label(label)
                        if value is None:
                            yield Select([("yes", True), ("no", False)], value=True, compact=True)
                        else:
                            yield Input(value, compact=True)
        yield Static("Trainium3 trial $28.21 . GPU baseline $39.73", classes="bar")
        yield Static("Trn3/GPU 0.71", classes="bar")
        yield Static("Editing the project", classes="bar")
        yield Footer(compact=True)

class AsDefaultScreen(App):
    CSS = Widgets.CSS
    BINDINGS = Widgets.BINDINGS

    def get_default_screen(self):
        return Widgets()

class AsMode(AsDefaultScreen):
    MODES = {"first": Widgets}
    DEFAULT_MODE = "first"

(AsMode if sys.argv[1:] == ["mode"] else AsDefaultScreen)().run()
"""
"""The first screen's widgets (a header, an 11-item section list, a title, a help line, five
form rows of label and input or select, three lines of bar and status, a compact footer) in a
plain Textual app: no trntui code, no project read. It shows what Textual itself takes to draw
what the first frame shows, against the blank app the target is set on: as the app's default
screen, as trntui shows its first area, and (argument ``mode``) as the screen of a mode, as
trntui showed it before 2026-12-02 (its other areas are modes, each keeping its screen). Textual
writes a mode's first frame later: the screen's first render falls inside the app's start-up
batch and is dropped, and the frame waits for the next."""


MODEL_COMPILED = """
import atexit, dataclasses, marshal, os

PATH = os.path.join(os.path.dirname(__file__), "compiled.marshal")
try:
    with open(PATH, "rb") as handle:
        CODES = marshal.load(handle)
except OSError:
    CODES = {}
FRESH = []
standard = dataclasses._create_fn


def create_fn(name, args, body, *, globals=None, locals=None, return_type=dataclasses.MISSING):
    if not (globals or {}).get("__name__", "").startswith("trntui."):
        return standard(name, args, body, globals=globals, locals=locals,
                        return_type=return_type)
    # Python 3.11's dataclasses._create_fn, with the compiled text kept between runs.
    locals = {} if locals is None else locals
    annotation = ""
    if return_type is not dataclasses.MISSING:
        locals["_return_type"] = return_type
        annotation = "->_return_type"
    body = "\\n".join(f"  {line}" for line in body)
    text = f" def {name}({','.join(args)}){annotation}:\\n{body}"
    text = f"def __create_fn__({', '.join(locals)}):\\n{text}\\n return {name}"
    if text not in CODES:
        CODES[text] = compile(text, "<string>", "exec")
        FRESH.append(text)
    made = {}
    exec(CODES[text], globals, made)
    return made["__create_fn__"](**locals)


def save():
    if FRESH:
        with open(PATH + ".new", "wb") as handle:
            marshal.dump(CODES, handle)
        os.replace(PATH + ".new", PATH)


if hasattr(dataclasses, "_create_fn"):  # Python 3.11 and 3.12
    dataclasses._create_fn = create_fn
    atexit.register(save)
"""
"""A ``sitecustomize`` for the ``--model-compiled`` experiment, never for use: the methods
Python's ``dataclasses`` writes for each of trntui's classes (``__init__``, ``__eq__``,
``__hash__``, ``__repr__``, the frozen ``__setattr__``) are compiled from text at every import,
about 0.5 ms a class; here their code is compiled once and read back (``marshal``) at the next
start. Only trntui's classes: Textual's and Rich's are built as in the blank app. What the
first frame gains is at most what any other representation of the model (one that compiles
nothing at import) could gain."""


def seconds_until(
    command: list[str], *markers: str, environment: dict[str, str] | None = None
) -> list[float]:
    """Seconds from starting ``command`` in tmux until each marker is on the screen;
    ``environment`` is added to the command's."""
    # A session of this process's own: two benchmarks run at once never share one.
    session = f"trntui-bench-{os.getpid()}"
    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    start = time.perf_counter()
    # Empty is unset for Python: the bytecode cache is used, as on a user's machine.
    variables = {"PYTHONDONTWRITEBYTECODE": ""} | (environment or {})
    settings = [part for name, value in variables.items() for part in ("-e", f"{name}={value}")]
    subprocess.run(
        ["tmux", "new", "-d", "-s", session, "-x", "80", "-y", "24", *settings, *command],
        check=True,
    )
    found: list[float] = []
    try:
        while len(found) < len(markers):
            screen = subprocess.run(
                ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
            ).stdout
            if markers[len(found)] in screen:
                found.append(time.perf_counter() - start)
                continue
            if time.perf_counter() - start > 60:
                raise SystemExit(f"never saw {markers[len(found)]!r} on the screen:\n{screen}")
            time.sleep(0.005)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    return found


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("this benchmark needs tmux")
    parser = argparse.ArgumentParser(description="Time to the first frame (module docstring).")
    parser.add_argument("pairs", nargs="?", type=int, default=5)
    parser.add_argument(
        "--model-compiled",
        action="store_true",
        help="also time trntui with its dataclasses' methods compiled ahead (MODEL_COMPILED)",
    )
    args = parser.parse_args()
    count = args.pairs
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / SAMPLE.name
        shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns(".trntui.lock"))
        blank = Path(tmp) / "blank.py"
        blank.write_text(BLANK_APP, encoding="utf-8")
        same = Path(tmp) / "same_widgets.py"
        same.write_text(SAME_WIDGETS_APP, encoding="utf-8")
        ours = [*trntui_command(), str(project)]
        frames, totals, blanks, sames, modes = [], [], [], [], []
        seconds_until([sys.executable, str(blank)], "BLANK-READY")  # warm the caches
        same_mode = [sys.executable, str(same), "mode"]
        seconds_until([sys.executable, str(same)], "Engineer day rate")
        seconds_until(same_mode, "Engineer day rate")
        seconds_until(ours, "Project name", "Trn3/GPU")
        compiled: list[float] = []
        experiment = {"PYTHONPATH": str(Path(tmp) / "model-compiled")}
        if args.model_compiled:
            Path(experiment["PYTHONPATH"]).mkdir()
            (Path(experiment["PYTHONPATH"]) / "sitecustomize.py").write_text(MODEL_COMPILED)
            # Compiles and keeps the code of the classes the first screen loads (a process
            # ended by tmux, as those below, runs no exit handler and keeps nothing).
            warm = "import trntui.cli, trntui.ui.app, trntui.ui.screens.inventory"
            subprocess.run([sys.executable, "-c", warm], env=os.environ | experiment, check=True)
            seconds_until(ours, "Project name", environment=experiment)
        for _ in range(count):
            blanks += seconds_until([sys.executable, str(blank)], "BLANK-READY")
            sames += seconds_until([sys.executable, str(same)], "Engineer day rate")
            modes += seconds_until(same_mode, "Engineer day rate")
            frame, total = seconds_until(ours, "Project name", "Trn3/GPU")
            frames.append(frame)
            totals.append(total)
            if args.model_compiled:
                compiled += seconds_until(ours, "Project name", environment=experiment)
    frame, blank_s, same_s, mode_s = (
        statistics.median(times) for times in (frames, blanks, sames, modes)
    )
    ratio = frame / blank_s
    print(
        f"first frame, median of {count}: trntui {frame:.3f} s, blank Textual app "
        f"{blank_s:.3f} s, ratio {ratio:.2f} ({'meets' if ratio <= 1.5 else 'misses'} <= 1.5); "
        f"estimate totals shown after {statistics.median(totals):.3f} s"
    )
    print(
        f"the same widgets in a plain Textual app (SAME_WIDGETS_APP): {same_s:.3f} s as its "
        f"default screen ({same_s / blank_s:.2f}x the blank app), {mode_s:.3f} s as a mode's "
        f"screen ({mode_s / blank_s:.2f}x); trntui, which shows its first area as the default "
        f"screen, is {frame / same_s:.2f}x the former"
    )
    if compiled:
        best = statistics.median(compiled)
        print(
            f"experiment, trntui with its dataclasses' methods compiled ahead (MODEL_COMPILED): "
            f"{best:.3f} s, {best / blank_s:.2f}x the blank app "
            f"({(frame - best) * 1000:.0f} ms less than trntui as it is)"
        )


if __name__ == "__main__":
    main()
