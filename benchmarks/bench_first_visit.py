"""The first visit of every area and dialog: the time from the key to the first frame that
shows it, in a process that has not shown it before (issue 26's target: under 300 ms on a
quiet 2-core machine).

Each pass is a fresh process (``--one``) that opens the sample project headless at 80x24 and
visits, in the order a user would, each area (digits) and dialog (its key), going back with
``escape`` after a dialog. A visit is timed from the key to the first frame Textual writes
while the new screen is the active one, and again to the moment its workers have finished
(what the screen loads after its first frame, such as the estimate or a table's rows).

The yardstick, in the same process before trntui's visits: the first visit of a plain
Textual screen holding a header, a data table and a footer, pushed the same way. Its ratio
says how far a visit is from Textual's own cost of a screen.

Run: ``python benchmarks/bench_first_visit.py [--passes 5] [--project DIR]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SAMPLE = ROOT / "sample_runs" / "llama2-70b-lora"
TARGET_S = 0.300

# (label, keys before the visit (already visited, untimed), the key, how to go back)
VISITS: tuple[tuple[str, tuple[str, ...], str, str | None], ...] = (
    ("Runs area (2)", (), "2", None),
    ("Import dialog (i on Runs)", (), "i", "escape"),
    ("Prices area (3)", (), "3", None),
    ("Fetch dialog (f on Prices)", (), "f", "escape"),
    ("Manual quote dialog (a on Prices)", (), "a", "escape"),
    ("Scenarios area (4)", (), "4", None),
    ("Override dialog (a on Scenarios > Inputs)", ("right_square_bracket",), "a", "escape"),
    ("Snapshot dialog (s on Scenarios)", (), "s", "escape"),
    ("Help (f1)", (), "f1", "escape"),
    ("Command palette (ctrl+p)", (), "ctrl+p", "escape"),
    ("Inventory area (1)", (), "1", None),
)


async def _visits(project_dir: Path) -> dict[str, tuple[float, float | None]]:
    from textual.app import App, ComposeResult
    from textual.screen import Screen
    from textual.widgets import DataTable, Footer, Header

    from tests.ui_support import settle
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp

    frames: list[tuple[float, object]] = []
    display = App._display

    def timed_display(self: App, screen: object, renderable: object) -> None:
        display(self, screen, renderable)  # type: ignore[arg-type]
        frames.append((time.perf_counter(), screen))

    App._display = timed_display  # type: ignore[method-assign]

    async def first_frame(app: App, pilot: object, key: str, before: object) -> float | None:
        start, seen = time.perf_counter(), len(frames)
        await pilot.press(key)  # type: ignore[attr-defined]
        while True:
            shown = [at for at, screen in frames[seen:] if screen is app.screen]
            if app.screen is not before and shown:
                return shown[0] - start
            if time.perf_counter() - start > 10:
                return None
            await asyncio.sleep(0.0005)

    class Plain(Screen[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            table: DataTable[str] = DataTable()
            table.add_columns("Run", "Set", "Status", "Minutes")
            for row in range(12):
                table.add_row(f"run {row}", "set", "ok", str(row))
            yield table
            yield Footer()

    class PlainApp(App[None]):
        BINDINGS = [("p", "push_plain", "Plain")]

        def action_push_plain(self) -> None:
            self.push_screen(Plain())

    results: dict[str, tuple[float, float | None]] = {}
    try:
        plain = PlainApp()
        async with plain.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            seconds = await first_frame(plain, pilot, "p", plain.screen)
            results["yardstick: a plain Textual screen"] = (seconds or float("nan"), None)
        with Project.open(project_dir) as project:
            app = TrnTuiApp(project)
            async with app.run_test(size=(80, 24)) as pilot:
                await settle(pilot)
                for label, keys_before, key, back in VISITS:
                    for before in keys_before:
                        await pilot.press(before)
                        await settle(pilot)
                    start = time.perf_counter()
                    seconds = await first_frame(app, pilot, key, app.screen)
                    await settle(pilot)
                    settled = time.perf_counter() - start
                    results[label] = (seconds or float("nan"), settled)
                    if back:
                        await pilot.press(back)
                        await settle(pilot)
    finally:
        App._display = display  # type: ignore[method-assign]
    return results


def one(project: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        # A copy: the visits open dialogs only, but the project's lock and caches are written.
        copy = Path(scratch) / "project"
        shutil.copytree(project, copy)
        print(json.dumps(asyncio.run(_visits(copy))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--project", type=Path, default=SAMPLE)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.project)
        return
    passes: list[dict[str, list[float | None]]] = []
    for _ in range(args.passes):
        out = subprocess.run(
            [sys.executable, __file__, "--one", "--project", str(args.project)],
            check=True, capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        passes.append(json.loads(out.stdout.strip().splitlines()[-1]))
    labels = list(passes[0])
    yard = statistics.median(p[labels[0]][0] for p in passes)  # type: ignore[misc]
    target_ms = TARGET_S * 1e3
    print(f"First visits, 80x24, medians of {args.passes} processes (target {target_ms:.0f} ms)")
    print(f"{'visit':<38} {'frame ms':>9} {'x plain':>8} {'settled ms':>11}  target")
    for label in labels:
        frame = statistics.median(p[label][0] for p in passes)  # type: ignore[misc]
        settled = [p[label][1] for p in passes if p[label][1] is not None]
        settled_ms = f"{statistics.median(settled) * 1e3:11.0f}" if settled else f"{'':>11}"
        verdict = "" if label == labels[0] else ("met" if frame <= TARGET_S else "NOT MET")
        print(f"{label:<38} {frame * 1e3:9.0f} {frame / yard:8.2f} {settled_ms}  {verdict}")


if __name__ == "__main__":
    main()
