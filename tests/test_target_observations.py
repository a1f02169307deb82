"""Issue 29, a team's archive: ``trntui estimate`` reads only the runs of the targets' run
sets and of the sets their scaling families could hold (``core.scaling.family_candidates``,
``store.estimate_context.read_target_observations``), and estimates exactly what it did from
every run.

The project: the sample (its GPU baseline, 10 Oracle 1 x 8 H100 runs, and its Trainium3 set)
plus real MLPerf sets no target names: Supermicro's 8 x H100 llama2_70b_lora set (stated here
as 2 nodes of 8, so it scales the GPU baseline's workload) and HPE's H200 sets at 1, 2 and 4
nodes (a family of their own).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import MLPERF_DATA, copy_sample
from trntui.core.estimate import EstimateContext, estimate
from trntui.core.inventory import Inventory
from trntui.core.prediction import prediction_bands
from trntui.core.report_document import estimate_document
from trntui.core.scaling import FAMILY_PARTS_VERSION, family_candidates, family_keys, family_of
from trntui.core.timeline import SystemSize
from trntui.store import facts as stored_facts
from trntui.store.project import Project, read_inventory
from trntui.store.project_store import ProjectStore
from trntui.store.run_import import import_paths
from trntui.store.set_sizes import name_family, state_size

GPU_SET = "gpu-1x8h100-mlperf-v4.0"
TRN_SET = "trn3-example"
SMC_SET = "smc-8xh100"
HPE = MLPERF_DATA / "v5.0/HPE/results"
HPE_SETS = {
    f"hpe-n{n}": HPE / f"HPE-Cray-XD670-H200-SXM5-141GB_n{n}_24.09/llama2_70b_lora"
    for n in (1, 2, 4)
}
SMC = MLPERF_DATA / "v4.0/smc/results/8xSMC-H100-SXM-80GB/llama2_70b_lora"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_sample(tmp_path_factory.mktemp("archive") / "project")
    with Project.open(root):
        for name, folder in HPE_SETS.items():
            import_paths(root, [folder], set_name=name)
        import_paths(root, [SMC], set_name=SMC_SET)
        state_size(
            root, SMC_SET, SystemSize(2, 8, "NVIDIA H100-SXM5-80GB", "this test", None, "test")
        )
    return root


@pytest.fixture
def project(archive: Path, tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(archive, root, ignore=shutil.ignore_patterns(".trntui.lock"))
    return root


def at_two_nodes(inventory: Inventory) -> Inventory:
    """The GPU baseline's target at 2 instances: a count its family measured (the SMC set)."""
    targets = tuple(
        dataclasses.replace(t, instance_count=2) if t.run_set == GPU_SET else t
        for t in inventory.targets
    )
    return dataclasses.replace(inventory, targets=targets)


def document(context: EstimateContext) -> dict[str, Any]:
    result = estimate(context)
    return estimate_document(result, prediction_bands(result))


def both(root: Path, inventory: Inventory) -> tuple[EstimateContext, EstimateContext]:
    """The context from the targets' runs, and from every run."""
    with ProjectStore.open(root, read_only=True) as store:
        return store.read_target_context(inventory), store.derive_and_store_context(inventory)


