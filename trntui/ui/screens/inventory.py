"""The workload inventory screen: section list on the left, the section's form on the right.

Edits go to the session (``Session.edit_inventory``), which checks the whole inventory; the App
saves it. The screen shows the session's ``inventory`` as it changes (``signals.inventory``:
an edit here, an undo, a reload) and keeps the session's list of fields holding text that does
not parse.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import AwaitMount, Widget
from textual.widgets import (
    ContentSwitcher,
    DataTable,
    Footer,
    Label,
    OptionList,
    Static,
)
from textual.widgets.option_list import Option

from trntui.core.errors import UserError
from trntui.core.fields import FieldValueError
from trntui.core.format import plural
from trntui.core.inventory import (
    LIST_SECTIONS,
    SECTIONS,
    Inventory,
    effort_text,
    specs_of,
)
from trntui.ui.screens.base import SessionScreen, SessionView, edits
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.session import Session
from trntui.ui.widgets.area_bar import AreaBar
from trntui.ui.widgets.estimate_bar import EstimateBar
from trntui.ui.widgets.field_form import FieldChange, FieldForm
from trntui.ui.widgets.status_line import StatusLine

SECTION_HELP = {
    "project": "Name the project; 'Example data' marks illustrations so nobody quotes them.",
    "model": "What is trained: architecture, size, precision, operators.",
    "software": "Framework, libraries and Neuron SDK versions; features the port needs.",
    "distribution": "How the work is split across accelerators and how it resumes.",
    "goal": "How much work must finish, and which quality result makes a run count.",
    "data_prep": "Cleaning, tokenization, example generation: where and how long.",
    "side_costs": "Quantities for storage, transfer and logs; prices come from Prices.",
    "risks": "Each adaptation the port needs. Effort is engineering days, never instance hours.",
    "targets": "Where training could run: exact instance type, count, region, purchase option.",
}

CHECKS_ID = "checks"


class ItemRows(DataTable[str]):
    """The rows of a list section: enter opens the item's form (a dialog), and keys typed
    right after wait for it (``ui/key_hold.py``)."""

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"select_cursor"})


class ItemTable(SessionView, Vertical):
    """A list section (risks or targets) as a table with add, edit and delete.

    Add and edit open a form (a dialog): keys typed right after wait for its first field
    (``ui/key_hold.py``)."""

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"add", "edit"})

    DEFAULT_CSS = """
    ItemTable { padding: 0 1; }
    ItemTable .form-title { text-style: bold; }
    ItemTable .form-help { color: $text-muted; }
    ItemTable DataTable { height: 1fr; margin-top: 1; }
    ItemTable .hint { color: $text-muted; }
    """

    BINDINGS = [
        Binding("a", "add", "Add", tooltip="Add a risk or target (Risks, Targets)", id="items.add"),
        Binding("e", "edit", "Edit", tooltip="Edit the highlighted item", id="items.edit"),
        # Not in the footer: at 80 columns it pushed Undo past the edge. The hint under the
        # table, Help and the palette name it (deleting is rare, and undone with ctrl+z).
        Binding(
            "d",
            "delete",
            "Delete",
            show=False,
            tooltip="Delete the highlighted item",
            id="items.delete",
        ),
        Binding(
            "delete",
            "delete",
            "Delete",
            show=False,
            tooltip="Delete the highlighted item",
            id="items.delete_alt",
        ),
    ]

    def __init__(self, name: str, session: Session) -> None:
        super().__init__(id=f"items-{name}")
        self.section = name
        self.session = session
        self.item_cls = LIST_SECTIONS[name]
        self.items: tuple[Any, ...] = getattr(session.inventory, name)

    def compose(self) -> ComposeResult:
        yield Label(f"{self.item_cls.TITLE}s", classes="form-title")
        yield Static(SECTION_HELP[self.section], classes="form-help")
        table = ItemRows(cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(self.hint(), classes="hint")

    def hint(self) -> str:
        """The keys of the list, or why there are none."""
        if self.session.read_only:
            return "read-only"
        return "a add  e/enter edit  d delete  ctrl+z undo"

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        columns = self._columns()
        for position, (key, spec) in enumerate(columns):
            # A leading name is clipped so that the short columns after it stay visible.
            clip = key in ("name", "title", "run_set") and position < len(columns) - 1
            table.add_column(spec.short or spec.label, key=key, width=15 if clip else None)
        self.show_items(self.items)

    def _columns(self) -> list[tuple[str, Any]]:
        specs = specs_of(self.item_cls)
        return [(key, specs[key]) for key in self.item_cls.COLUMNS]

    def show_items(self, items: tuple[Any, ...]) -> None:
        self.items = items
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for index, item in enumerate(items):
            table.add_row(
                *[spec.format_value(getattr(item, key)) or "-" for key, spec in self._columns()],
                key=str(index),
            )
        if items:
            table.move_cursor(row=min(max(row, 0), len(items) - 1))

    def _change(self, items: tuple[Any, ...], label: str) -> bool:
        inventory = _with_items(self.session.inventory, self.section, items)
        problem = self.session.edit_inventory(inventory, label=label)
        if problem is not None:
            self.set_status(problem, "error")
        return problem is None

    @edits
    def action_add(self) -> None:
        self.app.push_screen(
            ItemFormScreen(
                self.item_cls,
                self.item_cls(),
                title=f"New {self.item_cls.TITLE}",
                choices=self._choices(),
            ),
            self._added,
        )

    def _choices(self) -> dict[str, list[tuple[str, str]]]:
        """A target's run set is picked from the imported ones, each with its size and runs."""
        if self.section != "targets":
            return {}
        from trntui.store.set_sizes import set_summaries  # Polars: only when a form opens

        try:
            sets = set_summaries(self.session.root)
        except UserError as error:
            self.set_status(f"Run sets not listed: {error}", "warning")
            return {}
        return {
            "run_set": [
                (f"{name} ({size}, {plural(runs, 'run')})", name) for name, size, runs in sets
            ]
        }

    def _added(self, item: Any) -> None:
        if item is not None:
            self._change((*self.items, item), f"add {self.item_cls.TITLE.lower()}")

    @edits
    def action_edit(self) -> None:
        table = self.query_one(DataTable)
        if not self.items:
            return
        index = table.cursor_row
        self.app.push_screen(
            ItemFormScreen(
                self.item_cls,
                self.items[index],
                title=f"Edit {self.item_cls.TITLE}",
                choices=self._choices(),
            ),
            lambda item: self._edited(index, item),
        )

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_edit()

    def _edited(self, index: int, item: Any) -> None:
        if item is not None:
            items = list(self.items)
            items[index] = item
            self._change(tuple(items), f"edit {self.item_cls.TITLE.lower()}")

    @edits
    def action_delete(self) -> None:
        if not self.items:
            return
        index = self.query_one(DataTable).cursor_row
        items = self.items[:index] + self.items[index + 1 :]
        removed = self.items[index]
        name = getattr(removed, "name", None) or getattr(removed, "title", "")
        if self._change(items, f"delete {self.item_cls.TITLE.lower()}"):
            self.notify(f"Deleted '{name}'. Press ctrl+z to undo.", title="Deleted")


