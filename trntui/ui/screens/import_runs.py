"""Import run logs: choose files, preview what was understood, then store.

Parsing runs in a thread worker with a progress bar; esc cancels it. Nothing is written until
the user confirms the preview, and the runs parsed for the preview are the ones stored, so a
file is read once.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Input, ProgressBar, Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from trntui.core.errors import UserError
from trntui.core.format import distinct_labels, plural
from trntui.core.run_facts import QualityTarget, RunFacts, run_facts
from trntui.core.timeline import ImportedRun
from trntui.importers import FORMATS, Cancelled, capture_kind, detect_format, import_file
from trntui.importers.mapped import (
    ColumnMapping,
    RawTable,
    mapped_run,
    read_table,
    suggest_mapping,
)
from trntui.store.mappings import remembered_mapping
from trntui.store.run_import import expand_paths
from trntui.store.runs import ADDED, DUPLICATE, REFRESHED, default_set_name, load_runs
from trntui.ui.format import UNKNOWN
from trntui.ui.screens.dialog import after_typing, field_row
from trntui.ui.screens.mapping import MappingScreen
from trntui.ui.screens.worker_modal import WorkerModal
from trntui.ui.session import Session
from trntui.ui.text import cell
from trntui.ui.widgets.path_suggester import PathSuggester
from trntui.ui.widgets.text_field import TextField

AUTO = "auto"


TABULAR_SUFFIXES = (".csv", ".jsonl", ".ndjson")
"""Files of no known format that are offered the column mapping. Plain ``.json`` is not: in a
folder of logs it is usually a side file (MLPerf's ``scaling.json``)."""


FILE_CELLS = 20
"""The preview's file names are cut to this many cells (``distinct_labels``)."""


@dataclass(frozen=True)
class PreviewItem:
    path: Path
    run: ImportedRun | None = None
    facts: RunFacts | None = None
    error: str | None = None
    already_imported: bool = False
    table: RawTable | None = None
    """A CSV/JSONL log of no known format: it needs a column mapping (``m``)."""
    mapping: ColumnMapping | None = None
    """The mapping the run was read with; remembered for this file shape when stored."""
    capture: str | None = None
    """A utilization capture (``neuron-monitor``, ``nvidia-smi``): attached to a run, not
    imported."""


@dataclass(frozen=True)
class Imported:
    """What the dialog stored: the line for the status bar, and the runs stored (added, read
    again or already there), which the Runs table then shows."""

    summary: str
    run_ids: tuple[str, ...]
    changed: int
    """How many of them the import added or read again (the others were there already)."""


class ImportRunsScreen(WorkerModal[Imported | None]):
    DEFAULT_CSS = """
    ImportRunsScreen #preview { height: 1fr; }
    ImportRunsScreen #progress { width: 1fr; }
    ImportRunsScreen #message { height: auto; max-height: 5; }
    """

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"map_columns"})
    """Actions that open a dialog: keys typed right after wait for it (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding("ctrl+s", "store", "Import", priority=True, id="import.store"),
        Binding("m", "map_columns", "Map columns", id="import.map"),
        Binding("escape", "cancel", "Cancel", id="import.cancel"),
    ]
    AUTO_FOCUS = "#paths"

    def __init__(
        self,
        session: Session,
        target: QualityTarget | None,
        planned_steps: int | None = None,
        measured_sets: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.session = session
        """Stores the runs (``Session.store_run``); the project's folder for reading."""
        self.root = session.root
        self.target = target
        self._file_names: list[str] = []
        """The names of the files being previewed (their cells are cut so they stay apart)."""
        self.planned_steps = planned_steps
        """The goal's planned steps: the preview judges runs as the Runs table will."""
        self.measured_sets = measured_sets
        """The run sets the inventory's targets are measured by."""
        self.items: list[PreviewItem] = []
        self._storing = False

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Import run logs"
            yield field_row(
                "Paths",
                TextField(
                    placeholder="files or folders, space-separated (quote spaces)",
                    compact=True,
                    id="paths",
                    suggester=PathSuggester(),
                    select_on_focus=False,  # coming back to add a path keeps those typed
                ),
            )
            options = [("detect automatically", AUTO)]
            options += [(f"{name}: {text}", name) for name, text in FORMATS.items()]
            yield field_row(
                "Format", Select(options, value=AUTO, allow_blank=False, compact=True, id="format")
            )
            yield field_row(
                "Run set",
                TextField(
                    placeholder="name for repeated runs (default: <parent>/<folder> of each log)",
                    compact=True,
                    id="set",
                ),
            )
            yield ProgressBar(total=1.0, show_eta=False, id="progress")
            table: DataTable[str] = DataTable(id="preview", cursor_type="row")
            yield table
            yield Static("", id="message")
            yield Static(
                "enter preview   m map CSV/JSONL columns   ctrl+s import   esc cancel",
                classes="hint",
            )

    def on_mount(self) -> None:
        table = self.query_one("#preview", DataTable)
        for label in ("File", "Format", "Status", "Run min", "Steady", "Note"):
            table.add_column(label)

    @on(Input.Submitted)
    def _preview_requested(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            paths = [
                Path(p).expanduser() for p in shlex.split(self.query_one("#paths", Input).value)
            ]
        except ValueError as error:
            self._message(f"Paths: {error}", error=True)
            return
        if not paths:
            self._message("Type at least one file or folder.", error=True)
            return
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            self._message(f"Not found: {', '.join(missing)}", error=True)
            return
        fmt = self.query_one("#format", Select).value
        self.items = []
        self.query_one("#preview", DataTable).clear()
        self._message("Reading...")
        self._worker = self._parse(paths, None if fmt == AUTO else str(fmt))

    @work(thread=True, exclusive=True, group="import", exit_on_error=False)
    def _parse(self, paths: list[Path], fmt: str | None) -> list[PreviewItem]:
        worker = get_current_worker()
        files = expand_paths(paths)
        self.app.call_from_thread(setattr, self, "_file_names", [path.name for path, _ in files])
        known = set(load_runs(self.root)["sha256"].to_list())
        items: list[PreviewItem] = []
        for index, (path, named) in enumerate(files):
            if worker.is_cancelled:
                break

            def progress(fraction: float, index: int = index) -> None:
                self.app.call_from_thread(self._progress, (index + fraction) / len(files))

            if fmt is None and (kind := capture_kind(path)) is not None:
                item = PreviewItem(path, capture=kind)
                items.append(item)
                self.app.call_from_thread(self._add_preview_row, item)
                continue
            detected = fmt or _detected(path)
            if detected is None and path.suffix.lower() in TABULAR_SUFFIXES:
                item = self._tabular(path, known)
                items.append(item)
                self.app.call_from_thread(self._add_preview_row, item)
                continue
            if not named and detected is None:
                continue  # a file in a folder that is not a log: skipped quietly
            try:
                run = import_file(
                    path, format=detected, progress=progress, cancel=lambda: worker.is_cancelled
                )
            except Cancelled:
                break
            except UserError as error:
                item = PreviewItem(path, error=str(error))
            else:
                item = self._item(path, run, known)
            items.append(item)
            self.app.call_from_thread(self._add_preview_row, item)
        return items

    def _item(self, path: Path, run: ImportedRun, known: set[str], **extra: object) -> PreviewItem:
        return PreviewItem(
            path,
            run=run,
            facts=run_facts(run, self.target, self.planned_steps),
            already_imported=run.metadata.sha256 in known,
            **extra,  # type: ignore[arg-type]
        )

    def _tabular(self, path: Path, known: set[str]) -> PreviewItem:
        """A CSV/JSONL log: read it with the mapping remembered for its shape, if any."""
        try:
            table = read_table(path)
        except UserError as error:
            return PreviewItem(path, error=str(error))
        mapping = remembered_mapping(self.root, table.columns)
        if mapping is None:
            return PreviewItem(path, table=table)
        try:
            run = mapped_run(table, mapping)
        except UserError as error:
            return PreviewItem(path, error=str(error), table=table)
        return self._item(path, run, known, table=table, mapping=mapping)

    def action_map_columns(self) -> None:
        """Open the column mapping of the selected CSV/JSONL file."""
        table = self.query_one("#preview", DataTable)
        if self.busy or not self.items or table.cursor_row < 0:
            return
        index = table.cursor_row
        item = self.items[index]
        if item.table is None:
            self._message("Only CSV and JSONL files need a column mapping.")
            return
        origin = "remembered for this file shape" if item.mapping else "from the column names"
        mapping = item.mapping or suggest_mapping(item.table.columns)
        self.app.push_screen(
            MappingScreen(item.table, item.path.name, mapping, origin),
            lambda chosen: self._mapped(index, chosen),
        )

    def _mapped(self, index: int, mapping: ColumnMapping | None) -> None:
        item = self.items[index]
        if mapping is None or item.table is None:
            return
        known = set(load_runs(self.root)["sha256"].to_list())
        try:
            run = mapped_run(item.table, mapping)
        except UserError as error:
            self.items[index] = PreviewItem(item.path, error=str(error), table=item.table)
        else:
            self.items[index] = self._item(item.path, run, known, table=item.table, mapping=mapping)
        self._show_all_rows()

    def _show_all_rows(self) -> None:
        self.query_one("#preview", DataTable).clear()
        for item in self.items:
            self._add_preview_row(item)

    def _progress(self, fraction: float) -> None:
        self.query_one("#progress", ProgressBar).update(progress=fraction)

    def _add_preview_row(self, item: PreviewItem) -> None:
        table = self.query_one("#preview", DataTable)
        # Cut where names differ, so a log and its capture (``trn3-run1.log``,
        # ``trn3-run1.neuron-monitor.jsonl``) and the captures of runs 1-3 stay apart.
        names = {*self._file_names, *(other.path.name for other in self.items), item.path.name}
        name = distinct_labels(sorted(names), FILE_CELLS)[item.path.name]
        facts = item.facts
        if item.capture:
            row = (name, item.capture, "telemetry", "-", "-", "attach: t in the run's detail")
        elif item.error:
            note = item.error.replace(str(item.path), "").lstrip(":; ")
            row = (name, "-", "error", "-", "-", note)
        elif item.run is None:
            row = (name, "csv/jsonl", "needs mapping", "-", "-", "select it and press m")
        else:
            assert facts is not None and item.run is not None
            note = "already imported" if item.already_imported else ""
            if item.mapping is not None:
                note = note or "mapped columns (m to change)"
            row = (
                name,
                item.run.metadata.format,
                facts.outcome,
                UNKNOWN if facts.run_s is None else f"{facts.run_s / 60:.2f}",
                UNKNOWN
                if facts.steady_throughput is None
                else f"{facts.steady_throughput:,.4g} {facts.throughput_unit or ''}",
                note,
            )
        table.add_row(*(cell(text) for text in row))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "import":
            return
        if event.state == WorkerState.SUCCESS and event.worker.name == "_parse":
            self.items = event.worker.result or []
            good = [i for i in self.items if i.run is not None and not i.already_imported]
            bad = [i for i in self.items if i.error]
            unmapped = [i for i in self.items if i.run is None and i.table is not None]
            captures = [i for i in self.items if i.capture]
            self._progress(1.0)
            if not self.items:
                self._message("No training logs found there.", error=True)
            else:
                text = f"{plural(len(good), 'run')} ready to import"
                if good:
                    text += f" into {self._sets_text(good)}"
                already = [i for i in self.items if i.already_imported]
                if already:
                    text += f"; {len(already)} already imported (the same log), left out"
                if bad:
                    text += f"; {plural(len(bad), 'file')} cannot be imported: {bad[0].error}"
                if unmapped:
                    text += (
                        f"; {plural(len(unmapped), 'CSV/JSONL file')} "
                        f"{'needs' if len(unmapped) == 1 else 'need'} a column mapping (m)"
                    )
                if captures:
                    text += (
                        f"; {plural(len(captures), 'utilization capture')}, not imported: "
                        "attach each to its run with t in the run's detail"
                    )
                if good:
                    text += f". ctrl+s imports {'it' if len(good) == 1 else 'them'}"
                self._message(text + ".", error=bool(bad))
        elif event.state == WorkerState.CANCELLED:
            self._message("Cancelled: nothing was imported.")
        elif event.state == WorkerState.ERROR:
            if self._storing:
                self.session.runs_imported(None)  # the runs stored before the error stay
            self._storing = False
            self._message(f"Import failed: {event.worker.error}", error=True)
        elif event.state == WorkerState.SUCCESS and event.worker.name == "_store":
            imported = event.worker.result
            assert imported is not None  # _store returned what it stored
            self.session.runs_imported(imported.changed)
            self.dismiss(imported)

    def _sets_text(self, items: list[PreviewItem]) -> str:
        """The run set(s) the items go into, and whether a target is measured by them: a set
        no target names is imported but left out of every estimate."""
        typed = self.query_one("#set", Input).value.strip()
        names = sorted({typed or default_set_name(item.path) for item in items})
        used = self.measured_sets
        shown = ", ".join(repr(name) for name in names[:3]) + (" ..." if len(names) > 3 else "")
        text = f"set{'s' if len(names) > 1 else ''} {shown}"
        unused = [name for name in names if name not in used]
        if unused:
            text += (
                " (no target is measured by "
                + ("it" if len(unused) == len(names) == 1 else f"{len(unused)} of them")
                + ": type another set name, or pick it as a target's run set on Inventory)"
            )
        return text

    @after_typing
    def action_store(self) -> None:
        ready = [i for i in self.items if i.run is not None and not i.already_imported]
        if self.busy:
            self._message("Still reading: wait for the preview, or esc to cancel.")
            return
        if not ready:
            if any(i.already_imported for i in self.items):
                why = "every run previewed is already imported"
            elif self.items:
                why = "no file previewed holds a run that can be imported"
            else:
                why = "preview files first (enter)"
            self._message(f"Nothing new to import: {why}.", error=True)
            return
        set_name = self.query_one("#set", Input).value.strip() or None
        self._storing = True
        self._message(f"Storing {plural(len(ready), 'run')}...")
        self._worker = self._store(ready, set_name)

    def action_cancel(self) -> None:
        """Reading can be cancelled; storing cannot (it is quick, and a half-stopped batch
        would leave the user guessing which runs made it)."""
        if self.busy and self._storing:
            self._message("Storing the runs: this finishes in a moment.")
            return
        super().action_cancel()

    @work(thread=True, exclusive=True, group="import", exit_on_error=False)
    def _store(self, ready: list[PreviewItem], set_name: str | None) -> Imported:
        added = duplicates = refreshed = 0
        run_ids = []
        for item in ready:
            assert item.run is not None
            mapping = None
            if item.mapping is not None and item.table is not None:
                mapping = (item.table.columns, item.mapping)
            outcome = self.session.store_run(
                item.run, set_name or default_set_name(item.path), mapping=mapping
            )
            if outcome.run_id is not None:
                run_ids.append(outcome.run_id)
            added += outcome.outcome == ADDED
            duplicates += outcome.outcome == DUPLICATE
            refreshed += outcome.outcome == REFRESHED
        text = f"Imported {plural(added, 'run')}"
        if refreshed:
            text += f", {refreshed} read again with today's rules"
        if duplicates:
            text += f", {duplicates} already present"
        return Imported(text, tuple(run_ids), added + refreshed)


def _detected(path: Path) -> str | None:
    """The file's format, or ``None`` when it is not a log trntui recognises."""
    try:
        return detect_format(path)
    except UserError:
        return None
