"""One open project in one app: the state a user changes, its one undo history, and what is
derived from it.

The App and every screen share one ``Session`` (a screen gets it in its constructor). It owns

* the open ``Project`` and the current ``Inventory`` (saved shortly after the last edit),
* the working scenario: the overrides in force and the GPU target Trainium3 is compared
  with, kept in ``working_scenario.toml`` (written at once on every change and undo, read
  when the project opens: they survive a restart),
* the single undo history: inventory edits, override changes, the GPU target chosen for the
  comparison, quote book changes and the run edits that are cheap to reverse (a set renamed
  or runs moved, a set's stated size, a recorded quality result) are steps on one stack, so
  ctrl+z anywhere undoes the most recent change, whichever screen made it. The run changes
  that cannot be taken back sensibly (a run removed: its timeline is deleted; an import; a
  capture attached) are barriers on it: ctrl+z there says that the change stays and how to
  reverse it, and undoes nothing older in that key press (the next one goes on),
* what the last estimate computed from them: the run facts (derived once per import and read
  by the Runs screen and the estimate alike), the estimate context and its prepared inputs.

Every change the UI makes to the project goes through a method here (the one writer path).
Each is written at once, but for inventory edits (saved shortly after); a saved snapshot is
not in the history (it changes nothing an estimate reads, so ctrl+z after it undoes the
change before it, as a person means). See "the runs" below for the run edits. An inventory
edit or an override is checked first: an invalid one is refused with the reason (a string)
and changes nothing; a write the store refuses raises, as the store does. Nothing here
knows Textual. Each change and each recompute's outcome is published on the session's
``signals`` (``SessionSignals``: typed, see ``ui/signals.py``), which screens and widgets
subscribe to; then the App, which ``listen``\\s, turns the change into a save timer and a
recompute.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from trntui.core.errors import UserError
from trntui.core.format import plural
from trntui.core.inventory import Inventory, InventoryInvalid
from trntui.store.project import Project
from trntui.store.project_store import ProjectStore
from trntui.ui.signals import Held, Signal

if TYPE_CHECKING:
    from trntui.core.estimate import EstimateContext, Override, TargetInputs
    from trntui.core.quality import RecordedQuality
    from trntui.core.quotes import PriceLookup, PriceQuote, QuoteBook, ServiceRate
    from trntui.core.report import Analysis
    from trntui.core.timeline import ImportedRun, SystemSize
    from trntui.importers import CancelCheck, Progress
    from trntui.importers.mapped import ColumnMapping
    from trntui.store.facts import DerivedRuns
    from trntui.store.runs import ImportOutcome
    from trntui.store.telemetry import AttachOutcome
    from trntui.store.working_scenario import WorkingScenario

UNDO_COALESCE_S = 2.0
"""Edits of the same field within this many seconds are one undo step (typing a number)."""
UNDO_LIMIT = 200

Change = Literal["inventory", "inventory-replaced", "overrides", "comparison", "quotes", "runs"]
"""What changed: ``inventory`` (an edit, the forms already show it), ``inventory-replaced``
(undo or reload: forms must show it again), ``overrides``, ``comparison`` (the GPU target
Trainium3 is compared with), ``quotes`` (the quote book on disk),
``runs`` (imported, removed, sized or moved runs: facts must be derived again)."""


RELOAD = "reload"
"""The label of the undo step a reload records (the inventory before it)."""


@dataclass(frozen=True)
class UndoStep:
    """One change that ctrl+z can take back: what it was called and the state before it."""

    kind: Literal["inventory", "overrides", "comparison", "working", "quotes", "runs", "kept"]
    label: str
    before: object
    """The state before; for a ``runs`` step what puts it back (``RunsMoved``, ``SizeStated``,
    ``QualityRecorded``); for a ``kept`` step (a barrier: a change ctrl+z does not take
    back) how a person reverses it, in words."""
    at: float
    after: object = None
    """For a quotes step: the book as the change left it. Undo puts ``before`` back only while
    the file still holds this (else the file was edited since, and that edit would be lost)."""


@dataclass(frozen=True)
class RunsMoved:
    """Runs of set ``old`` put in set ``new`` (the whole set: renamed), to put back."""

    run_ids: tuple[str, ...]
    old: str
    new: str
    stated_followed: bool
    """What was stated for ``old`` (its size, its family) went to ``new`` with the runs."""
    inventory: Inventory | None
    """The inventory before its targets followed the rename (None: they did not)."""


@dataclass(frozen=True)
class SizeStated:
    """The size stated for run set ``set_name``: before (None: none) and as the change left
    it, which undo checks the file still holds."""

    set_name: str
    before: SystemSize | None
    after: SystemSize | None


@dataclass(frozen=True)
class QualityRecorded:
    """The quality result recorded for ``run_id``: before (None: none) and as the change left
    it, which undo checks the file still holds."""

    run_id: str
    before: RecordedQuality | None
    after: RecordedQuality | None


@dataclass(frozen=True)
class Computed:
    """What one recompute produced from one inventory and one set of overrides: the run facts
    and the context always, the estimate unless ``problem`` says why not."""

    context: EstimateContext
    derived: DerivedRuns
    prepared: list[TargetInputs] | None = None
    analysis: Analysis | None = None
    problem: str | None = None


class SessionSignals:
    """What screens and widgets follow (subscribed once mounted; ``ui/signals.py``)."""

    def __init__(self) -> None:
        self.inventory: Signal[Inventory] = Signal("inventory")
        """The inventory was changed (an edit, an undo, a reload; or a reload took the lock):
        forms show it again where it differs, lists and checks follow."""
        self.quotes: Signal[None] = Signal("quotes")
        """The project's quote book changed (a change, or its undo): read it again."""
        self.runs: Signal[None] = Signal("runs")
        """The stored runs changed (imported, removed, sized, moved, a quality result or a
        capture): read them again."""
        self.recomputed: Signal[Computed] = Signal("recomputed")
        """A recompute finished: its run facts are derived, though its estimate may have
        failed (``Computed.problem``)."""
        self.analysis: Signal[Analysis] = Signal("analysis")
        """A recompute made a valid estimate, now ``Session.analysis``."""
        self.estimate_problem: Held[str] = Held("estimate_problem", "")
        """Why the last recompute failed ('' when it succeeded): the estimate bar shows it
        next to the last valid figures until a recompute succeeds."""
        self.status: Held[tuple[str, str]] = Held("status", ("", ""))
        """(message, level) for every screen's status line: what the last action did, or why
        it did not; level is '', 'warning' or 'error'."""