def _with_items(inventory: Inventory, section: str, items: tuple[Any, ...]) -> Inventory:
    changes: dict[str, Any] = {section: items}
    return dataclasses.replace(inventory, **changes)


class ChecksPane(Vertical):
    """What the inventory still lacks before an estimate can be defended."""

    DEFAULT_CSS = """
    ChecksPane { padding: 0 1; }
    ChecksPane .form-title { text-style: bold; margin-bottom: 1; }
    """

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session

    def compose(self) -> ComposeResult:
        yield Label("Checks", classes="form-title")
        yield Static("", id="checks-body")

    def on_mount(self) -> None:
        # The run sets come with each recompute's run facts (also when the estimate fails).
        self.session.signals.recomputed.subscribe(self, lambda _: self.show(self.session.inventory))
        self.show(self.session.inventory)

    def show(self, inventory: Inventory) -> None:
        context = self.session.estimate_context
        observations = None if context is None else context.observations
        sets = (
            set(observations["set_name"].to_list())
            if observations is not None and "set_name" in observations.columns
            else None
        )
        notes = inventory.warnings(sets) + self._estimate_missing()
        text = "\n".join(f"- {n}" for n in notes) if notes else "Nothing missing."
        risks = [r for r in inventory.risks if r.status != "resolved"]
        if risks:
            effort = effort_text(*inventory.open_risk_effort())
            text += (
                f"\n\nOpen migration risks: {len(risks)}, {effort} of engineering "
                "(kept apart from instance cost)."
            )
        self.query_one("#checks-body", Static).update(text)

    def _estimate_missing(self) -> list[str]:
        """Each incomplete target of the last estimate, with the inputs it lacks grouped by
        where each is set: the same list the estimate bar counts ("and 8 more inputs")."""
        analysis = self.session.analysis
        if analysis is None:
            return []
        return [
            f"{item.name}: incomplete, lacks {missing_by_place(item.incomplete_inputs)}"
            for item in analysis.estimate.targets
            if not item.complete
        ]


