"""A team's archive (``team_archive.py``: about 10,000 runs in 1,000 run sets, families of ten
sizes) against the sample project it grew from (13 runs in 2 sets).

Rows (issue 29's targets in brackets):

* ``trntui estimate DIR --json``, whole processes in alternating pairs: median wall and CPU
  seconds and the largest peak memory of each (<= 2x the sample's time; memory <= 2x the
  sample's plus the facts' own size: the runs and facts tables as Polars holds them);
* the app's first frame in an 80x24 tmux pane (``bench_first_frame.seconds_until``), in
  alternating pairs (<= 1.2x the sample's);
* the Runs table, in process (headless, 80x24): the time from a key to the first frame
  Textual writes after it, and to the last one (the key's whole effect: the table refilled,
  the set lines and the highlighted run's plot, which a worker reads), for down and page-down
  through the table and for typing a filter and deleting it again (no key's last frame over
  50 ms); the sample's the same keys, as the yardstick;
* the Scale tab's work for the GPU baseline, whose run set is one of a family of ten sizes:
  ``scale_plan`` in process, median of 7 (under 200 ms).

Run: ``python benchmarks/bench_team_archive.py [--pairs 5] [--archive DIR] [--mlperf FOLDER]
[--unnamed] [--before TRNTUI] [--estimate-only]`` (``--archive``: a folder to keep the archive
in and use again; built there when missing, which takes a minute or more; ``--unnamed``: a copy
of it with every ``family =`` line removed from ``runs/sets.toml``, so its families are
grouped automatically; ``--before``: another trntui's command, e.g. an older checkout's
``.venv/bin/trntui``, whose ``estimate --json`` of both projects is measured in the same
rounds, with the ratio each gets; ``--estimate-only``: only the first row).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import polars as pl

from benchmarks.bench_cli_start import child_usage, trntui_command
from benchmarks.team_archive import MLPERF, SAMPLE, build_archive

FRAME_BUDGET_S = 0.050
FILTER = "oracle"
TRAILING_S = 0.2
"""How long after a key has settled its last frames are waited for."""


def estimate_row(small: Path, big: Path, pairs: int, before: str | None = None) -> None:
    trntuis = {"": trntui_command(), " (before)": [before]} if before else {"": trntui_command()}
    commands = {
        f"{name}{which}": [*trntui, "estimate", str(root), "--json"]
        for which, trntui in trntuis.items()
        for name, root in (("sample", small), ("archive", big))
    }
    for command in commands.values():
        child_usage(command)  # warm the page and bytecode caches
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for index in range(pairs):
        order = list(commands) if index % 2 == 0 else list(reversed(commands))
        for name in order:
            seconds, usage = child_usage(commands[name])
            runs[name].append((seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    wall = {n: statistics.median(r[0] for r in rs) for n, rs in runs.items()}
    cpu = {n: statistics.median(r[1] for r in rs) for n, rs in runs.items()}
    peak = {n: max(r[2] for r in rs) for n, rs in runs.items()}
    spread = {n: (min(r[0] for r in rs), max(r[0] for r in rs)) for n, rs in runs.items()}
    facts_mib = sum(
        pl.read_parquet(big / "runs" / name).estimated_size("mb")
        for name in ("runs.parquet", "facts.parquet")
    )
    print(f"estimate --json, {pairs} alternating rounds (median; wall min-max)")
    for name in commands:
        low, high = spread[name]
        print(f"  {name:17} {wall[name]:6.3f} s ({low:.3f}-{high:.3f})  CPU {cpu[name]:6.3f} s  "
              f"peak {peak[name]:5.0f} MiB")  # fmt: skip
    for which in trntuis:
        archive, sample = f"archive{which}", f"sample{which}"
        ratio = wall[archive] / wall[sample]
        allowed = 2 * peak[sample] + facts_mib
        print(f"  {which.strip() or 'this trntui'}: time {ratio:.2f}x the sample "
              f"({'meets' if ratio <= 2 else 'misses'} <= 2x); "
              f"CPU {cpu[archive] / cpu[sample]:.2f}x")  # fmt: skip
        print(f"    memory {peak[archive]:.0f} MiB; 2x the sample's + the facts' "
              f"{facts_mib:.0f} MiB = {allowed:.0f} MiB "
              f"({'meets' if peak[archive] <= allowed else 'misses'})")  # fmt: skip


def unnamed_copy(archive: Path, dest: Path) -> Path:
    """A copy of ``archive`` at ``dest`` whose run sets name no family (every ``family =``
    line of ``runs/sets.toml`` removed): its families are grouped automatically."""
    shutil.copytree(archive, dest, ignore=shutil.ignore_patterns(".trntui.lock"))
    sets = dest / "runs" / "sets.toml"
    lines = sets.read_text(encoding="utf-8").splitlines(keepends=True)
    sets.write_text(
        "".join(line for line in lines if not line.startswith("family = ")), encoding="utf-8"
    )
    return dest


def first_frame_row(small: Path, big: Path, pairs: int) -> None:
    from bench_first_frame import seconds_until

    trntui = trntui_command()
    commands = {"sample": [*trntui, str(small)], "archive": [*trntui, str(big)]}
    for command in commands.values():
        seconds_until(command, "Project name")
    times: dict[str, list[float]] = {name: [] for name in commands}
    for index in range(pairs):
        order = list(commands) if index % 2 == 0 else list(reversed(commands))
        for name in order:
            times[name] += seconds_until(commands[name], "Project name")
    median = {name: statistics.median(t) for name, t in times.items()}
    ratio = median["archive"] / median["sample"]
    print(
        f"first frame at 80x24, {pairs} alternating pairs: archive {median['archive']:.3f} s, "
        f"sample {median['sample']:.3f} s, {ratio:.2f}x ({'meets' if ratio <= 1.2 else 'misses'}"
        " <= 1.2x)"
    )


async def _frames(root: Path) -> dict[str, list[float]]:
    """Seconds from each key to the first and to the last frame Textual writes, by kind of
    key, on the Runs screen of the project at ``root``."""
    from tests.ui_support import settle
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp

    with Project.open(root, allow_read_only=True, read_only=True) as project:
        return await _keys_to_frames(TrnTuiApp(project), "2", settle)


async def _keys_to_frames(app: Any, area_key: str, settle: Any) -> dict[str, list[float]]:
    """Run ``app`` headless at 80x24, show its runs table (``area_key`` first, if any) and
    time the keys: down and page-down five times each, then ``/``, the filter typed and
    deleted again."""
    from textual.app import App
    from textual.widgets import DataTable

    written: list[float] = []
    display = App._display

    def timed_display(self: App, screen: object, renderable: object) -> None:
        display(self, screen, renderable)  # type: ignore[arg-type]
        written.append(time.perf_counter())

    App._display = timed_display  # type: ignore[method-assign]
    frames: dict[str, list[float]] = {}
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            if area_key:
                await pilot.press(area_key)
            await settle(pilot)

            async def frame(kind: str, key: str) -> None:
                start, seen = time.perf_counter(), len(written)
                await pilot.press(key)
                await settle(pilot)
                # Frames a worker posts (the highlighted run's plot) come later still.
                await asyncio.sleep(TRAILING_S)
                after = written[seen:]
                if after:  # none: nothing to draw (the table's end)
                    frames.setdefault(f"{kind} first", []).append(after[0] - start)
                    frames.setdefault(kind, []).append(after[-1] - start)

            app.screen.query_one(DataTable).focus()
            await settle(pilot)
            for _ in range(5):
                await frame("down", "down")
                await frame("page-down", "pagedown")
            await frame("filter", "slash")
            for key in [*FILTER, *["backspace"] * len(FILTER)]:
                await frame("filter", key)
    finally:
        App._display = display  # type: ignore[method-assign]
    return frames


async def _plain_frames(root: Path) -> dict[str, list[float]]:
    """The same keys on the same screen in plain Textual, no trntui code: the floor of
    ``_frames``. A header line, a filter field mounted by ``/``, a zebra-striped row-cursor
    table of the project's first 200 runs in the narrow layout's eight columns (set, log,
    status and five figures, as text) refilled from a Polars filter at each keystroke (with
    its first 50 matches, as trntui while a filter is typed), three
    lines under it that follow the highlighted row's set, an eight-line panel, a status line
    and the footer."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Vertical
    from textual.widgets import DataTable, Footer, Input, Static

    from tests.ui_support import settle
    from trntui.ui.screens.runs import SHOWN_ROWS, TYPING_ROWS

    runs = (
        pl.read_parquet(root / "runs" / "runs.parquet")
        .sort("set_name", "source")
        .select(
            "run_id",
            "set_name",
            pl.col("source").str.split("/").list.last(),
            "status",
            *(pl.col(c).round(2).cast(pl.String) for c in ("run_s", "launch_to_result_s")),
            pl.col("steady_throughput").round(3).cast(pl.String),
            *(pl.col(c).cast(pl.String) for c in ("restarts", "redone_steps")),
        )
        .fill_null("unknown")
    )

    class Plain(App[None]):
        BINDINGS = [Binding("slash", "filter", "Filter")]

        def compose(self) -> ComposeResult:
            yield Static("Runs", id="bar")
            with Vertical(id="body"):
                yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="set")
                yield Static("\n" * 7, id="panel")
            yield Static("", id="status")
            yield Footer(compact=True)

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            for header in ("Set", "Log", "Status", "Run min", "Res min", "Steady", "Rst", "Redo"):
                table.add_column(header)
            self.fill("")

        def fill(self, text: str, rows: int = SHOWN_ROWS) -> None:
            table = self.query_one(DataTable)
            table.clear()
            shown = runs.filter(
                pl.col("set_name").str.contains(text, literal=True)
                | pl.col("source").str.contains(text, literal=True)
            )
            for row in shown.head(rows).iter_rows():
                table.add_row(*(str(cell)[:13] for cell in row[1:]), key=row[0])
            self.query_one("#status", Static).update(f"{shown.height:,} runs match {text!r}")

        async def action_filter(self) -> None:
            field = Input(placeholder="Filter", compact=True, id="filter")
            await self.query_one("#body").mount(field, before="#table")
            field.focus()

        def on_input_changed(self, event: Input.Changed) -> None:
            self.fill(event.value, TYPING_ROWS)  # as trntui does while a filter is typed

        def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
            row = runs.filter(pl.col("run_id") == event.row_key.value)
            if row.height:
                name = row["set_name"][0]
                members = runs.filter(pl.col("set_name") == name).height
                self.query_one("#set", Static).update(f"Set {name}: {members} runs\n\n")

    return await _keys_to_frames(Plain(), "", settle)


