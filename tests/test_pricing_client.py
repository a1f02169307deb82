"""Fetching from a real HTTP server on 127.0.0.1: extraction, cache reuse, every network fault."""

from __future__ import annotations

import itertools
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.test_pricing_support import (
    EC2_HEADER,
    P5_ON_DEMAND,
    PUBLICATION_DATE,
    TRANSFER_HEADER,
    TRN1_ON_DEMAND,
    TRN2_ON_DEMAND,
    VERSION,
    FakePriceList,
    Fault,
    ec2_rows,
    offer_csv,
    transfer_rows,
)
from trntui.core.errors import StorageError
from trntui.core.quotes import LookupStatus, SideService
from trntui.pricing.client import offer_csv_url
from trntui.pricing.errors import (
    InsecurePricingURLError,
    NoCachedPriceListError,
    PricingCancelledError,
    PricingError,
    PricingFormatError,
    PricingHTTPError,
    PricingNetworkError,
    PricingTooLargeError,
    RegionNotInPriceListError,
)
from trntui.pricing.service import (
    FetchResult,
    SideRatesResult,
    fetch_instance_quotes,
    fetch_side_rates,
)
from trntui.pricing.settings import CACHE_DIR_ENV, PRICING_URL_ENV, PricingSettings

EC2_US_EAST_1 = "/offers/v1.0/aws/AmazonEC2/20261120180211/us-east-1/index.csv"


def settings_for(server: FakePriceList, cache: Path, **changes: object) -> PricingSettings:
    return PricingSettings(base_url=server.base_url, cache_dir=cache, **changes)  # type: ignore[arg-type]


def cache_files(cache: Path) -> list[str]:
    return sorted(str(path.relative_to(cache)) for path in cache.rglob("*") if path.is_file())


