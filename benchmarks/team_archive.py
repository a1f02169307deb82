"""A team's archive: the sample project plus thousands of runs made from real MLPerf logs.

A platform team keeps every trial of every model in one project: thousands of runs, hundreds of
run sets, several scaling families. This module builds such a project for the benchmarks
(``bench_team_archive.py``) from real result logs (default: the copies in ``tests/data/mlperf``;
the shared set folder works the same):

1. every result set under the folder is imported into a scratch project by trntui itself
   (``import_paths``): these are the templates;
2. each template run is made into one run per system size of a scaling family: the set's own
   size times 1, 2, 3, 4, 6, 8, 12, 16, 24 and 32 (``MULTIPLES``), its training (everything
   after ``run_start``) faster by ``multiple ** -0.8`` (the HPE llama2_70b_lora sets, one
   system at 1, 2 and 4 nodes, measure about that), its set-up as measured; these variants are
   stored with trntui's own ``add_run`` and their facts derived by ``store_facts`` against the
   archive's goal (the sample's inventory);
3. the archive is a copy of the sample project, to which run sets of ``runs_per_set`` runs are
   added until it holds ``runs`` more runs: families of ten sets (one template at the ten
   sizes; the sizes stated in ``runs/sets.toml``, as a person states them, and the family
   named there), each family a fresh copy of a template's variants, so every run has its own
   id (a made-up SHA-256), its own stored timeline (a copy of the variant's) and its own row
   of stored facts (the variant's, under the key trntui computes for the copy);
4. the sample's GPU baseline set joins a family with the nine larger sizes of its own
   template (Oracle's 1 x 8 H100 set), so the Scale tab has a family of ten sizes to price.

The copies need no derivation: ``derive_and_store_runs`` reads every stored fact back
(checked at the end: a copy whose facts would be derived again stops the build).

Run on its own to keep one: ``python benchmarks/team_archive.py DEST [--runs N] [--sets M]
[--mlperf FOLDER]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trntui.core.quality import QualityTarget
from trntui.core.timeline import ImportedRun, RunMetadata
from trntui.store.facts import (
    FACTS_SCHEMA,
    derive_and_store_runs,
    facts_path,
    run_key,
    timeline_digest,
)
from trntui.store.project import init_project, read_inventory
from trntui.store.run_import import import_paths
from trntui.store.runs import (
    RUN_ID_LENGTH,
    RUNS_SCHEMA,
    StoredRun,
    add_run,
    load_run,
    load_runs,
    runs_path,
    timeline_path,
    with_family_parts,
)
from trntui.store.set_sizes import sets_path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_runs" / "llama2-70b-lora"
MLPERF = ROOT / "tests" / "data" / "mlperf"
MULTIPLES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
SPEEDUP_EXPONENT = 0.8
SAMPLE_GPU_SET = "gpu-1x8h100-mlperf-v4.0"
SAMPLE_GPU_TEMPLATE = "Oracle/1xBM.GPU.H100.8/llama2_70b_lora"
SAMPLE_FAMILY = "llama2-70b-lora on H100 (Oracle)"


def result_sets(mlperf: Path) -> dict[str, Path]:
    """Each folder holding MLPerf result logs, named ``org/system/benchmark``."""
    folders = sorted({log.parent for log in mlperf.rglob("result_*.txt")})
    return {f"{f.parent.parent.parent.name}/{f.parent.name}/{f.name}": f for f in folders}


def faster(run: ImportedRun, multiple: int, sha256: str) -> ImportedRun:
    """``run`` as it would be on ``multiple`` times its system: training (after ``run_start``)
    ``multiple ** -SPEEDUP_EXPONENT`` as long, set-up as measured; ``sha256``: its made-up
    content hash."""
    factor = multiple**-SPEEDUP_EXPONENT
    timeline = run.timeline
    starts = timeline.filter(pl.col("kind") == "run_start")["t_s"]
    start = float(starts.min()) if starts.len() else 0.0  # type: ignore[arg-type]
    after = pl.col("t_s") > start
    timeline = timeline.with_columns(
        pl.when(after).then(start + (pl.col("t_s") - start) * factor).otherwise(pl.col("t_s")),
        *(
            pl.when(after).then(pl.col(c) * factor).otherwise(pl.col(c)).alias(c)
            for c in ("step_time_s", "duration_s")
        ),
        pl.when(after).then(pl.col("throughput") / factor).otherwise(pl.col("throughput")),
    )
    meta = run.metadata
    end = float(run.timeline["t_s"].max() or 0.0)  # type: ignore[arg-type]
    saved_s = max(end - start, 0.0) * (1 - factor)
    clock = meta.job_clock
    if clock is not None:
        clock = dataclasses.replace(
            clock,
            span_s=clock.span_s - saved_s,
            clocks=tuple((what, seconds - saved_s) for what, seconds in clock.clocks),
        )
    source = f"{meta.source}.x{multiple}"
    return ImportedRun(
        timeline, dataclasses.replace(meta, sha256=sha256, source=source, job_clock=clock)
    )


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Template:
    """One real result set at one of ``MULTIPLES``: its runs stored in the variants project."""

    name: str
    multiple: int
    run_ids: tuple[str, ...]
    nodes: int
    accelerators_per_node: int
    accelerator: str | None


def build_variants(mlperf: Path, folder: Path) -> tuple[Path, list[Template]]:
    """Import the real sets, then store each at every multiple (steps 1 and 2)."""
    seed = folder / "seed"
    init_project(seed / "project")
    sets = result_sets(mlperf)
    for name, path in sets.items():
        import_paths(seed / "project", [path], set_name=name)
    variants = folder / "variants"
    shutil.copytree(SAMPLE, variants, ignore=shutil.ignore_patterns("runs", ".trntui.lock"))
    templates: list[Template] = []
    runs = load_runs(seed / "project")
    kept: dict[str, StoredRun] = {}
    for name in sets:
        ids = runs.filter(pl.col("set_name") == name).sort("source")["run_id"].to_list()
        system = None
        for multiple in MULTIPLES:
            stored = []
            for run_id in ids:
                real = load_run(seed / "project", run_id, runs)
                system = system or real.metadata.system
                variant = faster(real, multiple, _digest(real.metadata.sha256, multiple))
                outcome = add_run(variants, variant, f"{name} x{multiple}", kept)
                assert outcome.run_id is not None, outcome
                stored.append(outcome.run_id)
            assert system is not None and system.nodes and system.accelerators_per_node, name
            templates.append(
                Template(
                    name,
                    multiple,
                    tuple(stored),
                    system.nodes * multiple,
                    system.accelerators_per_node,
                    system.accelerator,
                )
            )
    from trntui.store.facts import store_facts

    store_facts(variants, kept)
    return variants, templates


def _families(templates: list[Template], sets: int) -> Iterator[tuple[str, list[Template]]]:
    """``sets // len(MULTIPLES)`` families, templates in turn, each its ten sizes."""
    by_name: dict[str, list[Template]] = {}
    for template in templates:
        by_name.setdefault(template.name, []).append(template)
    names = sorted(by_name)
    for index in range(sets // len(MULTIPLES)):
        name = names[index % len(names)]
        yield f"{name} #{index // len(names) + 1}", by_name[name]


def build_archive(
    dest: Path,
    runs: int = 10_000,
    sets: int = 1_000,
    mlperf: Path = MLPERF,
    log: bool = True,
) -> Path:
    """The sample project at ``dest`` plus ``runs`` runs in ``sets`` run sets (see the module
    docstring); returns ``dest``."""
    started = time.perf_counter()
    runs_per_set = runs // sets
    with tempfile.TemporaryDirectory(prefix="trntui-archive-") as scratch:
        variants, templates = build_variants(mlperf, Path(scratch))
        if log:
            print(f"variants of {len(templates)} sets in {time.perf_counter() - started:.0f} s")
        shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".trntui.lock"))
        inventory = read_inventory(dest).inventory
        target, planned = inventory.goal.quality_target(), inventory.planned_steps()
        variant_runs = load_runs(variants)
        by_id = {row["run_id"]: row for row in variant_runs.iter_rows(named=True)}
        stored_facts = pl.read_parquet(facts_path(variants))
        facts = {row["run_id"]: row for row in stored_facts.iter_rows(named=True)}
        rows: list[dict] = []
        fact_rows: list[dict] = []
        entries: list[str] = []
        for family, members in _families(templates, sets):
            for template in members:
                set_name = f"{family} x{template.multiple}"
                entries.append(_set_entry(set_name, template, family))
                for index in range(runs_per_set):
                    source_id = template.run_ids[index % len(template.run_ids)]
                    _copy_run(
                        variants, dest, by_id[source_id], facts[source_id],
                        (set_name, index), rows, fact_rows, target, planned,
                    )  # fmt: skip
        for template in templates:
            if template.name == SAMPLE_GPU_TEMPLATE and template.multiple > 1:
                set_name = f"{SAMPLE_GPU_SET} x{template.multiple}"
                entries.append(_set_entry(set_name, template, SAMPLE_FAMILY))
                for index, source_id in enumerate(template.run_ids):
                    _copy_run(
                        variants, dest, by_id[source_id], facts[source_id],
                        (set_name, index), rows, fact_rows, target, planned,
                    )  # fmt: skip
        entries.append(f'[[set]]\nname = "{SAMPLE_GPU_SET}"\nfamily = "{SAMPLE_FAMILY}"\n')
        table = pl.concat([load_runs(dest), pl.DataFrame(rows, schema=RUNS_SCHEMA)])
        table = with_family_parts(table)  # as trntui's own writes store the table
        table.write_parquet(runs_path(dest))
        stored = pl.read_parquet(facts_path(dest)).select(list(FACTS_SCHEMA))
        pl.concat([stored, pl.DataFrame(fact_rows, schema=FACTS_SCHEMA)]).write_parquet(
            facts_path(dest)
        )
        with sets_path(dest).open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(entries))
    check = derive_and_store_runs(dest, target, planned)
    if check.derived:
        raise SystemExit(f"{check.derived} runs of the archive would be derived again on opening")
    if log:
        print(
            f"archive of {table.height} runs in {table['set_name'].n_unique()} sets at {dest} "
            f"in {time.perf_counter() - started:.0f} s"
        )
    return dest