def runs_table_row(small: Path, big: Path) -> None:
    print(
        "Runs table, time from a key to its first frame and to its last (ms; budget "
        f"{FRAME_BUDGET_S * 1e3:.0f} for the last)"
    )
    for name, root, measure in (
        ("sample", small, _frames),
        ("plain", small, _plain_frames),
        ("archive", big, _frames),
        ("plain", big, _plain_frames),
    ):
        frames = asyncio.run(measure(root))
        worst = max(max(times) for kind, times in frames.items() if not kind.endswith("first"))
        cells = "  ".join(
            f"{kind} median {statistics.median(t) * 1e3:.0f} max {max(t) * 1e3:.0f}"
            for kind, t in frames.items()
        )
        verdict = "meets" if worst <= FRAME_BUDGET_S else "misses"
        print(f"  {name:8} {cells}  ({verdict})")


def scale_row(big: Path) -> None:
    from trntui.core.scale_plan import scale_plan
    from trntui.core.scaling import family_of
    from trntui.store.estimate_context import derive_and_store_context

    context = derive_and_store_context(big)
    target = next(t for t in context.inventory.targets if t.instance_type.startswith("p5"))
    family = family_of(context.families(), target.run_set)
    assert family is not None, "the archive puts the GPU baseline's set in a family"
    scale_plan(context, target.name)  # Polars' first use in the process is not the tab's
    times = []
    for _ in range(7):
        started = time.perf_counter()
        scale_plan(context, target.name)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(
        f"Scale tab for {target.name!r} (its family {family.name!r}, {len(family.points)} sizes): "
        f"median {median * 1e3:.0f} ms of 7 ({'meets' if median <= 0.2 else 'misses'} < 200 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--archive", type=Path, help="keep the archive here (built if missing)")
    parser.add_argument("--mlperf", type=Path, default=MLPERF)
    parser.add_argument(
        "--unnamed", action="store_true", help="a copy whose families are grouped automatically"
    )
    parser.add_argument("--before", help="another trntui command measured in the same rounds")
    parser.add_argument("--estimate-only", action="store_true", help="only estimate --json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trntui-bench-") as scratch:
        small = Path(scratch) / SAMPLE.name
        shutil.copytree(SAMPLE, small, ignore=shutil.ignore_patterns(".trntui.lock"))
        big = args.archive or Path(scratch) / "archive"
        if not (big / "trntui.toml").is_file():
            build_archive(big, mlperf=args.mlperf)
        if args.unnamed:
            big = unnamed_copy(big, Path(scratch) / "unnamed")
        runs = pl.read_parquet(big / "runs" / "runs.parquet")
        print(f"archive: {runs.height:,} runs in {runs['set_name'].n_unique():,} sets at {big}")
        estimate_row(small, big, args.pairs, args.before)
        if args.estimate_only:
            return
        first_frame_row(small, big, args.pairs)
        runs_table_row(small, big)
        scale_row(big)


if __name__ == "__main__":
    main()