def missing_by_place(labels: Sequence[str]) -> str:
    """Estimate inputs (by label) grouped by where a person sets them: a price on Prices, an
    input the runs measure (``SIZE_INPUTS``) by the runs of Runs, the others in the inventory
    (or, for any, an override on Scenarios). The launch time outside the logs is measured only
    where the logs print the job wrapper's clock; otherwise the inventory states it, so that is
    where it is sent (Runs has no way to set it)."""
    from trntui.core.estimate import INPUT_SPECS
    from trntui.core.estimate.at_size import SIZE_INPUTS

    specs = {spec.label: spec for spec in INPUT_SPECS.values()}
    places: dict[str, list[str]] = {}
    for label in labels:
        spec = specs.get(label)
        if spec is not None and spec.unit.startswith("USD"):
            place = "Prices, 3"
        elif spec is not None and spec.key == "launch_s":
            # measured only from a job wrapper's clock: logs without one leave it to the inventory
            place = "Inventory > Software stack: Launch outside logs"
        elif spec is not None and (spec.observed or spec.key in SIZE_INPUTS):
            place = "runs: Runs, 2"
        else:
            place = "Inventory, or an override on Scenarios (4)"
        places.setdefault(place, []).append(label)
    return "; ".join(f"{', '.join(found)} ({place})" for place, found in places.items())


class SectionSlot(Vertical):
    """Where one section's pane goes (a form, a list, the checks); it is built the first time
    the section is shown.

    The pane of the section shown at start is built with the screen; the others (about 50
    inputs for a form) only when the user first moves to them, so the first frame waits for
    nothing it does not show. A pane is built from the inventory as it is at that moment.
    """

    DEFAULT_CSS = """
    SectionSlot { height: 1fr; }
    """

    def __init__(self, name: str, build: Callable[[], Widget], *, built: bool) -> None:
        super().__init__(id=f"section-{name}")
        self.section = name
        self._build = build
        self._built = built
        self._mounting: AwaitMount | None = None

    def compose(self) -> ComposeResult:
        if self._built:
            yield self._build()

    async def ensure_built(self) -> None:
        """Build the pane if it is not yet, and return once it is mounted with its children
        (a key or a command acting on it right after finds its widgets)."""
        if not self._built:
            self._built = True
            self._mounting = self.mount(self._build())
        if self._mounting is not None:
            await self._mounting

    @property
    def form(self) -> FieldForm | None:
        """The section's form once built."""
        return next(iter(self.query_children(FieldForm)), None)


class SectionList(OptionList):
    """The list of sections. Moving in it shows a section and enter focuses its first field;
    either may first build the section's pane (an await): keys typed meanwhile wait for it
    (``ui/key_hold.py``), so they reach the field, not the list."""

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset(
        {"cursor_up", "cursor_down", "first", "last", "page_up", "page_down", "select"}
    )


