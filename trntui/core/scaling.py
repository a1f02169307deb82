"""Scaling families: the same workload measured at several system sizes.

A team rarely trains at the size it trialled. Run sets that measure the same workload at
different sizes form a **family**: their protocol facts agree (benchmark, sequence length,
quality metric and target; the global batch may grow with the system, as MLPerf allows), their
accelerator model is the same, and their sizes differ. A person can also name a family
(``family`` on a run set in ``runs/sets.toml``), which then replaces the automatic grouping.

Per measured size: the median training clock (``RunFacts.run_s``: run start to run stop, or to
the last logged step; in an MLPerf log the stop is the verified result) of the counted runs and
its spread, the speed-up over the smallest size and the efficiency
``(t_smallest x n_smallest) / (t_n x n)``, and the median steady throughput.

At a size that was not measured, the throughput is **interpolated** between the two measured
neighbours, linearly in log(size) vs log(throughput) (constant efficiency change per doubling
between them), and labelled so. Outside the measured range it is unknown ("not measured above
4 nodes") unless a person states an efficiency per doubling of nodes (an assumption, labelled
as such wherever it is used); nothing is extrapolated silently.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from trntui.core.scalars import number
from trntui.core.system_size import SetSize, accelerator_model, set_size
from trntui.core.timeline import RunMetadata, SystemSize

MEASURED_SIZE = "measured"
INTERPOLATED = "interpolated"
ASSUMED = "assumed"
"""Where a throughput at a count comes from (``ScaledThroughput.source``): a size the family
measured, between two it measured, or an efficiency per doubling assumed past them.
(``MEASURED_SIZE``, not ``MEASURED``: that is ``core.estimate``'s provenance kind.)"""

_FAMILY_FACTS = ("benchmark", "sequence_length", "quality_metric", "quality_target")
"""Protocol facts that must agree within a family (not the global batch: it may scale)."""

FAMILY_PARTS_VERSION = 1
"""How ``family_parts`` makes a run's parts of its set's grouping key. The runs table stores
them with this number (``store.runs``); raise it when ``family_parts`` or ``protocol_text``
changes, so parts stored by another version count as unknown (their sets are read whole, as
before the parts were stored) until a write stores them again."""


@dataclass(frozen=True)
class MeasuredSize:
    """One system size of a scaling family, measured by one run set: its counted runs' time and
    steady throughput with their ranges. Its efficiency is the Scale plan's, from the time to
    the verified result the totals bill (``core.scale_plan``)."""

    run_set: str
    size: SystemSize
    runs: int
    time_s: float
    """Median training clock of the counted runs (``RunFacts.run_s``: run start to run stop, or
    to the last logged step; in an MLPerf log the stop is the verified result)."""
    time_low_s: float
    time_high_s: float
    throughput: float | None
    throughput_unit: str | None
    throughput_low: float | None = None
    throughput_high: float | None = None
    """The range of the counted runs' steady throughput (the observed spread at this size)."""

    @property
    def nodes(self) -> int:
        return self.size.nodes or 0


@dataclass(frozen=True)
class Family:
    """Run sets that measure the same workload at different system sizes, one per node count;
    ``named_by_user`` when a person named the family rather than the automatic grouping."""

    name: str
    points: tuple[MeasuredSize, ...]
    """Measured sizes, smallest first."""
    named_by_user: bool = False

    @property
    def sets(self) -> tuple[str, ...]:
        return tuple(p.run_set for p in self.points)

    def point(self, nodes: int) -> MeasuredSize | None:
        return next((p for p in self.points if p.nodes == nodes), None)


@dataclass(frozen=True)
class ScaledThroughput:
    """The steady throughput at a node count, with how it was obtained."""

    nodes: int
    value: float | None
    source: str
    """``measured``, ``interpolated``, ``assumed`` or ``unknown``."""
    detail: str
    run_set: str | None = None
    """The measured run set whose other inputs (startup, overheads) are used."""


def protocol_text(protocol: Mapping[str, object]) -> str | None:
    """A run's protocol facts (``RunMetadata.protocol``) as one JSON text, ``None`` when it
    states none: the observations' ``protocol_json`` and the runs table's alike."""
    return json.dumps(dict(protocol), sort_keys=True) if protocol else None


def family_parts(metadata: RunMetadata) -> tuple[str | None, str | None]:
    """What of one run its set's grouping key is made from: its protocol facts
    (``protocol_text``) and the accelerator its log names. Stored per run in the runs table
    (``FAMILY_PARTS_VERSION``), so an estimate finds the sets that may share its targets' key
    without reading their runs (``family_keys``); a size stated for the set replaces the
    logged accelerator (``core.system_size.effective_size``)."""
    system = metadata.system
    return protocol_text(metadata.protocol), system.accelerator if system is not None else None


def set_family_key(protocols: Iterable[str], accelerator: str | None) -> tuple[object, ...] | None:
    """The grouping key of a run set (not named into a family) whose runs state ``protocols``
    (``protocol_text``s) and whose size names ``accelerator``: each family fact with every
    value its runs state, and the accelerator's model; ``None`` when neither a benchmark nor a
    model says what the set ran (it joins no family)."""
    protocol: dict[str, set[str]] = {}
    for text in protocols:
        for fact, value in _protocol_facts(text):
            protocol.setdefault(fact, set()).add(value)
    model = accelerator_model(accelerator)
    facts = tuple((fact, tuple(sorted(protocol.get(fact, ())))) for fact in _FAMILY_FACTS)
    benchmark = dict(facts).get("benchmark")
    if not benchmark and model is None:
        return None  # nothing says two sets run the same workload on the same hardware
    return (model, facts)


@functools.lru_cache(maxsize=1 << 12)
def _protocol_facts(text: str) -> tuple[tuple[str, str], ...]:
    """A ``protocol_text``'s facts, each value as text: parsed once per text (a team's
    archive has thousands of runs and a few distinct protocols)."""
    return tuple((str(fact), str(value)) for fact, value in json.loads(text).items())


def family_keys(
    parts: Iterable[tuple[str, str | None, str | None]], stated: Mapping[str, SystemSize]
) -> dict[str, frozenset[tuple[object, ...]]]:
    """Every grouping key ``families`` could give each run set, from its runs' ``parts``
    (``(run set, protocol text, logged accelerator)``: ``family_parts``, each distinct one
    once) and the sizes people stated for sets (``stated``), without the runs themselves.

    The protocol facts are the set's whole (the union over its runs, as ``families`` takes
    them); the accelerator is that of whichever run's size the set is shown at, so every one
    its runs log is tried, and the stated one (which replaces them). A set's true key is among
    its keys, so two sets with no key in common are never in one family; a set with none
    joins no family.
    """
    protocols: dict[str, set[str]] = {}
    accelerators: dict[str, set[str | None]] = {}
    for run_set, protocol, accelerator in parts:
        texts = protocols.setdefault(run_set, set())
        if protocol is not None:
            texts.add(protocol)
        accelerators.setdefault(run_set, set()).add(accelerator)
    keys = {}
    known: dict[tuple[frozenset[str], frozenset[str | None]], frozenset[tuple[object, ...]]] = {}
    for run_set, texts in protocols.items():
        names = accelerators[run_set]
        if run_set in stated:
            names = names | {stated[run_set].accelerator}
        parts_of_set = (frozenset(texts), frozenset(names))
        if parts_of_set not in known:  # most sets share their parts with many others
            found = {set_family_key(texts, name) for name in names}
            known[parts_of_set] = frozenset(key for key in found if key is not None)
        keys[run_set] = known[parts_of_set]
    return keys


_FAMILY_COLUMNS = (
    "set_name",
    "nodes",
    "accelerators_per_node",
    "accelerator",
    "size_source",
    "size_stated_by",
    "protocol_json",
    "counted",
    "run_s",
    "steady_throughput",
    "throughput_unit",
)
"""The observations' columns ``families`` reads."""


def measured_size(
    runs: Sequence[Mapping[str, Any]], run_set: str, size: SystemSize
) -> MeasuredSize | None:
    """The measured size of ``run_set`` at ``size`` from its observation rows (``runs``, each
    a mapping of ``_FAMILY_COLUMNS``): its counted runs with a training clock."""
    counted = [
        row
        for row in runs
        if row["set_name"] == run_set and row["counted"] and row["run_s"] is not None
    ]
    if not counted:
        return None
    times = [row["run_s"] for row in counted]
    values = [row["steady_throughput"] for row in counted]
    throughput = pl.Series([value for value in values if value is not None], dtype=pl.Float64)
    units = {row["throughput_unit"] for row in counted} - {None}
    return MeasuredSize(
        run_set=run_set,
        size=size,
        runs=len(counted),
        time_s=statistics.median(times),
        time_low_s=min(times),
        time_high_s=max(times),
        throughput=number(throughput.median()) if throughput.len() else None,
        throughput_unit=next(iter(units)) if len(units) == 1 else None,
        throughput_low=number(throughput.min()) if throughput.len() else None,
        throughput_high=number(throughput.max()) if throughput.len() else None,
    )


def families(observations: pl.DataFrame, named: dict[str, str] | None = None) -> tuple[Family, ...]:
    """The scaling families among the run sets of ``observations``.

    ``named``: run set -> family name a person gave; those sets form their families as
    named, the others are grouped automatically. A family needs two sizes with known nodes.
    """
    named = named or {}
    groups: dict[tuple[object, ...], list[tuple[str, SetSize]]] = {}
    # One pass over the runs as Python rows, not a query per set: an estimate of a set
    # grouped automatically reads every set that may share its key (hundreds in an archive).
    by_set: dict[str, list[dict[str, Any]]] = {}
    for row in observations.select(_FAMILY_COLUMNS).iter_rows(named=True):
        by_set.setdefault(str(row["set_name"]), []).append(row)
    for run_set in sorted(by_set):
        runs = by_set[run_set]
        size = set_size([_row_size(row) for row in runs])
        if size.size is None or size.size.nodes is None:
            continue
        if run_set in named:
            key: tuple[object, ...] | None = ("named", named[run_set])
        else:
            protocols = [row["protocol_json"] for row in runs if row["protocol_json"] is not None]
            key = set_family_key(protocols, size.size.accelerator)
        if key is not None:
            groups.setdefault(key, []).append((run_set, size))
    found = []
    for key, members in groups.items():
        points = [
            point
            for run_set, size in members
            if size.size is not None
            and (point := measured_size(by_set[run_set], run_set, size.size)) is not None
        ]
        if len({p.nodes for p in points}) < 2:
            continue
        by_nodes: dict[int, MeasuredSize] = {}
        for point in sorted(points, key=lambda p: (p.nodes, -p.runs)):
            by_nodes.setdefault(point.nodes, point)  # one set per size: the most runs
        ordered = tuple(sorted(by_nodes.values(), key=lambda p: p.nodes))
        name = str(key[1]) if key[0] == "named" else _auto_name(ordered)
        found.append(Family(name, ordered, key[0] == "named"))
    return tuple(sorted(found, key=lambda f: f.name))


def family_candidates(
    run_sets: Iterable[str],
    named: Mapping[str, str],
    every_set: Collection[str],
    keys: Mapping[str, frozenset[tuple[object, ...]]] | None = None,
) -> frozenset[str]:
    """The run sets of ``every_set`` that ``families`` could put in one family with any of
    ``run_sets``: what an estimate of targets measured by ``run_sets`` must read, and nothing
    of the other sets (a team's archive has a thousand).

    The rule is ``families``' own grouping key, taken only as far as it is known without the
    runs: a set a person put in a family (``named``) shares it only with the other sets named
    into that family; a set grouped automatically shares it only with a set nobody named
    whose possible keys (``keys``: ``family_keys``, from the parts the runs table stores) meet
    its own. A set whose keys are not known (not in ``keys``, or no ``keys``: a table stored
    before the parts were) may have any key: when one of ``run_sets`` is such a set, every
    set nobody named is a candidate, and such a set is a candidate of any set grouped
    automatically. ``families`` over the candidates' runs then finds the same family for each
    of ``run_sets`` as over every run.
    """
    keys = {} if keys is None else keys
    wanted = {run_set for run_set in run_sets if run_set in every_set}
    names = {named[run_set] for run_set in wanted if run_set in named}
    unnamed = [run_set for run_set in wanted if run_set not in named]
    any_key = any(run_set not in keys for run_set in unnamed)
    wanted_keys = frozenset().union(*(keys.get(run_set, ()) for run_set in unnamed))

    def may_share(run_set: str) -> bool:
        if not unnamed or run_set in named:
            return False
        return any_key or run_set not in keys or not keys[run_set].isdisjoint(wanted_keys)

    return frozenset(
        run_set
        for run_set in every_set
        if run_set in wanted or (run_set in named and named[run_set] in names) or may_share(run_set)
    )


def _auto_name(points: Sequence[MeasuredSize]) -> str:
    first = points[0].size
    model = accelerator_model(first.accelerator) or "accelerators"
    sizes = "/".join(str(p.nodes) for p in points)
    return f"{model} x {first.accelerators_per_node} per node at {sizes} nodes"


def family_of(found: Sequence[Family], run_set: str | None) -> Family | None:
    return next((f for f in found if run_set in f.sets), None)


def _row_size(row: dict[str, Any]) -> SystemSize | None:
    if row["nodes"] is None and row["accelerators_per_node"] is None:
        return None
    return SystemSize(
        row["nodes"],
        row["accelerators_per_node"],
        row["accelerator"],
        row["size_source"] or "",
        stated_by=row["size_stated_by"],
    )


def throughput_at(
    family: Family, nodes: int, efficiency_per_doubling: float | None = None
) -> ScaledThroughput:
    """The steady throughput at ``nodes`` (module docstring): measured, interpolated between
    measured neighbours, assumed from a stated efficiency per doubling, or unknown."""
    points = [p for p in family.points if p.throughput is not None]
    exact = next((p for p in points if p.nodes == nodes), None)
    if exact is not None:
        return ScaledThroughput(
            nodes, exact.throughput, MEASURED_SIZE, f"measured at {nodes} nodes", exact.run_set
        )
    below = [p for p in points if p.nodes < nodes]
    above = [p for p in points if p.nodes > nodes]
    if below and above:
        low, high = below[-1], above[0]
        assert low.throughput is not None and high.throughput is not None  # from ``points``
        share = (math.log(nodes) - math.log(low.nodes)) / (
            math.log(high.nodes) - math.log(low.nodes)
        )
        value = math.exp(
            math.log(low.throughput)
            + share * (math.log(high.throughput) - math.log(low.throughput))
        )
        detail = f"interpolated between measured {low.nodes} and {high.nodes} nodes"
        return ScaledThroughput(nodes, value, INTERPOLATED, detail, low.run_set)
    if not points:
        return ScaledThroughput(nodes, None, "unknown", "no measured throughput in the family")
    edge = above[0] if above else below[-1]
    where = f"below {edge.nodes}" if above else f"above {edge.nodes}"
    if efficiency_per_doubling is None:
        return ScaledThroughput(
            nodes,
            None,
            "unknown",
            f"not measured {where} nodes (state an efficiency per doubling to assume one)",
        )
    assert edge.throughput is not None  # from ``points``
    doublings = math.log2(nodes / edge.nodes)
    value = edge.throughput * (nodes / edge.nodes) * efficiency_per_doubling**doublings
    detail = (
        f"assumed: {efficiency_per_doubling:.0%} efficiency per doubling from the measured "
        f"{edge.nodes} nodes"
    )
    return ScaledThroughput(nodes, value, ASSUMED, detail, edge.run_set)
