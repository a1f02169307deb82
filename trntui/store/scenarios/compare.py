"""What changed in the project since a snapshot (``staleness``), and two estimates or
snapshots side by side (``diff_estimates``, ``diff_scenarios``, ``comparison_change`` of each side's
``compared_target``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from trntui.core.comparison import pick_gpu
from trntui.core.estimate import (
    INPUT_SPECS,
    TERMS,
    Estimate,
    EstimateContext,
    InvalidInputError,
    Override,
    estimate,
    quote_id,
)
from trntui.core.format import plural
from trntui.store.scenarios.snapshot import Scenario


def staleness(scenario: Scenario, current: EstimateContext) -> tuple[str, ...]:
    """What changed in the project since the snapshot: runs, quotes, inventory inputs.

    Empty when the snapshot still describes the project. The snapshot's own numbers are not
    touched; this only says why they may no longer hold.
    """
    notes: list[str] = []
    then = scenario.estimate()
    for set_name, saved_ids in _run_sets(scenario):
        ids = set(saved_ids)
        now = set(current.observations.filter(pl.col("set_name") == set_name)["run_id"].to_list())
        if now != ids:
            added, removed = len(now - ids), len(ids - now)
            notes.append(
                f"run set {set_name!r} changed: {plural(added, 'run')} added, {removed} removed"
            )
    try:
        today = estimate(current, scenario.overrides)
    except InvalidInputError as error:
        return (*notes, f"the overrides no longer apply: {error}")
    now_targets = {t.name: t for t in today.targets}
    then_names = {t.name for t in then.targets}
    notes += [
        f"target {name!r} was added since the snapshot (not in it)"
        for name in now_targets
        if name not in then_names
    ]
    credited: dict[tuple[str, str, str], tuple[int, list[str]]] = {}
    """Inputs credited to another name: (kind, name before, now) -> (their note's place, them)."""
    for old in then.targets:
        new = now_targets.get(old.name)
        if new is None:
            notes.append(f"target {old.name!r} no longer exists")
            continue
        for before in old.inputs:
            after = new.input(before.key)
            then_from, now_from = before.provenance, after.provenance
            if before.value != after.value:
                notes.append(
                    f"{old.name}: {before.label} {_change(before.value, after.value)} ({now_from})"
                )
            elif (then_from.kind, then_from.detail) == (now_from.kind, now_from.detail) and (
                then_from.source != now_from.source
            ):
                # The same number, stated as before but credited to another source (the
                # owner's new name in every assumption, a renamed run set): one note for all.
                key = (now_from.kind, then_from.source, now_from.source)
                if key not in credited:
                    credited[key] = (len(notes), [])
                    notes.append("")  # its place: written once every input is counted
                credited[key][1].append(f"{old.name}: {before.label}")
            elif then_from != now_from:
                # The same number from another kind of source: said as such, not as a change.
                notes.append(
                    f"{old.name}: {before.label} still {_show(after.value)}, its source now "
                    f"{now_from} (was {then_from})"
                )
        notes += [
            f"{old.name}: {flag.message} (as of {current.today.isoformat()})"
            for flag in new.quote_flags
            if flag not in old.quote_flags
        ]
        for q in scenario.context.book.quotes:
            if new.quote is not None and quote_id(new.quote) == quote_id(q) and new.quote != q:
                notes.append(f"quote {quote_id(q)} changed since the snapshot")
    for key, (place, inputs) in credited.items():
        notes[place] = _credited(key, inputs)
    return tuple(dict.fromkeys(notes))


def _credited(key: tuple[str, str, str], inputs: list[str]) -> str:
    """One note for the inputs whose values and sources are as they were, but credited to
    another name: ``key`` is (kind, name before, name now)."""
    _, was, now = key
    shown = ", ".join(inputs[:3]) + (f" and {len(inputs) - 3} more" if len(inputs) > 3 else "")
    what = (
        "input keeps its value" if len(inputs) == 1 else f"{len(inputs)} inputs keep their values"
    )
    return f"{what} and sources, now credited to {now!r} (was {was!r}): {shown}"


def _run_sets(scenario: Scenario) -> list[tuple[str, list[str]]]:
    observations = scenario.context.observations
    names = sorted({t.run_set for t in scenario.context.inventory.targets if t.run_set})
    return [
        (name, observations.filter(pl.col("set_name") == name)["run_id"].to_list())
        for name in names
    ]


def _show(value: float | None, digits: int = 6) -> str:
    return "unknown" if value is None else f"{value:,.{digits}g}"


def _change(before: float | None, after: float | None) -> str:
    """``before -> after`` with as many significant digits as tell the two apart (six at
    least): a change in the eighth digit is not shown as the same number twice."""
    for digits in range(6, 18):
        then, now = _show(before, digits), _show(after, digits)
        if then != now:
            break
    return f"{then} -> {now}"


ABSENT = "absent"
"""A snapshot's side of a target it does not have: nothing to know, so not "unknown"."""


@dataclass(frozen=True)
class DiffRow:
    target: str
    item: str
    """An input label, a cost term or ``total_usd``."""
    a: float | None
    b: float | None
    a_note: str = ""
    b_note: str = ""
    a_absent: bool = False
    """The target is not in ``a`` at all (its value is then not unknown, but absent)."""
    b_absent: bool = False

    def shown(self, side: str, value_text: Callable[[float | None], str]) -> str:
        """Side ``'a'`` or ``'b'`` as text: ``absent`` when that side has no such target."""
        if self.a_absent if side == "a" else self.b_absent:
            return ABSENT
        return value_text(self.a if side == "a" else self.b)

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def delta_pct(self) -> float | None:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return (self.b - self.a) / abs(self.a) * 100.0


OVERRIDE = "override: "
"""The ``item`` of a row that compares a scenario override (``override: <input label>``)."""


def _override_rows(a: Estimate, b: Estimate) -> list[DiffRow]:
    """The overrides each side applies, by input and target: one set on one side only is
    ``absent`` on the other; one set on both differs in value, or in who set it and why."""

    def by_key(estimate: Estimate) -> dict[tuple[str, str | None], Override]:
        return {(o.input, o.target): o for o in estimate.overrides}

    left, right = by_key(a), by_key(b)
    rows = []
    for key in dict.fromkeys([*left, *right]):
        x, y = left.get(key), right.get(key)
        if x is not None and y is not None and (x.value, x.who, x.why) == (y.value, y.who, y.why):
            continue
        name, target = key
        rows.append(
            DiffRow(
                target or "project",
                OVERRIDE + INPUT_SPECS[name].label,
                None if x is None else x.value,
                None if y is None else y.value,
                "" if x is None else f"{x.who}: {x.why}",
                "" if y is None else f"{y.who}: {y.why}",
                a_absent=x is None,
                b_absent=y is None,
            )
        )
    return rows


def diff_estimates(a: Estimate, b: Estimate) -> tuple[DiffRow, ...]:
    """What differs between two estimates: the scenario overrides each applies, then target
    by target every input (value or provenance: a run set's runs, a quote, an inventory
    value), each cost term and the total. Unchanged rows are left out."""
    rows: list[DiffRow] = _override_rows(a, b)
    b_targets = {t.name: t for t in b.targets}
    for left in a.targets:
        right = b_targets.get(left.name)
        if right is None:
            rows.append(
                DiffRow(left.name, "target", left.total_usd, None, "", "not in b", b_absent=True)
            )
            continue
        for before in left.inputs:
            after = right.input(before.key)
            if before.value != after.value or before.provenance != after.provenance:
                rows.append(
                    DiffRow(
                        left.name,
                        INPUT_SPECS[before.key].label,
                        before.value,
                        after.value,
                        str(before.provenance),
                        str(after.provenance),
                    )
                )
        for term in (*TERMS, "total_usd", "commitment_beyond_usd"):
            x, y = left.term(term), right.term(term)
            if x != y and not (x is not None and y is not None and math.isclose(x, y)):
                rows.append(DiffRow(left.name, term, x, y))
    a_names = {t.name for t in a.targets}
    rows += [
        DiffRow(t.name, "target", None, t.total_usd, "not in a", "", a_absent=True)
        for t in b.targets
        if t.name not in a_names
    ]
    return tuple(rows)


def compared_target(estimate: Estimate, choice: str | None) -> str | None:
    """The GPU target an estimate compares Trainium3 with, given the choice in force: that
    target when it names one, else the first GPU target (``core.comparison.pick_gpu``); None
    when there is no GPU target."""
    picked, _ = pick_gpu(estimate, choice)
    return None if picked is None else picked.name


def comparison_change(a: str | None, b: str | None) -> str | None:
    """The line that says A and B compare Trainium3 with different GPU targets (each side's
    ``compared_target``), or None when they compare the same one."""
    if a == b:
        return None
    none = "no GPU target"
    return f"Trainium3 compared with {a or none} in A, with {b or none} in B"


def diff_scenarios(a: Scenario, b: Scenario) -> tuple[DiffRow, ...]:
    return diff_estimates(a.estimate(), b.estimate())
