"""The importer registry: format sniffing, progress reports and cancellation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import MLPERF_DATA, loggen
from trntui.core.errors import InputFileError
from trntui.importers import FORMATS, Cancelled, detect_format, import_file

MLPERF = MLPERF_DATA / "v3.0/Dell/results/XE9680x8H100-SXM-80GB/resnet"


@pytest.fixture()
def logs(tmp_path: Path) -> dict[str, Path]:
    megatron = tmp_path / "megatron.log"
    loggen.write_megatron(megatron)
    nxd = tmp_path / "nxd.log"
    loggen.write_nxd(nxd)
    hf = tmp_path / "trainer_state.json"
    hf.write_text(json.dumps({"log_history": [{"loss": 1.0, "step": 1}]}, indent=2))
    return {"megatron": megatron, "nxd": nxd, "hf": hf, "mlperf": MLPERF / "result_0.txt"}


def test_the_format_list_names_each_parser_in_sniffing_order() -> None:
    from trntui.importers import _formats

    assert [fmt.name for fmt in _formats()] == list(FORMATS)


def test_every_format_is_detected(logs: dict[str, Path]) -> None:
    for name, path in logs.items():
        assert name in FORMATS
        assert detect_format(path) == name


def test_megatron_found_after_a_long_preamble(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    preamble = "\n".join(f"  arg_{i} ............................ {i}" for i in range(60_000))
    path.write_text(preamble + "\n" + "\n".join(loggen.megatron_lines()) + "\n")
    assert path.stat().st_size > 2 << 20
    assert detect_format(path) == "megatron"


@pytest.mark.parametrize("content", [b"", b"hello\nworld\n", b"\xff\xfe\x00binary"])
def test_unrecognised_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(content)
    with pytest.raises(InputFileError) as caught:
        import_file(path)
    assert str(path) in str(caught.value)


def test_missing_file_and_unknown_format(tmp_path: Path, logs: dict[str, Path]) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        import_file(tmp_path / "absent.log")
    with pytest.raises(InputFileError, match="unknown log format"):
        import_file(logs["megatron"], format="wandb")
    with pytest.raises(InputFileError, match="folder"):
        import_file(tmp_path)


@pytest.mark.parametrize("name", ["megatron", "nxd", "hf", "mlperf"])
def test_progress_rises_to_one(logs: dict[str, Path], name: str) -> None:
    if name not in logs:
        pytest.skip("sample not available")
    seen: list[float] = []
    import_file(logs[name], progress=seen.append)
    assert seen[0] == 0.0 and seen[-1] == 1.0
    assert seen == sorted(seen)


@pytest.mark.parametrize("after", [0, 1, 2])
def test_cancel_stops_the_import(logs: dict[str, Path], after: int) -> None:
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > after

    with pytest.raises(Cancelled):
        import_file(logs["megatron"], cancel=cancel)