def test_fetch_extracts_on_demand_quotes_with_provenance(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    before = datetime.now(UTC)
    result = fetch_instance_quotes(
        "us-east-1",
        ["p5.48xlarge", "trn2.48xlarge", "trn1.32xlarge"],
        settings=settings_for(price_server, tmp_path),
    )
    on_demand = {q.instance_type: q for q in result.quotes if q.purchase_option == "on-demand"}
    assert {k: q.usd_per_hour for k, q in on_demand.items()} == {
        "p5.48xlarge": P5_ON_DEMAND,
        "trn2.48xlarge": TRN2_ON_DEMAND,
        "trn1.32xlarge": TRN1_ON_DEMAND,
    }
    p5 = on_demand["p5.48xlarge"]
    assert p5.sku == "P5SHARED"
    assert p5.rate_code == "P5SHARED.JRTCKXETXF.6YS6EN2CT7"
    assert p5.effective_date == "2026-11-01T00:00:00Z"
    assert p5.publication_date == PUBLICATION_DATE
    assert p5.version == VERSION
    assert p5.offer_code == "AmazonEC2"
    assert p5.source_url == price_server.base_url + EC2_US_EAST_1
    assert p5.etag == price_server.etag_for(EC2_US_EAST_1)
    assert p5.last_modified == "Fri, 20 Nov 2026 18:02:11 GMT"
    assert before <= p5.retrieved_at <= datetime.now(UTC)
    assert p5.accelerator_count == 8
    assert p5.manual is False
    assert result.missing == ()
    assert result.error is None


def test_excluded_rows_never_leak_into_quotes(price_server: FakePriceList, tmp_path: Path) -> None:
    result = fetch_instance_quotes("us-east-1", None, settings=settings_for(price_server, tmp_path))
    on_demand = {
        q.instance_type: q.usd_per_hour for q in result.quotes if q.purchase_option == "on-demand"
    }
    assert on_demand == {
        "p5.48xlarge": P5_ON_DEMAND,
        "trn1.32xlarge": TRN1_ON_DEMAND,
        "trn2.48xlarge": TRN2_ON_DEMAND,
        "p4de.24xlarge": None,  # its only row is priced $0: no usable price, said so
    }
    prices = {q.usd_per_hour for q in result.quotes}
    # Dedicated 60, Windows 70, SQL 80, unused reservation 1.23, capacity block 31.46.
    assert prices.isdisjoint({60.0, 70.0, 80.0, 1.23, 31.46})


def test_reserved_quotes_expose_effective_rate_and_upfront_fee(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    result = fetch_instance_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    reserved = {q.purchase_option: q for q in result.quotes if q.purchase_option != "on-demand"}
    assert set(reserved) == {
        "reserved-1yr-standard-no-upfront",
        "reserved-1yr-standard-partial-upfront",
        "reserved-3yr-convertible-all-upfront",
    }
    no_upfront = reserved["reserved-1yr-standard-no-upfront"]
    assert (no_upfront.usd_per_hour, no_upfront.upfront_usd) == (40.0, 0.0)
    partial = reserved["reserved-1yr-standard-partial-upfront"]
    # $20/h + $175,200 spread over 8,760 hours = $40/h.
    assert partial.usd_per_hour == pytest.approx(40.0)
    assert partial.recurring_usd_per_hour == 20.0
    assert partial.upfront_usd == 175200.0
    assert partial.rate_code == "P5SHARED.HU7G6KETJZ.6YS6EN2CT7"
    all_upfront = reserved["reserved-3yr-convertible-all-upfront"]
    # $788,400 over 3 x 8,760 hours = $30/h, nothing recurring.
    assert all_upfront.usd_per_hour == pytest.approx(30.0)
    assert all_upfront.recurring_usd_per_hour == 0.0


def test_zero_priced_types_are_unknown_and_trn3_types_missing_never_zero(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    result = fetch_instance_quotes(
        "us-east-1",
        ["p4de.24xlarge", "trn3.48xlarge"],
        settings=settings_for(price_server, tmp_path),
    )
    # p4de's row is there, priced $0: not a price, and not "not offered" either.
    (p4de,) = result.quotes
    assert (p4de.instance_type, p4de.usd_per_hour) == ("p4de.24xlarge", None)
    assert "'0.0000000000'" in p4de.source_note and "is zero" in p4de.source_note
    assert [miss.instance_type for miss in result.misses] == ["trn3.48xlarge"]
    statuses = {lookup.instance_type: lookup for lookup in result.missing}
    assert set(statuses) == {"trn3.48xlarge"}
    assert statuses["trn3.48xlarge"].status is LookupStatus.NOT_LISTED_YET
    assert "add a manual quote" in statuses["trn3.48xlarge"].message


def test_region_prefix_and_other_region_file(price_server: FakePriceList, tmp_path: Path) -> None:
    result = fetch_instance_quotes(
        "us-west-2", ["trn2.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    assert [(q.region, q.usd_per_hour) for q in result.quotes] == [("us-west-2", TRN2_ON_DEMAND)]
    assert result.quotes[0].source_url.endswith("/us-west-2/index.csv")


def test_second_fetch_revalidates_with_etag_and_reuses_the_file(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    first = fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    cached = tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"
    inode = cached.stat().st_ino
    second = fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    requests = price_server.hits(EC2_US_EAST_1)
    assert len(requests) == 2
    assert "if-none-match" not in requests[0]
    assert requests[1]["if-none-match"] == price_server.etag_for(EC2_US_EAST_1)
    assert requests[1]["if-modified-since"] == "Fri, 20 Nov 2026 18:02:11 GMT"
    assert second.status.not_modified is True
    assert first.status.not_modified is False
    assert cached.stat().st_ino == inode  # not rewritten
    assert [q.usd_per_hour for q in second.quotes] == [q.usd_per_hour for q in first.quotes]
    assert second.quotes[0].retrieved_at >= first.quotes[0].retrieved_at


def test_changed_file_is_downloaded_again(price_server: FakePriceList, tmp_path: Path) -> None:
    settings = settings_for(price_server, tmp_path)
    fetch_instance_quotes("us-east-1", ["trn1.32xlarge"], settings=settings)
    rows = [r for r in ec2_rows() if r["SKU"] != "TRN1SHARED"]
    rows.append(
        {**next(r for r in ec2_rows() if r["SKU"] == "TRN1SHARED"), "PricePerUnit": "19.99"}
    )
    price_server.site[EC2_US_EAST_1] = offer_csv("AmazonEC2", EC2_HEADER, rows)
    price_server.etags[EC2_US_EAST_1] = '"changed"'
    result = fetch_instance_quotes("us-east-1", ["trn1.32xlarge"], settings=settings)
    assert [q.usd_per_hour for q in result.quotes] == [19.99]
    assert result.quotes[0].etag == '"changed"'


def _broken_header_csv() -> bytes:
    header = [name for name in EC2_HEADER if name not in {"MarketOption", "CapacityStatus"}]
    rows = [{k: v for k, v in row.items() if k in header} for row in ec2_rows()]
    return offer_csv("AmazonEC2", header, rows)


FAULTS = {
    "server error": (Fault(status=500, body=b"Internal Server Error"), PricingHTTPError, "500"),
    "not found": (Fault(status=404, body=b"<html>404</html>"), PricingHTTPError, "404"),
    "forbidden": (Fault(status=403, body=b"<Error>AccessDenied</Error>"), PricingHTTPError, "403"),
    "html page": (
        Fault(body=b"<!DOCTYPE html><html><body>Sign in</body></html>", content_type="text/html"),
        PricingFormatError,
        "web page",
    ),
    "html labelled csv": (
        Fault(body=b"\n<html><body>captive portal</body></html>", content_type="text/csv"),
        PricingFormatError,
        "HTML",
    ),
    "truncated": (Fault(truncate_to=3000), PricingFormatError, "cut off"),
    "missing columns": (Fault(body=_broken_header_csv()), PricingFormatError, "MarketOption"),
    "not a price list": (
        Fault(body=b"a,b,c\n" + b"1,2,3\n" * 10),
        PricingFormatError,
        "metadata row",
    ),
    "timeout": (Fault(stall=True), PricingNetworkError, "within 0.2 s"),
}
TIMEOUT_S = {"timeout": 0.2}
"""The client's timeout per fault: short where the server never answers, the default (long)
elsewhere, so that a slow machine never turns a good answer into a timeout."""


def timeout_for(fault_name: str) -> dict[str, float]:
    return {"timeout_s": TIMEOUT_S[fault_name]} if fault_name in TIMEOUT_S else {}


@pytest.mark.parametrize("fault_name", sorted(FAULTS))
def test_fault_without_cache_raises_a_typed_error_and_caches_nothing(
    price_server: FakePriceList, tmp_path: Path, fault_name: str
) -> None:
    fault, error_type, words = FAULTS[fault_name]
    price_server.faults[EC2_US_EAST_1] = fault
    with pytest.raises(error_type, match=words) as raised:
        fetch_instance_quotes(
            "us-east-1",
            ["p5.48xlarge"],
            settings=settings_for(price_server, tmp_path, **timeout_for(fault_name)),
        )
    assert isinstance(raised.value, PricingError)
    assert not any("AmazonEC2/us-east-1" in name for name in cache_files(tmp_path))
    assert not _scanning_threads()  # the rows being gathered were closed with the download


@pytest.mark.parametrize("fault_name", sorted(FAULTS))
def test_fault_with_cache_keeps_the_good_copy_and_reports_its_age(
    price_server: FakePriceList, tmp_path: Path, fault_name: str
) -> None:
    fetch_instance_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    cached = tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"
    good = cached.read_bytes()
    meta = cached.with_name("index.csv.meta.json")
    document = json.loads(meta.read_text())
    document["retrieved_at"] = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    document["etag"] = '"outdated"'  # force a full download attempt
    meta.write_text(json.dumps(document))

    fault, error_type, _words = FAULTS[fault_name]
    price_server.faults[EC2_US_EAST_1] = fault
    settings = settings_for(price_server, tmp_path, **timeout_for(fault_name))
    result = fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)

    assert cached.read_bytes() == good
    assert isinstance(result.error, error_type)
    assert result.status.from_cache_after_error is True
    assert 3 * 86400 - 60 < result.status.age_s() < 3 * 86400 + 60
    assert "3 days" in result.status.describe()
    assert [q.usd_per_hour for q in result.quotes if q.purchase_option == "on-demand"] == [
        P5_ON_DEMAND
    ]
    assert not [name for name in cache_files(tmp_path) if ".trntui-download-" in name]


def test_oversized_file_is_refused(price_server: FakePriceList, tmp_path: Path) -> None:
    settings = settings_for(price_server, tmp_path, max_offer_bytes=1000)
    with pytest.raises(PricingTooLargeError, match="limit"):
        fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    assert not (tmp_path / "AmazonEC2" / "us-east-1" / "index.csv").exists()


def test_region_missing_from_the_index(price_server: FakePriceList, tmp_path: Path) -> None:
    with pytest.raises(RegionNotInPriceListError, match="ap-south-9"):
        fetch_instance_quotes(
            "ap-south-9", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
        )


def test_region_index_that_is_not_json(price_server: FakePriceList, tmp_path: Path) -> None:
    index = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
    price_server.faults[index] = Fault(body=b"{not json", content_type="application/json")
    with pytest.raises(PricingFormatError, match="not valid JSON"):
        fetch_instance_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
        )


def _big_site(server: FakePriceList) -> int:
    filler = next(r for r in ec2_rows() if r["SKU"] == "P5DEDIC")
    rows = ec2_rows() + [{**filler, "SKU": f"FILL{i}"} for i in range(8000)]
    server.site[EC2_US_EAST_1] = offer_csv("AmazonEC2", EC2_HEADER, rows)
    return len(server.site[EC2_US_EAST_1])


def test_progress_reports_bytes_up_to_the_total(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    size = _big_site(price_server)
    assert size > 3 * 1024 * 1024
    seen: list[tuple[int, int | None]] = []
    fetch_instance_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path),
        progress=lambda done, total: seen.append((done, total)),
    )  # fmt: skip
    assert len(seen) >= 3
    assert all(total == size for _done, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1][0] == size


def test_the_downloads_disk_writes_are_started_as_it_goes(
    price_server: FakePriceList, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fsync before the rename waits for the last bytes only: the writes of the bytes
    before are started every ``_WRITEBACK_BYTES`` (here 256 KiB), in order, with no gap, and
    the cached file is the file served."""
    from trntui.pricing import client

    started: list[tuple[int, int]] = []
    advise = os.posix_fadvise

    def recorded(fd: int, offset: int, length: int, advice: int) -> None:
        started.append((offset, length))
        advise(fd, offset, length, advice)

    monkeypatch.setattr(client, "_WRITEBACK_BYTES", 256 * 1024)
    monkeypatch.setattr(os, "posix_fadvise", recorded)
    size = _big_site(price_server)
    result = fetch_instance_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    on_demand = [q.usd_per_hour for q in result.quotes if q.purchase_option == "on-demand"]
    assert on_demand == [P5_ON_DEMAND]
    assert len(started) >= size // (1024 * 1024)
    assert started[0][0] == 0
    assert all(
        offset + length == after for (offset, length), (after, _) in itertools.pairwise(started)
    )
    assert all(length >= 256 * 1024 for _offset, length in started)
    assert started[-1][0] + started[-1][1] <= size
    (cached,) = [path for path in tmp_path.rglob("*.csv") if "AmazonEC2" in str(path)]
    assert cached.read_bytes() == price_server.site[EC2_US_EAST_1]


def test_cancel_stops_cleanly_and_keeps_no_partial_file(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    cached = tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"
    good = cached.read_bytes()
    _big_site(price_server)
    price_server.etags[EC2_US_EAST_1] = '"bigger"'
    chunks: list[int] = []
    with pytest.raises(PricingCancelledError):
        fetch_instance_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings,
            progress=lambda done, total: chunks.append(done),
            cancel=lambda: len(chunks) >= 1,
        )  # fmt: skip
    assert len(chunks) == 1  # stopped after the first chunk
    assert cached.read_bytes() == good
    assert not [name for name in cache_files(tmp_path) if ".trntui-download-" in name]
    assert not _scanning_threads()


def _scanning_threads() -> list[str]:
    import threading

    return [t.name for t in threading.enumerate() if t.name == "trntui-offer-blocks"]


def test_a_download_is_filtered_as_it_arrives_and_a_cached_copy_is_read(
    price_server: FakePriceList, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trntui.pricing import extract

    reads: list[Path] = []
    read_file = extract.scan_offer_file
    monkeypatch.setattr(
        extract, "scan_offer_file", lambda path, plan: reads.append(path) or read_file(path, plan)
    )
    settings = settings_for(price_server, tmp_path)
    _big_site(price_server)  # several pieces and blocks
    first = fetch_instance_quotes("us-east-1", ["p5.48xlarge", "trn2.48xlarge"], settings=settings)
    assert reads == []  # the rows came with the download
    second = fetch_instance_quotes("us-east-1", ["p5.48xlarge", "trn2.48xlarge"], settings=settings)
    assert second.status.not_modified
    assert reads == [tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"]

    def fields(result: FetchResult) -> list[tuple[object, ...]]:
        return [(q.instance_type, q.purchase_option, q.usd_per_hour, q.sku) for q in result.quotes]

    assert fields(first) == fields(second)
    assert {q.instance_type for q in first.quotes} == {"p5.48xlarge", "trn2.48xlarge"}
    assert not _scanning_threads()


def test_the_gathered_rows_are_closed_when_the_file_fails_after_its_download(
    price_server: FakePriceList, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trntui.pricing.client as client

    def unreadable(path: Path, *_options: object) -> object:
        raise OSError(f"{path}: gone")  # e.g. another process removed the file meanwhile

    monkeypatch.setattr(client, "checked_offer", unreadable)
    with pytest.raises(StorageError, match="gone"):  # the download could not be kept
        fetch_instance_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
        )
    assert not _scanning_threads()


def test_side_rates_read_for_another_region_are_refused(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    oregon = fetch_instance_quotes("us-west-2", ["p5.48xlarge"], settings=settings, side_rates=True)
    with pytest.raises(ValueError, match="us-west-2 cannot serve us-east-1"):
        fetch_side_rates("us-east-1", settings=settings, already=oregon.side_rates)


def test_a_download_that_is_not_csv_names_its_line_and_never_reaches_the_cache(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    good = offer_csv("AmazonEC2", EC2_HEADER, ec2_rows())
    head, first_row, rest = good.split(b"\n", 7)[:6], good.split(b"\n")[6], good.split(b"\n", 7)[7]
    bad_row = first_row.replace(b'"', b"", 1)  # a quote left open: the row runs on
    price_server.site[EC2_US_EAST_1] = b"\n".join([*head, bad_row, rest])
    cached = tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"
    with pytest.raises(
        PricingFormatError,
        match=r"index\.csv is not a usable price list file: the downloaded file:7: .*cannot be "
        r"read as CSV .*; nothing was replaced$",
    ):
        fetch_instance_quotes(
            "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
        )
    assert not cached.exists()
    assert not _scanning_threads()


def test_offline_uses_the_cache_without_network(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    with pytest.raises(NoCachedPriceListError, match="fetch it once"):
        fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings, offline=True)
    fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    count = len(price_server.requests)
    result = fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings, offline=True)
    assert len(price_server.requests) == count
    assert result.quotes[0].usd_per_hour == P5_ON_DEMAND


def test_unreachable_server_is_a_network_error(tmp_path: Path) -> None:
    settings = PricingSettings(base_url="http://127.0.0.1:9", cache_dir=tmp_path, timeout_s=2)
    with pytest.raises(PricingNetworkError, match="could not reach"):
        fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)


@pytest.mark.parametrize(
    "url",
    [
        "http://pricing.example.com",
        "ftp://127.0.0.1/",
        "http://10.0.0.5:8000",
        "not a url",
        "http://",
    ],
)
def test_plain_http_is_refused_except_for_loopback(url: str, tmp_path: Path) -> None:
    with pytest.raises(InsecurePricingURLError):
        PricingSettings(base_url=url, cache_dir=tmp_path)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "http://localhost:8000/",
        "http://[::1]:8000",
        "https://mirror.example.com",
    ],
)
def test_https_and_loopback_http_are_accepted(url: str, tmp_path: Path) -> None:
    assert PricingSettings(base_url=url, cache_dir=tmp_path).base_url == url.rstrip("/")


def test_environment_sets_url_and_cache_dir(tmp_path: Path) -> None:
    environ = {PRICING_URL_ENV: "http://127.0.0.1:1234", CACHE_DIR_ENV: str(tmp_path / "c")}
    settings = PricingSettings.from_env(environ=environ)
    assert settings.base_url == "http://127.0.0.1:1234"
    assert settings.cache_path == tmp_path / "c"
    assert (
        PricingSettings.from_env("https://other.example", environ=environ).base_url
        == "https://other.example"
    )
    default = PricingSettings.from_env(environ={CACHE_DIR_ENV: str(tmp_path)})
    assert default.base_url == "https://pricing.us-east-1.amazonaws.com"


def test_side_rates_for_a_prefixed_region(price_server: FakePriceList, tmp_path: Path) -> None:
    result = fetch_side_rates("us-west-2", settings=settings_for(price_server, tmp_path))
    rates = {rate.service: rate for rate in result.rates}
    assert result.missing == {}
    s3 = rates[SideService.S3_STANDARD_STORAGE]
    assert [(t.start, t.end, t.usd_per_unit) for t in s3.tiers] == [
        (0.0, 51200.0, 0.023),
        (51200.0, 512000.0, 0.022),
        (512000.0, None, 0.021),
    ]
    assert s3.usage_type == "USW2-TimedStorage-ByteHrs"
    assert rates[SideService.EBS_GP3_STORAGE].first_tier_usd_per_unit == 0.08
    assert rates[SideService.CLOUDWATCH_LOGS_INGESTION].first_tier_usd_per_unit == 0.50
    assert rates[SideService.CLOUDWATCH_LOGS_STORAGE].first_tier_usd_per_unit == 0.03
    transfer = rates[SideService.INTER_AZ_TRANSFER]
    assert transfer.first_tier_usd_per_unit == 0.01
    assert transfer.usage_type == "USW2-DataTransfer-Regional-Bytes"
    assert transfer.offer_code == "AWSDataTransfer"
    assert transfer.publication_date == PUBLICATION_DATE


def test_the_ec2_files_side_rates_come_with_its_quotes_in_one_read(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    alone = fetch_side_rates("us-west-2", settings=settings_for(price_server, tmp_path / "a"))
    settings = settings_for(price_server, tmp_path / "b")
    quotes = fetch_instance_quotes("us-west-2", ["p5.48xlarge"], settings=settings, side_rates=True)
    assert quotes.side_rates is not None
    assert [rate.service for rate in quotes.side_rates.rates] == [SideService.EBS_GP3_STORAGE]
    ec2 = price_server.csv_path("AmazonEC2", "us-west-2")
    hits = len(price_server.hits(ec2))
    together = fetch_side_rates("us-west-2", settings=settings, already=quotes.side_rates)
    assert len(price_server.hits(ec2)) == hits  # the EC2 file was not asked for again

    def shown(result: SideRatesResult) -> list[tuple[object, ...]]:
        return [(r.service, r.usage_type, r.sku, r.tiers) for r in result.rates]

    assert shown(together) == shown(alone)
    assert together.missing == alone.missing == {}
    assert [s.offer_code for s in together.statuses] == [s.offer_code for s in alone.statuses]
    plain = fetch_instance_quotes(
        "us-west-2", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path / "c")
    )
    assert plain.side_rates is None

    def priced(result: FetchResult) -> list[tuple[object, ...]]:
        return [(q.instance_type, q.purchase_option, q.usd_per_hour, q.sku) for q in result.quotes]

    assert priced(quotes) == priced(plain) != []


def test_zero_priced_xaz_rows_never_zero_the_inter_az_charge(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    path = "/offers/v1.0/aws/AWSDataTransfer/20261120180211/us-east-1/index.csv"
    price_server.site[path] = offer_csv(
        "AWSDataTransfer", TRANSFER_HEADER, transfer_rows(with_regional=False)
    )
    result = fetch_side_rates("us-east-1", settings=settings_for(price_server, tmp_path))
    assert SideService.INTER_AZ_TRANSFER not in {rate.service for rate in result.rates}
    assert "inter-AZ" in result.missing[SideService.INTER_AZ_TRANSFER]
    assert SideService.S3_STANDARD_STORAGE in {rate.service for rate in result.rates}


def test_side_offer_failure_marks_only_its_services_missing(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    path = "/offers/v1.0/aws/AmazonCloudWatch/20261120180211/us-east-1/index.csv"
    price_server.faults[path] = Fault(status=503, body=b"busy")
    result = fetch_side_rates("us-east-1", settings=settings_for(price_server, tmp_path))
    assert set(result.missing) == {
        SideService.CLOUDWATCH_LOGS_INGESTION,
        SideService.CLOUDWATCH_LOGS_STORAGE,
    }
    assert "503" in result.missing[SideService.CLOUDWATCH_LOGS_INGESTION]
    assert len(result.rates) == 3


def test_old_leftover_download_is_removed_but_a_fresh_one_is_kept(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    folder = tmp_path / "AmazonEC2" / "us-east-1"
    folder.mkdir(parents=True)
    old = folder / ".trntui-download-old.csv"
    fresh = folder / ".trntui-download-running.csv"
    old.write_bytes(b"partial")
    fresh.write_bytes(b"partial")
    two_days_ago = datetime.now(UTC).timestamp() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    fetch_instance_quotes(
        "us-east-1", ["p5.48xlarge"], settings=settings_for(price_server, tmp_path)
    )
    assert not old.exists()
    assert fresh.exists()


@pytest.mark.parametrize(
    ("base", "version_url", "expected"),
    [
        (
            "https://pricing.us-east-1.amazonaws.com",
            "/offers/v1.0/aws/AmazonEC2/20261120180211/us-east-1/index.json",
            "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/20261120180211/us-east-1/index.csv",
        ),
        (
            "https://mirror.example.com/aws-prices",
            "/offers/v1.0/aws/AmazonS3/1/eu-west-1/index.json",
            "https://mirror.example.com/aws-prices/offers/v1.0/aws/AmazonS3/1/eu-west-1/index.csv",
        ),
    ],
)
def test_csv_url_is_the_version_url_ending_in_csv(
    base: str, version_url: str, expected: str
) -> None:
    assert offer_csv_url(base, version_url) == expected


def test_full_version_url_must_pass_the_same_safety_check() -> None:
    with pytest.raises(InsecurePricingURLError):
        offer_csv_url("https://pricing.example", "http://evil.example/offers/x/index.json")


def test_damaged_cache_is_downloaded_again_even_when_the_server_says_unchanged(
    price_server: FakePriceList, tmp_path: Path
) -> None:
    settings = settings_for(price_server, tmp_path)
    fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    cached = tmp_path / "AmazonEC2" / "us-east-1" / "index.csv"
    good = cached.read_bytes()
    cached.write_bytes(b"<html>overwritten</html>")
    result = fetch_instance_quotes("us-east-1", ["p5.48xlarge"], settings=settings)
    statuses = [h.get("if-none-match") for h in price_server.hits(EC2_US_EAST_1)]
    assert statuses[1] is not None and statuses[2] is None  # 304 first, then a full download
    assert cached.read_bytes() == good
    assert result.error is None
    assert result.quotes[0].usd_per_hour == P5_ON_DEMAND