class InventoryScreen(SessionScreen):
    """Edit the inventory section by section; every valid edit is saved."""

    DEFAULT_CSS = """
    InventoryScreen #nav { width: 20; height: 1fr; }
    InventoryScreen #body { height: 1fr; }
    """

    HOLDS_KEYS_AFTER: ClassVar[frozenset[str]] = frozenset({"focus_nav"})
    """esc moves the focus from a field to the section list (Textual moves it after the key is
    handled): keys typed right after wait for that, so esc then 2 goes to Runs instead of
    typing 2 into the field (``ui/key_hold.py``)."""

    BINDINGS = [
        Binding(
            "escape",
            "focus_nav",
            "Sections",
            tooltip="Leave the field for the section list (then 1-4 switch screens)",
            id="inventory.sections",
        )
    ]

    def __init__(self, session: Session) -> None:
        super().__init__(session, id="inventory")
        session.on_typing_kept(self.commit_pending)

    def compose(self) -> ComposeResult:
        yield AreaBar("screen.inventory", self.session)
        with Horizontal(id="body"):
            options = [Option(cls.TITLE, id=name) for name, cls in SECTIONS.items()]
            options += [Option(f"{cls.TITLE}s", id=name) for name, cls in LIST_SECTIONS.items()]
            options.append(Option("Checks", id=CHECKS_ID))
            yield SectionList(*options, id="nav")
            first = next(iter(SECTIONS))
            with ContentSwitcher(initial=f"section-{first}", id="sections"):
                for name in SECTIONS:
                    yield SectionSlot(name, partial(self._form, name), built=name == first)
                for name in LIST_SECTIONS:
                    yield SectionSlot(name, partial(ItemTable, name, self.session), built=False)
                yield SectionSlot(CHECKS_ID, partial(ChecksPane, self.session), built=False)
        yield EstimateBar(self.session)
        yield StatusLine(self.session.signals.status)
        yield Footer(compact=True)

    def _form(self, name: str) -> FieldForm:
        return FieldForm(
            SECTIONS[name],
            getattr(self.session.inventory, name),
            read_only=self.session.read_only,
            help_text=SECTION_HELP[name],
            id=f"form-{name}",
        )

    def forms(self) -> list[FieldForm]:
        """The section forms built so far (a form not built yet holds no typing)."""
        return list(self.query(FieldForm))

    def on_mount(self) -> None:
        self.query_one("#nav", OptionList).highlighted = 0
        self.refresh_from(self.session.inventory)
        self.session.signals.inventory.subscribe(self, self.refresh_from)

    async def show_section(self, section: str) -> SectionSlot:
        """Show ``section``'s pane, built and mounted."""
        slot = self.query_one(f"#section-{section}", SectionSlot)
        await slot.ensure_built()
        self.query_one("#sections", ContentSwitcher).current = slot.id
        return slot

    @on(OptionList.OptionHighlighted, "#nav")
    async def _show_section(self, event: OptionList.OptionHighlighted) -> None:
        await self.show_section(str(event.option.id))

    @on(OptionList.OptionSelected, "#nav")
    async def _enter_section(self, event: OptionList.OptionSelected) -> None:
        pane = await self.show_section(str(event.option.id))  # a click highlights and selects
        for widget in pane.query("Input, Select, DataTable"):
            if widget.focusable:
                widget.focus()
                break

    def action_focus_nav(self) -> None:
        self.query_one("#nav", OptionList).focus()

    @on(FieldForm.Edited)
    def _edited(self, event: FieldForm.Edited) -> None:
        self._apply(event.form, event.change)

    def _apply(self, form: FieldForm, change: FieldChange) -> None:
        section = (form.id or "").removeprefix("form-")
        inventory = self.session.inventory
        current = getattr(inventory, section)
        if getattr(current, change.key) == change.value:
            return
        updated = dataclasses.replace(current, **{change.key: change.value})
        before, form.obj = form.obj, updated  # the form shows it already: no reload
        problem = self.session.edit_inventory(
            dataclasses.replace(inventory, **{section: updated}),
            label=f"{SECTIONS[section].TITLE} > {specs_of(SECTIONS[section])[change.key].label}",
        )
        if problem is not None:
            form.obj = before
            self.set_status(problem, "error")

    def commit_pending(self) -> None:
        """Apply valid entries still being typed, so quitting or saving keeps them, and note
        the fields whose text does not parse as they are now (not as the last message said)."""
        for form in self.forms():
            for change in form.pending_changes():
                self._apply(form, change)
        self._note_invalid()

    def _note_invalid(self) -> None:
        """Tell the session which fields hold text that does not parse (for quitting)."""
        self.session.invalid = {
            f"{form.section_cls.TITLE} > {label}": message
            for form in self.forms()
            for label, message in form.invalid_fields()
        }

    @on(FieldForm.Invalid)
    def _invalid(self, event: FieldForm.Invalid) -> None:
        self._note_invalid()
        self.set_status(f"Not saved: {event.message}", "error")

    @on(FieldForm.Corrected)
    def _corrected(self, event: FieldForm.Corrected) -> None:
        was_invalid = bool(self.session.invalid)
        self._note_invalid()
        if was_invalid and not self.session.invalid:
            # The refused entry parses again; if it equals the saved value nothing gets saved,
            # so the "Not saved" message would otherwise stay: say which field, and what now.
            row = event.form.row(event.key)
            try:
                value = row.parse()
            except FieldValueError:
                return
            shown_value = row.spec.format_value(value) or "empty"
            label = row.spec.label
            if value == getattr(event.form.obj, event.key):
                said = f"Corrected: {label} is {shown_value} again, as saved (nothing to save)"
            else:
                said = f"Corrected: {label} = {shown_value}, saved after a pause in typing"
            self.set_status(said)

    def refresh_from(self, inventory: Inventory) -> None:
        """Show ``inventory`` everywhere (after an edit, undo or reload) without posting
        edits: a form is loaded again only where it shows something else."""
        read_only = self.session.read_only
        for slot in self.query(SectionSlot):
            form = slot.form
            if form is not None and form.obj != (current := getattr(inventory, slot.section)):
                form.load(current)
            if form is not None and form.read_only != read_only:
                form.set_read_only(read_only)  # a reload took the lock
        self._note_invalid()
        self.refresh_lists(inventory)

    def refresh_lists(self, inventory: Inventory) -> None:
        """Update the tables and checks built so far (the forms already show what was typed;
        a list or the checks built later show the inventory as it is then)."""
        for checks in self.query(ChecksPane):
            checks.show(inventory)
        for table in self.query(ItemTable):
            if table.items != getattr(inventory, table.section):
                table.show_items(getattr(inventory, table.section))
            table.query_one(".hint", Static).update(table.hint())