class Session:
    """The state of one open project (see the module docstring)."""

    def __init__(self, project: Project, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.project = project
        self.store = ProjectStore(project)
        """The open project with what this session derived from it (the app closes it)."""
        self.inventory: Inventory = project.inventory
        from trntui.store.working_scenario import read_working_scenario

        working = read_working_scenario(project.root)
        self.overrides: tuple[Override, ...] = working.overrides
        """The working scenario: the overrides in force (the estimate everywhere is computed
        with them), as ``working_scenario.toml`` holds them. A file that does not read raises
        ``InputFileError`` (file, line, what was expected), as a bad ``trntui.toml`` does."""
        self.gpu_target: str | None = working.gpu_target
        """The GPU target Trainium3 is compared with (the working scenario's ``gpu_target``;
        None: the first GPU target)."""
        self.dirty = False
        """The inventory holds edits not yet written to ``trntui.toml``."""
        self.history: list[UndoStep] = []
        self.computed: Computed | None = None
        """The last recompute (``None`` until the first one); its estimate may have failed."""
        self.prepared: list[TargetInputs] | None = None
        self.analysis: Analysis | None = None
        """The last valid estimate, comparison, sensitivity and resampling (a failed
        recompute never replaces it)."""
        self.invalid: dict[str, str] = {}
        """Fields holding typed text that does not parse (label -> why), kept by the screen
        that shows them so that quitting can say what would be lost."""
        self.signals = SessionSignals()
        self._clock = clock
        self._listeners: list[Callable[[Change], None]] = []
        self._typing: list[Callable[[], None]] = []

    # --- the project ---------------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def read_only(self) -> bool:
        return self.project.read_only

    @property
    def read_only_message(self) -> str:
        return f"Read-only: {self.project.read_only_reason}"

    @property
    def title(self) -> str:
        """The project as the top line names it: read-only first (a long name cut at 80
        columns never hides it), then the name, marked when it is example data."""
        project = self.inventory.project
        prefix = "[read-only] " if self.read_only else ""
        return f"{prefix}{project.name}{' (example data)' if project.example else ''}"

    @property
    def short_path(self) -> str:
        """The project file as folder/name: enough to recognise, short enough for 80 columns."""
        return f"{self.project.root.resolve().name}/{self.project.path.name}"

    def listen(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener`` after every change, once the screens follow it (the App: save,
        recompute)."""
        self._listeners.append(listener)

    def on_typing_kept(self, commit: Callable[[], None]) -> None:
        """``commit`` applies entries still being typed (a screen's forms); ``keep_typing``
        calls it before an explicit save or a quit, so those keep what was typed."""
        self._typing.append(commit)

    def keep_typing(self) -> None:
        if not self.read_only:
            for commit in self._typing:
                commit()

    def _changed(self, change: Change) -> None:
        if change in ("inventory", "inventory-replaced"):
            self.signals.inventory.publish(self.inventory)
        elif change == "quotes":
            self.signals.quotes.publish(None)
        elif change == "runs":
            self.signals.runs.publish(None)
        for listener in self._listeners:
            listener(change)

    def _record(self, step: UndoStep) -> None:
        self.history.append(step)
        del self.history[:-UNDO_LIMIT]

    # --- changes -------------------------------------------------------------------------

    def edit_inventory(self, inventory: Inventory, *, label: str) -> str | None:
        """Make ``inventory`` current (saved soon after); why not, when it is refused.

        The whole document is checked as a hand-edited file would be. Edits with the same
        label in quick succession are one undo step.
        """
        if (refused := self._refusal(inventory)) is not None:
            return refused
        now = self._clock()
        last = self.history[-1] if self.history else None
        coalesce = (
            last is not None
            and last.kind == "inventory"
            and last.label == label
            and now - last.at < UNDO_COALESCE_S
        )
        if not coalesce:
            self._record(UndoStep("inventory", label, self.inventory, now))
        self.inventory = inventory
        self.dirty = True
        self._changed("inventory")
        return None

    def follow_run_set_rename(self, old: str, new: str) -> str | None:
        """The targets follow a run set renamed on disk: the inventory names ``new`` where it
        named ``old``. No undo step of its own: the rename's step (``move_runs``) puts the
        inventory back with the runs, and the older steps, undone after it, name ``old``
        again as the runs do. Why not, when the inventory is refused."""
        inventory = self.inventory.with_run_set_renamed(old, new)
        if (refused := self._refusal(inventory)) is not None:
            return refused
        self.inventory = inventory
        self.dirty = True
        self._changed("inventory")
        return None

    def _refusal(self, inventory: Inventory) -> str | None:
        """Why ``inventory`` cannot be made current: read-only, or a value the file refuses
        (the whole document is checked as a hand-edited file would be)."""
        if self.read_only:
            return self.read_only_message
        try:
            Inventory.from_dict(inventory.to_dict())
        except InventoryInvalid as invalid:
            return f"Not saved: {invalid.problems[0].message}"
        return None

    def check_overrides(self, overrides: Sequence[Override]) -> str | None:
        """Why ``overrides`` cannot apply to the current inputs (``None`` when they can)."""
        if self.prepared is None:
            return None
        from trntui.core.estimate import apply_overrides

        try:
            apply_overrides(self.prepared, overrides)
        except UserError as error:
            return str(error)
        return None

    def set_overrides(self, overrides: Sequence[Override], *, label: str) -> str | None:
        """Make ``overrides`` the working scenario, written to ``working_scenario.toml`` at
        once (one undo step); refuse (with the reason) invalid ones, a read-only session, or a
        write the store refuses (nothing changes then)."""
        if self.read_only:
            return self.read_only_message
        problem = self.check_overrides(overrides) or self._write_working(
            tuple(overrides), self.gpu_target
        )
        if problem is not None:
            return problem
        self._record(UndoStep("overrides", label, self.overrides, self._clock()))
        self.overrides = tuple(overrides)
        self._changed("overrides")
        return None

    def use_working_scenario(
        self, overrides: Sequence[Override], gpu_target: str | None, *, label: str
    ) -> str | None:
        """Make ``overrides`` and the GPU target compared (None: no choice, the first GPU
        target) the working scenario, as a snapshot recorded them: written at once, one undo
        step for both; refused (with the reason) as ``set_overrides`` refuses."""
        if self.read_only:
            return self.read_only_message
        overrides = tuple(overrides)
        problem = self.check_overrides(overrides) or self._write_working(overrides, gpu_target)
        if problem is not None:
            return problem
        from trntui.store.working_scenario import WorkingScenario

        before = WorkingScenario(self.overrides, self.gpu_target)
        self._record(UndoStep("working", label, before, self._clock()))
        self.overrides, self.gpu_target = overrides, gpu_target
        self._changed("overrides")
        return None

    def _write_working(self, overrides: tuple[Override, ...], gpu_target: str | None) -> str | None:
        """Write the working scenario as given (``gpu_target`` None: no choice); why not,
        when the store refuses."""
        from trntui.store.working_scenario import save_working_scenario

        try:
            save_working_scenario(self.root, overrides, gpu_target)
        except (UserError, OSError) as error:
            return f"working scenario not saved: {error}"
        return None

    def compare_with(self, gpu_target: str) -> str | None:
        """Compare Trainium3 with the GPU target named ``gpu_target`` from now on: kept in the
        working scenario at once (a restart, ``trntui estimate`` and ``report`` compare the
        same two), one undo step (choices made within ``UNDO_COALESCE_S`` of each other, as
        ``t`` pressed a few times to walk the GPU targets, are one). Why not: read-only, or a
        write the store refuses (nothing changes then)."""
        if self.read_only:
            return self.read_only_message
        if (problem := self._write_working(self.overrides, gpu_target)) is not None:
            return problem
        now = self._clock()
        last = self.history[-1] if self.history else None
        if last is None or last.kind != "comparison" or now - last.at >= UNDO_COALESCE_S:
            self._record(
                UndoStep("comparison", f"comparing with {gpu_target}", self.gpu_target, now)
            )
        else:
            self.history[-1] = dataclasses.replace(last, label=f"comparing with {gpu_target}")
        self.gpu_target = gpu_target
        self._changed("comparison")
        return None

    def change_quotes(self, change: Callable[[Path], object], *, label: str) -> str | None:
        """Apply ``change`` to the project's quote book (``prices/quotes.toml``) as one undo
        step; why not, when the book cannot be read or written (nothing changes then)."""
        if self.read_only:
            return self.read_only_message
        from trntui.store.quotes import load_quote_book, save_quote_book

        try:
            before = load_quote_book(self.root)
        except (UserError, OSError) as error:
            return str(error)
        try:
            change(self.root)
        except (UserError, OSError) as error:
            # A change of several writes may have made some: put the book back as it was.
            try:
                if load_quote_book(self.root) != before:
                    save_quote_book(self.root, before)
            except (UserError, OSError):
                self._record(UndoStep("quotes", label, before, self._clock(), self._book_now()))
                self._changed("quotes")
                return f"{error} (partly stored; ctrl+z puts the book back as it was)"
            return str(error)
        self._record(UndoStep("quotes", label, before, self._clock(), self._book_now()))
        self._changed("quotes")
        return None

    def keep_fetched_prices(
        self,
        quotes: Sequence[PriceQuote],
        rates: Sequence[ServiceRate],
        misses: Sequence[PriceLookup],
        *,
        label: str,
    ) -> str | None:
        """Keep what a price fetch said (the quotes it found, its side rates, the types it
        found no price for) as one undo step; why not, as ``change_quotes``."""
        from trntui.store.quotes import add_rates, record_lookups

        def keep(root: Path) -> None:
            record_lookups(root, tuple(quotes), tuple(misses))
            if rates:
                add_rates(root, list(rates))

        return self.change_quotes(keep, label=label)

    def add_quote(self, quote: PriceQuote, *, label: str) -> str | None:
        """Add (or replace) one quote as one undo step; why not, as ``change_quotes``."""
        from trntui.store.quotes import add_quotes

        return self.change_quotes(lambda root: add_quotes(root, [quote]), label=label)

    def remove_quote(self, quote: PriceQuote, *, label: str) -> str | None:
        """Remove one quote as one undo step; why not, as ``change_quotes``."""
        from trntui.store.quotes import remove_quote

        return self.change_quotes(lambda root: remove_quote(root, quote.key), label=label)

    def pin_quote(self, quote: PriceQuote, pinned: bool, *, label: str) -> str | None:
        """Pin (or unpin) one manual quote as one undo step: a pinned manual quote is used over
        the price list's and counts as verified (``find_quote``; what ``trntui price add
        --pin`` stores). Why not: a price-list quote, a quote gone from the book since, or as
        ``change_quotes``."""
        from trntui.store.quotes import pin_quote

        return self.change_quotes(lambda root: pin_quote(root, quote.key, pinned), label=label)

    def add_rate(self, rate: ServiceRate, *, label: str) -> str | None:
        """Add (or replace) one side-service rate as one undo step; why not, as
        ``change_quotes``."""
        from trntui.store.quotes import add_rates

        return self.change_quotes(lambda root: add_rates(root, [rate]), label=label)

    def remove_rate(self, rate: ServiceRate, *, label: str) -> str | None:
        """Remove one side-service rate as one undo step; why not, as ``change_quotes``."""
        from trntui.store.quotes import remove_rate

        return self.change_quotes(
            lambda root: remove_rate(root, rate.service, rate.region, rate.manual), label=label
        )

    def _book_now(self) -> QuoteBook | None:
        """The quote book as the file holds it now (``None`` when it cannot be read)."""
        from trntui.store.quotes import load_quote_book

        try:
            return load_quote_book(self.root)
        except (UserError, OSError):
            return None

    # --- the runs: written at once; undone, or a barrier in the history ------------------
    # Each writes the project's run tables and then (``runs_changed``) derives the facts
    # again. A move, a stated size and a quality result are undo steps (``_undo_runs`` puts
    # back what was there through the same store writers, after checking that the files
    # still hold what the change left). A removed run (its timeline is deleted), an import
    # and an attached capture are barriers (``_keep``): ctrl+z says how each is reversed.
    # Store errors (``UserError``, ``OSError``) reach the caller, and then nothing is
    # published or recorded.

    def move_runs(
        self, run_ids: Sequence[str], old: str, new: str, *, whole_set: bool
    ) -> str | None:
        """Put ``run_ids`` (of set ``old``) in set ``new`` as one undo step. When they are the
        whole set, the set is renamed: its stated size and family follow, and so do the
        targets measured by it (``follow_run_set_rename``); why they could not, when their
        inventory is refused."""
        from trntui.store.runs import assign_set
        from trntui.store.set_sizes import rename_set

        before = self.inventory
        assign_set(self.root, run_ids, new)
        stated_followed = False
        if whole_set:
            try:
                stated_followed = rename_set(self.root, old, new)
            except (UserError, OSError):
                assign_set(self.root, run_ids, old)  # nothing half done
                raise
        problem = None
        if whole_set and self.inventory.with_run_set_renamed(old, new) != self.inventory:
            problem = self.follow_run_set_rename(old, new)
        label = (
            f"renaming run set {old!r} to {new!r}"
            if whole_set
            else f"moving {plural(len(run_ids), 'run')} to set {new!r}"
        )
        followed = before if self.inventory != before else None
        moved = RunsMoved(tuple(run_ids), old, new, stated_followed, followed)
        self._record(UndoStep("runs", label, moved, self._clock()))
        self.runs_changed()
        return problem

    def state_size(self, set_name: str, size: SystemSize) -> None:
        """State the system size of run set ``set_name`` (an assumption over its logs') as
        one undo step."""
        from trntui.store.set_sizes import load_stated_sizes, state_size

        before = load_stated_sizes(self.root).get(set_name)
        state_size(self.root, set_name, size)
        after = load_stated_sizes(self.root).get(set_name)
        stated = SizeStated(set_name, before, after)
        label = f"stating the size of run set {set_name!r}"
        self._record(UndoStep("runs", label, stated, self._clock()))
        self.runs_changed()

    def remove_run(self, run_id: str) -> None:
        """Remove a run and its timeline (its log file is kept: re-import to restore); a
        barrier in the undo history, which says so."""
        from trntui.store.runs import remove_run

        log = Path(remove_run(self.root, run_id)).name
        self._keep(f"removing run {run_id}", f"re-import {log} (i on Runs) to restore it")
        self.runs_changed()

    def record_quality(self, run_id: str, result: RecordedQuality) -> None:
        """Record a quality result measured outside the run's log (it replaces any before)
        as one undo step."""
        from trntui.store.quality import load_recorded_quality, record_quality

        before = load_recorded_quality(self.root).get(run_id)
        record_quality(self.root, run_id, result)
        after = load_recorded_quality(self.root).get(run_id)
        label = f"recording the quality result of run {run_id}"
        self._record(UndoStep("runs", label, QualityRecorded(run_id, before, after), self._clock()))
        self.runs_changed()

    # The next two run in a worker (reading a log or a capture takes a while): they write
    # and return, publishing nothing off the app's thread. The screen that ran them calls
    # ``runs_changed`` once its worker is done, so a batch is derived again once.

    def store_run(
        self,
        run: ImportedRun,
        set_name: str,
        *,
        mapping: tuple[Sequence[str], ColumnMapping] | None = None,
    ) -> ImportOutcome:
        """Store one imported run in set ``set_name``; with ``mapping`` (a table's columns
        and how they were mapped), remember that mapping for the next table of those columns."""
        from trntui.store.mappings import remember_mapping
        from trntui.store.runs import add_run

        outcome = add_run(self.root, run, set_name)
        if mapping is not None:
            remember_mapping(self.root, *mapping)
        return outcome

    def attach_capture(
        self,
        run_id: str,
        path: Path,
        *,
        offset_s: float | None,
        progress: Progress,
        cancel: CancelCheck,
    ) -> AttachOutcome:
        """Attach a telemetry capture to a run (the run's instance type is the store's to
        find: one rule, as in the CLI)."""
        from trntui.store.telemetry import attach_capture

        return attach_capture(
            self.root, run_id, path, offset_s=offset_s, progress=progress, cancel=cancel
        )

    def runs_imported(self, stored: int | None) -> None:
        """A batch of runs was stored (``store_run`` in a worker; ``stored`` of them added or
        read again, None when the batch failed part way): a barrier in the undo history
        (none when it changed nothing), then the runs are read again. Undoing an import would
        delete the timelines of the runs it added and cannot bring back a run it read again,
        so ctrl+z says how to reverse it instead."""
        if stored != 0:
            what = "runs" if stored is None else plural(stored, "run")
            self._keep(f"importing {what}", "x on Runs removes a run, m moves it to another set")
        self.runs_changed()

    def capture_attached(self, run_id: str, name: str) -> None:
        """A capture was attached to ``run_id`` (``attach_capture`` in a worker): a barrier
        in the undo history (no store writer detaches a capture), then the runs are read
        again."""
        self._keep(
            f"attaching {name} to run {run_id}",
            "an attached capture stays (trntui has no detach)",
        )
        self.runs_changed()

    def _keep(self, label: str, how: str) -> None:
        """Record a change ctrl+z does not take back (a barrier): ``how`` reverses it."""
        self._record(UndoStep("kept", label, how, self._clock()))

    def runs_changed(self) -> None:
        """The stored runs changed: read them again and derive their facts."""
        self._changed("runs")

    def _undo_runs(self, step: UndoStep) -> str | None:
        """Put back what the run edit of ``step`` (the newest) changed, through the store
        writers that made it, and take the step off; why not (nothing changed then), when the
        files no longer hold what the edit left or the store refuses."""
        from trntui.store.quality import load_recorded_quality, record_quality
        from trntui.store.runs import assign_set, load_runs
        from trntui.store.set_sizes import load_stated_sizes, rename_set, state_size

        changed = (
            f"the runs were changed since {step.label!r} (by hand, or by another program): "
            "nothing was undone"
        )
        edit = step.before
        try:
            if isinstance(edit, RunsMoved):
                sets = dict(load_runs(self.root).select("run_id", "set_name").iter_rows())
                if any(sets.get(run_id) != edit.new for run_id in edit.run_ids):
                    return changed
                assign_set(self.root, edit.run_ids, edit.old)
                if edit.stated_followed:
                    rename_set(self.root, edit.new, edit.old)
            elif isinstance(edit, SizeStated):
                if load_stated_sizes(self.root).get(edit.set_name) != edit.after:
                    return changed
                state_size(self.root, edit.set_name, edit.before)
            elif isinstance(edit, QualityRecorded):
                if load_recorded_quality(self.root).get(edit.run_id) != edit.after:
                    return changed
                record_quality(self.root, edit.run_id, edit.before)
        except (UserError, OSError) as error:
            return f"nothing was undone: {error}"
        self.history.pop()
        if isinstance(edit, RunsMoved) and edit.inventory is not None:
            self.inventory = edit.inventory  # the targets name the set they named before
            self.dirty = True
            self._changed("inventory-replaced")
        self.runs_changed()
        return None

    def undo(self) -> tuple[UndoStep | None, str | None]:
        """Take back the most recent change: (the step undone, why it could not be)."""
        if not self.history:
            return None, None
        step = self.history[-1]
        if step.kind == "overrides":
            # Put back as they were, unchecked: overrides that no longer apply (a target
            # renamed since) show in the estimate bar and x drops them; refusing here would
            # block every older step behind this one.
            before: tuple[Override, ...] = step.before  # type: ignore[assignment]
            if self.read_only:
                return None, self.read_only_message
            if (problem := self._write_working(before, self.gpu_target)) is not None:
                return None, problem
            self.history.pop()
            self.overrides = before
            self._changed("overrides")
        elif step.kind == "comparison":
            if self.read_only:
                return None, self.read_only_message
            chosen: str | None = step.before  # type: ignore[assignment]
            if (problem := self._write_working(self.overrides, chosen)) is not None:
                return None, problem
            self.history.pop()
            self.gpu_target = chosen
            self._changed("comparison")
        elif step.kind == "working":
            if self.read_only:
                return None, self.read_only_message
            working: WorkingScenario = step.before  # type: ignore[assignment]
            if (problem := self._write_working(working.overrides, working.gpu_target)) is not None:
                return None, problem
            self.history.pop()
            self.overrides, self.gpu_target = working.overrides, working.gpu_target
            self._changed("overrides")
        elif step.kind == "runs":
            if self.read_only:
                return None, self.read_only_message
            if (problem := self._undo_runs(step)) is not None:
                return None, problem
        elif step.kind == "kept":
            # A barrier: nothing to put back, and nothing older is undone in this key press.
            self.history.pop()
        elif step.kind == "quotes":
            from trntui.store.quotes import QUOTES_FILE, load_quote_book, save_quote_book

            book: QuoteBook = step.before  # type: ignore[assignment]
            if self.read_only:
                return None, self.read_only_message
            try:
                now = load_quote_book(self.root)
            except (UserError, OSError) as error:
                return None, f"nothing was undone: {error}"
            if now != step.after:
                return None, (
                    f"{QUOTES_FILE} was changed since {step.label!r} (by hand, or by another "
                    "program): undoing it would lose that change, so nothing was undone"
                )
            try:
                save_quote_book(self.root, book)
            except (UserError, OSError) as error:
                return None, str(error)
            self.history.pop()
            self._changed("quotes")
        else:
            if self.read_only:
                return None, self.read_only_message
            self.history.pop()
            self.inventory = step.before  # type: ignore[assignment]
            self.dirty = True
            self._changed("inventory-replaced")
        return step, None

    def reload(self) -> bool:
        """Read ``trntui.toml`` and ``working_scenario.toml`` again (edited by hand); the
        inventory before is one undo step (the overrides read are taken as they are). A file
        that does not read raises ``UserError`` and changes nothing. A session that is
        read-only because another held the lock tries to take it again: returns whether it
        became writable now."""
        from trntui.store.working_scenario import read_working_scenario

        became_writable = self.read_only and self.project.take_lock()
        working = read_working_scenario(self.root)
        overrides = working.overrides
        before = self.inventory
        inventory = self.project.reload()
        if inventory != before and not self.read_only:  # read-only: nothing to put back
            self._record(UndoStep("inventory", RELOAD, before, self._clock()))
        self.inventory = inventory
        self.dirty = False
        self._changed("inventory-replaced")
        if overrides != self.overrides:  # working_scenario.toml edited by hand too
            self.overrides = overrides
            self._changed("overrides")
        if working.gpu_target != self.gpu_target:
            self.gpu_target = working.gpu_target
            self._changed("comparison")
        return became_writable

    def save(self) -> None:
        """Write pending inventory edits (raises ``UserError``/``OSError`` when it cannot)."""
        if self.dirty:
            self.project.save_inventory(self.inventory)
            self.dirty = False

    def save_snapshot(self, name: str, note: str) -> Path:
        """Save every value the last recompute used, with the overrides in force, as
        snapshot ``name``. Where it was written (a new file:
        not undone, like the run edits). Raises ``UserError``/``OSError`` when it cannot."""
        from trntui.store.scenarios import current_user, save_scenario, scenario_path

        context = self.estimate_context
        if context is None:
            raise UserError("the estimate is still being computed")
        save_scenario(
            self.root,
            name,
            context,
            self.overrides,
            note=note,
            saved_by=current_user(),
            gpu_target=self.gpu_target,
        )
        return scenario_path(self.root, name)

    def write_report(self, output: str, report_format: str) -> Path:
        """Write the report of the estimate shown now (the working scenario's overrides in
        force) to ``output`` as ``report_format`` (md, csv or json), the same document as
        ``trntui report``; where it was written. A report is not project data: it is not
        undone, and ``store.reports`` refuses a path inside the project's own files. Raises
        ``UserError``/``OSError`` when it cannot."""
        from trntui.core.report import render_report, report_document
        from trntui.store.reports import write_report

        computed = self.computed
        if computed is None or computed.analysis is None:
            problem = computed.problem if computed is not None else None
            raise UserError(
                f"no estimate to report: {problem}"
                if problem
                else "the estimate is still being computed"
            )
        document = report_document(computed.context, computed.analysis)
        return write_report(output, render_report(document, report_format))

    # --- what is derived -------------------------------------------------------------------

    def compute(
        self,
        inventory: Inventory,
        overrides: tuple[Override, ...],
        gpu_target: str | None = None,
    ) -> Computed:
        """The estimate and everything shown with it, for ``inventory`` and ``overrides``,
        Trainium3 compared with ``gpu_target`` (``core.comparison.pick_gpu``).

        Runs in a worker thread: it reads the project but changes nothing here; the App hands
        the result to ``computed_ready`` on its own thread. Run facts come from
        ``runs/facts.parquet`` and are derived only for runs whose facts are not stored yet,
        which are then stored (``ProjectStore.derive_and_store_observations``; not when the
        project is open read-only).
        """
        from trntui.core.estimate import prepare
        from trntui.core.report import analyze

        observed = self.store.derive_and_store_observations(inventory)
        derived = observed.runs
        context = self.store.read_context(inventory, observed)
        try:
            prepared = prepare(context)
            analysis = analyze(context, overrides, prepared=prepared, gpu_target=gpu_target)
        except UserError as error:  # the facts still reach the Runs screen
            return Computed(context, derived, problem=str(error))
        return Computed(context, derived, prepared, analysis)

    def computed_ready(self, computed: Computed) -> str | None:
        """Keep a recompute's result and publish it; the note to show when run facts were
        derived again."""
        previous = self.computed
        self.computed = computed
        if computed.problem is None:
            self.prepared, self.analysis = computed.prepared, computed.analysis
        self.signals.recomputed.publish(computed)
        if computed.problem is not None:
            self.estimate_failed(computed.problem)
        elif computed.analysis is not None:
            self.signals.estimate_problem.set("")
            self.signals.analysis.publish(computed.analysis)
        fresh = previous is None or previous.derived is not computed.derived
        return computed.derived.note if fresh else None

    def estimate_failed(self, problem: str) -> None:
        """The newest recompute failed: the last valid estimate stays, with why."""
        self.signals.estimate_problem.set(problem)

    @property
    def estimate_problem(self) -> str:
        """Why the last recompute failed ('' when it succeeded)."""
        return self.signals.estimate_problem.value

    @property
    def estimate_context(self) -> EstimateContext | None:
        return None if self.computed is None else self.computed.context


def override_change(before: Sequence[Override], after: Sequence[Override]) -> str | None:
    """The change from ``before`` to ``after`` in words, naming each override by its input and
    target ("the throughput override on B200 1 node (2.1)"); None when it is more than two
    overrides (the undo step's label says it then)."""
    from trntui.core.estimate import INPUT_SPECS

    def named(override: Override) -> str:
        spec = INPUT_SPECS.get(override.input)
        label = spec.label if spec is not None else override.input
        where = f"on {override.target}" if override.target else "on every target"
        return f"the {label} override {where} ({override.value:g})"

    def key(override: Override) -> tuple[str, str | None]:
        return override.input, override.target

    old = {key(o): o for o in before}
    new = {key(o): o for o in after}
    parts = [f"adding {named(new[k])}" for k in new if k not in old]
    parts += [f"dropping {named(old[k])}" for k in old if k not in new]
    parts += [
        f"{named(new[k])} (was {old[k].value:g})" for k in new if k in old and new[k] != old[k]
    ]
    if not parts or len(parts) > 2:
        return None
    return "; ".join(parts)


def overrides_in_force(overrides: tuple[Override, ...]) -> str:
    """The overrides in force, in words, for the status line: the working scenario's."""
    if not overrides:
        return "no override in the working scenario"
    return f"{plural(len(overrides), 'override')} in the working scenario"