def assert_targets_read_hpe_n2_as_every_run(project: Path) -> None:
    """With the baseline at 2 instances, the targets' runs are those of the baseline's, the
    Trainium, the SMC and the hpe-n2 sets, and the estimate from them is the one from every
    run."""
    inventory = at_two_nodes(read_inventory(project).inventory)
    targets, every = both(project, inventory)
    assert set(targets.observations["set_name"].unique()) == {
        GPU_SET, TRN_SET, SMC_SET, "hpe-n2"
    }  # fmt: skip
    assert document(targets) == document(every)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The run ids whose timelines were hashed (a run whose stored facts were checked)."""
    seen: list[str] = []
    digest = stored_facts.timeline_digest

    def recording(path: Path | str) -> str:
        seen.append(Path(path).stem)
        return digest(path)

    monkeypatch.setattr(stored_facts, "timeline_digest", recording)
    yield seen


def sets_of(root: Path, run_ids: list[str]) -> set[str]:
    import polars as pl

    runs = pl.read_parquet(root / "runs" / "runs.parquet")
    return set(runs.filter(pl.col("run_id").is_in(run_ids))["set_name"].to_list())


def reads_only_the_h100_family(project: Path, hashed: list[str]) -> EstimateContext:
    """The estimate of the GPU baseline at two nodes reads the H100 sets and Trainium3's,
    never the H200 runs, finds the same family (the GPU set and SMC's) as from every run and
    estimates the same; its context."""
    inventory = at_two_nodes(read_inventory(project).inventory)
    with ProjectStore.open(project, read_only=True) as store:
        targets = store.read_target_context(inventory)
    assert sets_of(project, hashed) == {GPU_SET, TRN_SET, SMC_SET}, "the H200 runs were read"
    assert set(targets.observations["set_name"].unique()) == {GPU_SET, TRN_SET, SMC_SET}
    _, every = both(project, inventory)
    family = family_of(targets.families(), GPU_SET)
    assert family is not None and family.sets == (GPU_SET, SMC_SET)
    assert family == family_of(every.families(), GPU_SET)
    assert document(targets) == document(every)
    return targets


def test_a_set_grouped_automatically_reads_only_the_sets_that_may_share_its_key(
    project: Path, hashed: list[str]
) -> None:
    """The runs table stores each run's family parts: the HPE sets ran on H200, so no
    H100 set's family can hold them, and their runs are not read."""
    reads_only_the_h100_family(project, hashed)


def test_a_size_stated_on_another_accelerator_moves_the_set_into_the_family(
    project: Path,
) -> None:
    """A person states that the 4-node HPE set ran on H100: its key is then the GPU
    baseline's (the stated accelerator replaces the logged one), so it is read and joins
    that family, as it does from every run."""
    with Project.open(project):
        state_size(
            project,
            "hpe-n4",
            SystemSize(4, 8, "NVIDIA H100-SXM5-80GB", "this test", None, "test"),
        )
    inventory = at_two_nodes(read_inventory(project).inventory)
    targets, every = both(project, inventory)
    assert set(targets.observations["set_name"].unique()) == {
        GPU_SET, TRN_SET, SMC_SET, "hpe-n4"
    }  # fmt: skip
    family = family_of(targets.families(), GPU_SET)
    assert family is not None and family.sets == (GPU_SET, SMC_SET, "hpe-n4")
    assert family == family_of(every.families(), GPU_SET)
    assert document(targets) == document(every)


def without_family_parts(root: Path) -> None:
    """The runs table as a trntui before the family parts stored it."""
    import polars as pl

    from trntui.store.runs import runs_path

    path = runs_path(root)
    table = pl.read_parquet(path)
    table.drop("protocol_json", "logged_accelerator", "family_parts_version").write_parquet(path)


def test_a_table_stored_before_the_family_parts_estimates_the_same(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An old runs table has no family parts: every set nobody named may share the targets'
    key, so all are read (as before), the estimate is the same byte for byte, and the
    read-only estimate leaves the table as it was."""
    from trntui.cli import main
    from trntui.store.runs import runs_path

    old = tmp_path / "old"
    shutil.copytree(project, old, ignore=shutil.ignore_patterns(".trntui.lock"))
    without_family_parts(old)
    stored = runs_path(old).read_bytes()
    inventory = at_two_nodes(read_inventory(old).inventory)
    targets, every = both(old, inventory)
    assert set(targets.observations["set_name"].unique()) == {
        GPU_SET, TRN_SET, SMC_SET, *HPE_SETS
    }  # fmt: skip
    assert document(targets) == document(every)
    assert document(targets) == document(both(project, inventory)[0])
    assert main(["estimate", str(old), "--json"]) == 0
    printed = capsys.readouterr().out
    assert main(["estimate", str(project), "--json"]) == 0
    assert capsys.readouterr().out == printed
    assert runs_path(old).read_bytes() == stored, "a read-only estimate wrote the runs table"


def test_parts_of_another_version_count_as_unknown(project: Path) -> None:
    """A row whose parts another ``FAMILY_PARTS_VERSION`` made (a newer trntui, which may
    also add columns of its own) says nothing of its set's key: that set is read, the other
    H200 sets are not, and the estimate is the same."""
    import polars as pl

    from trntui.store.runs import runs_path

    path = runs_path(project)
    table = pl.read_parquet(path)
    first = table.with_row_index().filter(pl.col("set_name") == "hpe-n2")["index"][0]
    table.with_columns(
        pl.when(pl.int_range(pl.len()) == first)
        .then(pl.lit(FAMILY_PARTS_VERSION + 1))
        .otherwise(pl.col("family_parts_version"))
        .alias("family_parts_version"),
        pl.lit("a newer trntui's").alias("newer_column"),
    ).write_parquet(path)
    assert_targets_read_hpe_n2_as_every_run(project)


@pytest.mark.parametrize("damaged", ["not json", "[1, 2]", '"a text"'])
def test_a_damaged_protocol_text_makes_its_set_read_whole(project: Path, damaged: str) -> None:
    """A ``protocol_json`` edited by hand into something that is no JSON object says nothing
    of its set's key (it used to end the estimate with a JSONDecodeError or AttributeError
    traceback): that set is read whole, its runs' metadata gives the key, and the estimate is
    the same."""
    import polars as pl

    from trntui.store.runs import runs_path

    path = runs_path(project)
    table = pl.read_parquet(path)
    table.with_columns(
        pl.when(pl.col("set_name") == "hpe-n2")
        .then(pl.lit(damaged))
        .otherwise(pl.col("protocol_json"))
        .alias("protocol_json"),
    ).write_parquet(path)
    assert_targets_read_hpe_n2_as_every_run(project)


def test_named_families_read_only_the_targets_families(project: Path, hashed: list[str]) -> None:
    with Project.open(project):
        name_family(project, [GPU_SET, SMC_SET], "H100")
        name_family(project, [TRN_SET], "Trainium3")
        name_family(project, list(HPE_SETS), "H200")
    targets = reads_only_the_h100_family(project, hashed)
    # The count the family measured takes the SMC set's inputs: the family was read.
    gpu = next(t for t in document(targets)["targets"] if t["instance_count"] == 2)
    assert SMC_SET in str(gpu["inputs"])


@pytest.mark.parametrize("named", [True, False], ids=["H200 named", "all grouped"])
def test_the_estimate_command_prints_the_same_from_the_targets_runs(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    named: bool,
) -> None:
    from trntui.cli import main
    from trntui.commands import estimate as estimate_commands

    if named:
        with Project.open(project):
            name_family(project, list(HPE_SETS), "H200")
    assert main(["estimate", str(project), "--json"]) == 0
    printed = capsys.readouterr().out
    monkeypatch.setattr(estimate_commands, "target_context", estimate_commands.project_context)
    assert main(["estimate", str(project), "--json"]) == 0  # from every run
    assert capsys.readouterr().out == printed


def test_family_candidates_follow_the_grouping_key() -> None:
    every = {"a", "b", "c", "d", "e"}
    named = {"a": "F", "b": "F", "c": "G"}
    assert family_candidates(["a"], named, every) == {"a", "b"}
    assert family_candidates(["d"], named, every) == {"d", "e"}
    assert family_candidates(["a", "d"], named, every) == {"a", "b", "d", "e"}
    assert family_candidates(["c"], named, every) == {"c"}
    assert family_candidates(["missing"], named, every) == set()
    assert family_candidates([], named, every) == set()


def test_family_candidates_leave_out_the_sets_of_other_keys() -> None:
    every = {"a", "b", "c", "d", "e", "f"}
    named = {"a": "F"}
    h100, h200 = ("H100", ()), ("H200", ())
    keys = {"b": frozenset({h100}), "c": frozenset({h200}), "d": frozenset({h100, h200})}
    keys |= {"e": frozenset()}  # joins no family; "f": its parts are not known
    assert family_candidates(["b"], named, every, keys) == {"b", "d", "f"}
    assert family_candidates(["c"], named, every, keys) == {"c", "d", "f"}
    assert family_candidates(["e"], named, every, keys) == {"e", "f"}
    assert family_candidates(["a"], named, every, keys) == {"a"}
    assert family_candidates(["f"], named, every, keys) == {"b", "c", "d", "e", "f"}
    assert family_candidates(["b"], named, every) == {"b", "c", "d", "e", "f"}


def test_family_keys_hold_every_key_a_set_may_be_shown_at() -> None:
    """A set's key is taken at whichever run's size it is shown at, with the protocol facts
    of all its runs: each accelerator its runs log is tried, and a stated one."""
    lora = json.dumps({"benchmark": "llama2_70b_lora", "global_batch_size": "8"})
    lora_16 = json.dumps({"benchmark": "llama2_70b_lora", "global_batch_size": "16"})
    bert = json.dumps({"benchmark": "bert", "quality_target": "0.72"})
    stated = {"s": SystemSize(1, 16, "Trainium3", "test", None, "test")}
    keys = family_keys(
        [
            ("mixed", lora, "NVIDIA H100-SXM5-80GB"),
            ("mixed", lora, None),
            ("batch", lora, "H100 80GB"),
            ("batch", lora_16, "NVIDIA H100-SXM5-80GB"),
            ("two", lora, "H100"),
            ("two", bert, "H100"),
            ("bare", None, None),
            ("s", None, None),
        ],
        stated,
    )
    lora_facts = (("benchmark", ("llama2_70b_lora",)), ("sequence_length", ()))
    lora_facts += (("quality_metric", ()), ("quality_target", ()))
    assert keys["mixed"] == {("H100", lora_facts), (None, lora_facts)}
    assert keys["batch"] == {("H100", lora_facts)}, "the batch may grow with the system"
    two = (("benchmark", ("bert", "llama2_70b_lora")), ("sequence_length", ()))
    two += (("quality_metric", ()), ("quality_target", ("0.72",)))
    assert keys["two"] == {("H100", two)}
    assert keys["bare"] == frozenset(), "nothing says what it ran: no family"
    no_facts = tuple((fact, ()) for fact, _ in lora_facts)
    assert keys["s"] == {("TRAINIUM3", no_facts)}, "the stated accelerator, the only key"


def test_the_runs_table_is_still_checked_whole(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the wanted runs are read, but a repeated row or a bad id in a set no target needs
    is still refused (the id and repeat checks read the run id column of every row)."""
    import polars as pl

    from trntui.cli import main
    from trntui.store.runs import runs_path

    with Project.open(project):
        name_family(project, list(HPE_SETS), "H200")
    path = runs_path(project)
    table = pl.read_parquet(path)
    h200 = table.filter(pl.col("set_name") == "hpe-n2")
    pl.concat([table, h200[:1]]).write_parquet(path)
    assert main(["estimate", str(project), "--json"]) == 2
    err = capsys.readouterr().err
    assert f"row {table.height + 1} repeats run_id {h200['run_id'][0]!r}" in err
    bad = table.with_columns(
        pl.when(pl.col("run_id") == h200["run_id"][0])
        .then(pl.lit("../../etc/passwd"))
        .otherwise(pl.col("run_id"))
        .alias("run_id")
    )
    bad.write_parquet(path)
    assert main(["estimate", str(project), "--json"]) == 2
    assert "'../../etc/passwd'" in capsys.readouterr().err


def test_a_damaged_metadata_text_is_named_by_its_row_in_the_table(project: Path) -> None:
    """The estimate reads a few rows of the runs table; a damaged one is still named by its
    row in the file, not among the rows read."""
    import polars as pl

    from trntui.core.errors import InputFileError
    from trntui.store.runs import runs_path

    with Project.open(project):
        name_family(project, list(HPE_SETS), "H200")  # not read: rows before the SMC set's
    path = runs_path(project)
    table = pl.read_parquet(path)
    row = table.with_row_index().filter(pl.col("set_name") == SMC_SET)["index"][1]
    damaged = table.with_columns(
        pl.when(pl.int_range(pl.len()) == row)
        .then(pl.lit("{not json"))
        .otherwise(pl.col("metadata_json"))
        .alias("metadata_json")
    )
    damaged.write_parquet(path)
    with (
        ProjectStore.open(project, read_only=True) as store,
        pytest.raises(InputFileError) as refused,
    ):
        store.read_target_context()
    assert refused.value.path == str(path) and refused.value.key == "metadata_json"
    assert refused.value.line == row + 1
