"""Writing a snapshot: every value its estimate used, by id and by value
(``render_scenario``), atomically under the project lock (``save_scenario``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from pathlib import Path
from typing import Any

import polars as pl
import tomli_w

from trntui.core.errors import UserError
from trntui.core.estimate import (
    TERMS,
    Estimate,
    EstimateContext,
    Override,
    estimate,
    quote_id,
    rate_id,
)
from trntui.core.quotes import PriceQuote, ServiceRate
from trntui.store.atomic import atomic_write_text
from trntui.store.project import writes_project
from trntui.store.scenarios.snapshot import (
    SCHEMA_VERSION,
    Scenario,
    checked_document,
    load_scenario,
    scenario_from_document,
    scenario_path,
    user_at_host,
)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    """Drop unknowns (TOML has no null) and non-finite numbers."""
    return {
        k: v
        for k, v in values.items()
        if v is not None and not (isinstance(v, float) and not math.isfinite(v)) and v != ()
    }


def _quote_table(quote: PriceQuote) -> dict[str, Any]:
    return {"id": quote_id(quote), **_clean(dataclasses.asdict(quote))}


def _rate_table(rate: ServiceRate) -> dict[str, Any]:
    values = dataclasses.asdict(rate)
    values["service"] = rate.service.value
    values["tiers"] = [_clean(dataclasses.asdict(tier)) for tier in rate.tiers]
    return {"id": rate_id(rate), **_clean(values)}


def render_scenario(
    name: str,
    context: EstimateContext,
    overrides: tuple[Override, ...],
    result: Estimate,
    *,
    note: str,
    saved_by: str,
    saved_at: dt.datetime,
    gpu_target: str | None = None,
) -> str:
    used_sets = {t.target.run_set for t in result.targets if t.target.run_set}
    runs = context.observations.filter(pl.col("set_name").is_in(sorted(used_sets)))
    used_quotes = {t.quote for t in result.targets if t.quote is not None}
    prep = next(
        (
            q
            for q in context.book.quotes
            for t in result.targets
            if quote_id(q) == t.input("data_prep_usd_per_hour").provenance.source
        ),
        None,
    )
    if prep is not None:
        used_quotes.add(prep)
    regions = {t.target.region for t in result.targets}
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "saved_at": saved_at,
        "saved_by": saved_by,
        "note": note,
        "gpu_target": gpu_target,
        "today": context.today,
        "max_quote_age_days": context.max_quote_age_days,
        "override": [_clean(dataclasses.asdict(o)) for o in overrides],
        "result": [
            _clean(
                {
                    "target": t.name,
                    "total_usd": t.total_usd,
                    "incomplete_inputs": list(t.incomplete_inputs),
                    **{term: t.term(term) for term in TERMS},
                    "instance_hours": t.instance_hours,
                    "usd_per_unit": t.usd_per_unit,
                    "commitment_beyond_usd": t.commitment_beyond_usd,
                }
            )
            for t in result.targets
        ],
        "inputs": [
            _clean(
                {
                    "target": t.name,
                    "key": i.key,
                    "value": i.value,
                    "kind": i.provenance.kind,
                    "source": i.provenance.source,
                    "detail": i.provenance.detail,
                    "low": i.low,
                    "high": i.high,
                    "runs": i.runs,
                }
            )
            for t in result.targets
            for i in t.inputs
        ],
        "quote": [_quote_table(q) for q in sorted(used_quotes, key=quote_id)],
        "rate": [_rate_table(r) for r in context.book.rates if r.region in regions],
        "run_set": [
            {"name": set_name, "run_ids": _run_ids(runs, set_name)}
            for set_name in sorted(used_sets)
        ],
        "run": [_clean(row) for row in runs.to_dicts()],
        "inventory": context.inventory.to_dict(),
    }
    header = (
        f"# trntui scenario snapshot {name!r}: every input, override, quote and run it used.\n"
        "# Reopen with `trntui scenario show DIR NAME`; values absent here were unknown.\n"
    )
    return header + tomli_w.dumps(_clean(document))


def _run_ids(observations: pl.DataFrame, set_name: str) -> list[str]:
    return sorted(observations.filter(pl.col("set_name") == set_name)["run_id"].to_list())


@writes_project
def save_scenario(
    root: Path,
    name: str,
    context: EstimateContext,
    overrides: tuple[Override, ...] | list[Override] = (),
    *,
    note: str = "",
    saved_by: str | None = None,
    gpu_target: str | None = None,
) -> Scenario:
    """Write ``scenarios/<name>.toml`` atomically (replacing one of that name), with the GPU
    target Trainium3 is compared with (``gpu_target``: the working scenario's choice; None for
    none, the first GPU target).

    The overrides are checked first (``InvalidInputError``), so a bad edit is never saved.
    """
    overrides = tuple(overrides)
    result = estimate(context, overrides)
    saved_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    who = saved_by or user_at_host()
    text = render_scenario(
        name,
        context,
        overrides,
        result,
        note=note,
        saved_by=who,
        saved_at=saved_at,
        gpu_target=gpu_target,
    )
    path = scenario_path(root, name)
    try:
        # Read back before anything on disk changes: a snapshot that would not reopen is
        # never written, and one saved under this name before stays whole.
        scenario_from_document(path, checked_document(path, text), name)
    except UserError as error:
        raise UserError(
            f"scenario {name!r} was not saved: it would not read back ({error}); "
            + (f"{path} is unchanged" if path.exists() else "nothing was written")
        ) from None
    atomic_write_text(path, text, root=root)
    return load_scenario(root, name)