def _set_entry(set_name: str, template: Template, family: str) -> str:
    accelerator = f'accelerator = "{template.accelerator}"\n' if template.accelerator else ""
    return (
        f'[[set]]\nname = "{set_name}"\nnodes = {template.nodes}\n'
        f"accelerators_per_node = {template.accelerators_per_node}\n{accelerator}"
        f'stated_by = "team_archive.py"\n'
        f'source = "generated: {template.name} at {template.multiple}x its nodes"\n'
        f'family = "{family}"\n'
    )


def _copy_run(
    variants: Path,
    dest: Path,
    row: dict,
    fact: dict,
    salt: tuple[str, int],
    rows: list[dict],
    fact_rows: list[dict],
    target: QualityTarget | None,
    planned: int | None,
) -> None:
    """One more run of ``dest``: the variant's row, timeline and facts under a new id."""
    sha256 = _digest(row["sha256"], *salt)
    run_id = sha256[:RUN_ID_LENGTH]
    metadata = RunMetadata.from_json(row["metadata_json"])
    copied = dataclasses.replace(metadata, sha256=sha256)
    rows.append(row | {"run_id": run_id, "sha256": sha256, "set_name": salt[0]}
                | {"metadata_json": copied.to_json()})  # fmt: skip
    timeline = timeline_path(dest, run_id)
    timeline.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(timeline_path(variants, row["run_id"]), timeline)
    key = run_key(
        sha256,
        timeline_digest(timeline),
        metadata.importer_version,
        target,
        planned,
        None,
        [],  # type: ignore[arg-type]
    )
    fact_rows.append(fact | {"run_id": run_id, "key": key})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--sets", type=int, default=1_000)
    parser.add_argument("--mlperf", type=Path, default=MLPERF)
    args = parser.parse_args()
    build_archive(args.dest, args.runs, args.sets, args.mlperf)


if __name__ == "__main__":
    main()
