"""Issue 26, item 8: names cut to fit a column stay different. Two run sets
``1xBM.GPU.B200.8/llama2_70b_lora`` and ``8xBM.GPU.B200.8/llama2_70b_lora`` both showed as
``.8/llama2_70b_lora`` (Scale) or ``xBM.GPU.B200.8/...`` (the z dialog), and the CLI cut every
set name at 30 characters."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trntui.core.format import distinct_labels

MLPERF = [
    "1xBM.GPU.B200.8/llama2_70b_lora",
    "8xBM.GPU.B200.8/llama2_70b_lora",
    "HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09/llama2_70b_lora",
    "HPE-Cray-XD670-H200-SXM5-141GB_n2_24.09/llama2_70b_lora",
    "HPE-Cray-XD670-H200-SXM5-141GB_n4_24.09/llama2_70b_lora",
]


def test_mlperf_system_names_stay_apart_in_every_width_the_screens_use() -> None:
    for width in (12, 15, 16, 30, 40):
        labels = distinct_labels(MLPERF, width)
        assert len(set(labels.values())) == len(MLPERF), labels
        assert all(len(label) <= width for label in labels.values())


def test_a_name_that_fits_is_shown_whole() -> None:
    assert distinct_labels(["gpu-baseline", "trn3"], 15) == {
        "gpu-baseline": "gpu-baseline",
        "trn3": "trn3",
    }


@given(
    st.lists(st.text(alphabet="ab/_-.x1", min_size=1, max_size=60), unique=True, max_size=12),
    st.integers(min_value=6, max_value=40),
)
def test_any_names_get_distinct_labels_that_fit(names: list[str], width: int) -> None:
    labels = distinct_labels(names, width)
    assert set(labels) == set(names)
    assert len(set(labels.values())) == len(names)
    assert all(len(label) <= width for label in labels.values())


def test_the_cli_lists_sets_apart(tmp_path, capsys) -> None:
    from tests import loggen
    from trntui.cli import main

    project = tmp_path / "p"
    assert main(["init", str(project)]) == 0
    log = tmp_path / "nxd.log"
    loggen.write_nxd(log, loggen.NxdSpec())
    for name in MLPERF[2:4]:  # they differ only after their 31st character
        assert main(["import", str(project), str(log), "--set", name]) == 0
        # the same content is imported once: a second copy under another name
        log = tmp_path / f"{len(name)}-{name[0]}.log"
        loggen.write_nxd(log, loggen.NxdSpec(seed=len(name) + ord(name[0])))
    capsys.readouterr()
    assert main(["runs", str(project)]) == 0
    # Each set heads its own runs, named in full: two names alike for 31 characters differ.
    headings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("set ")]
    assert sorted(h.split(": ")[0] for h in headings) == sorted(f"set {n}" for n in MLPERF[2:4])
