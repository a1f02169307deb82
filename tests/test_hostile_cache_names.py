"""Issue 30, item 2: a region (or offer) name is held to a pattern before it becomes a path in
the price cache, whatever its source: the command line, the app's fetch form, or a region
index that lists such a key. Nothing is written, created or deleted outside the cache.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_hostile_prices import hostile_price_list
from tests.test_pricing_support import FakePriceList, version_path
from trntui.cli import main
from trntui.core.errors import UserError
from trntui.pricing.cache import offer_csv_path, region_index_path
from trntui.pricing.client import PriceListClient
from trntui.pricing.errors import PricingError
from trntui.pricing.settings import CACHE_DIR_ENV, PricingSettings

HOSTILE = ["../../x", "..", "us-east-1/../../x", "/tmp/x", "us-east-1\n", "a b"]
EC2_INDEX = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"


@pytest.fixture
def server() -> Iterator[tuple[FakePriceList, dict[str, tuple]]]:
    with hostile_price_list() as both:
        yield both


def _list_region(state: FakePriceList, region: str) -> None:
    """The EC2 region index lists ``region`` with a real file behind it."""
    index = json.loads(state.site[EC2_INDEX])
    index["regions"][region] = {
        "regionCode": region,
        "currentVersionUrl": version_path("AmazonEC2", "us-east-1"),
    }
    state.site[EC2_INDEX] = json.dumps(index).encode()


def _everything(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


@pytest.mark.parametrize("region", HOSTILE)
def test_cache_paths_refuse_names_that_are_not_plain(region: str, tmp_path: Path) -> None:
    with pytest.raises(PricingError, match="region"):
        offer_csv_path(tmp_path, "AmazonEC2", region)
    with pytest.raises(PricingError, match="offer"):
        region_index_path(tmp_path, "../AmazonEC2")


def test_a_listed_dot_dot_region_writes_and_deletes_nothing_outside_the_cache(
    server, tmp_path: Path
) -> None:
    state, _ = server
    region = "../../x"
    _list_region(state, region)
    cache = tmp_path / "deep" / "cache"
    victim = tmp_path / "x" / ".trntui-download-victim.csv"
    victim.parent.mkdir()
    victim.write_text("not trntui's")
    os.utime(victim, (0, 0))  # old enough for the partial-download sweep
    before = _everything(tmp_path)
    settings = PricingSettings(base_url=state.base_url, cache_dir=cache)
    with PriceListClient(settings) as client, pytest.raises(PricingError, match="region"):
        client.offer_file("AmazonEC2", region)
    assert victim.read_text() == "not trntui's"
    created = _everything(tmp_path) - before
    assert all(name.startswith("deep/cache") for name in created), created


def test_the_cli_refuses_a_region_that_is_not_a_region_code(
    server, tmp_path: Path, capsys, monkeypatch
) -> None:
    state, _ = server
    _list_region(state, "../../x")
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    before = _everything(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["price", "fetch", "--pricing-url", state.base_url, "--region", "../../x"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert "Traceback" not in err
    assert "'../../x' is not an AWS region code" in err
    assert _everything(tmp_path) == before
    assert not state.requests  # refused before anything was asked of the server


def test_a_linked_folder_inside_the_cache_is_never_written_through(server, tmp_path: Path) -> None:
    """The cache's folders are made by trntui: one replaced by a link to elsewhere is refused,
    and neither the download nor its sidecar lands where the link points."""
    state, _ = server
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    leftover = elsewhere / ".trntui-download-old.csv"  # named like a partial download of ours
    leftover.write_text("not trntui's")
    os.utime(leftover, (0, 0))
    cache.mkdir()
    (cache / "AmazonEC2").symlink_to(elsewhere)
    settings = PricingSettings(base_url=state.base_url, cache_dir=cache)
    with PriceListClient(settings) as client, pytest.raises(UserError, match="symbolic link"):
        client.offer_file("AmazonEC2", "us-east-1")
    assert [path.name for path in elsewhere.iterdir()] == [leftover.name]
    assert leftover.read_text() == "not trntui's"


def test_a_cache_write_the_system_refuses_names_the_cache_file(server, tmp_path: Path) -> None:
    """Issue 30, item 15: with a file-size limit, a fetch said the write failed but named no
    file ("a project file"). It names the cache file it was writing, and leaves no partial
    download behind."""
    from tests.test_hostile_inputs import run_cli

    state, _ = server
    cache = tmp_path / "cache"
    prelude = f"""
        import os, resource, signal
        os.environ["{CACHE_DIR_ENV}"] = {str(cache)!r}
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    """
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type", "p5.48xlarge"]
    result = run_cli(*fetch, prelude=prelude)
    said = result.stdout + result.stderr
    assert result.returncode == 2, said
    assert "Traceback" not in said
    assert "cannot be written (File too large)" in said
    assert str(cache / "AmazonEC2") in said
    assert not list(cache.rglob(".trntui-download-*"))
