"""Issue 16, the price cases (1, 5, 6, 8 and the price part of 12), and issue 30's price
items (5 to 8 and the low-speed limit), replayed.

A misbehaving price server (a body cut short, a drip that never ends, a decompression bomb,
JSON nested beyond reason) is a real HTTP server on 127.0.0.1; hand-edited ``prices/quotes.toml``
files are written into a real project. Every case asserts what the issue asks: no Python
traceback from the CLI, nothing outside the project and the cache folder touched, the stored
quotes and the good cached copy intact after each failure, and a message saying which copy is
in use. Nothing here waits for wall-clock time: the deadline test uses a short injected
deadline against a server that never finishes.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import gzip
import io
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import HANG_GUARD_S
from tests.test_pricing_support import (
    EC2_HEADER,
    P5_ON_DEMAND,
    TRN1_ON_DEMAND,
    TRN2_ON_DEMAND,
    FakePriceList,
    _handler,
    _QuietServer,
    build_site,
    ec2_rows,
    offer_csv,
)
from trntui.cli import main
from trntui.core.errors import InputFileError, UserError
from trntui.core.manual_quote import manual_quote
from trntui.core.quotes import (
    FlagKind,
    InvalidQuoteError,
    PriceQuote,
    RateTier,
    implausible_price,
    quote_flags,
)
from trntui.pricing.cache import offer_csv_path, read_cached, region_index_path
from trntui.pricing.errors import (
    PricingDeadlineError,
    PricingFormatError,
    PricingTooLargeError,
)
from trntui.pricing.service import fetch_instance_quotes
from trntui.pricing.settings import CACHE_DIR_ENV, PricingSettings
from trntui.store.project import init_project
from trntui.store.quotes import load_quote_book, quotes_path

EC2_INDEX = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
TYPES = ["p5.48xlarge", "trn2.48xlarge", "trn1.32xlarge"]
GOOD = {
    "p5.48xlarge": P5_ON_DEMAND,
    "trn2.48xlarge": TRN2_ON_DEMAND,
    "trn1.32xlarge": TRN1_ON_DEMAND,
}
DRIP_GAP_S = 0.01


# --- the hostile server --------------------------------------------------------------------


def _hostile_handler(state: FakePriceList, hostile: dict[str, tuple]) -> type:
    """The fake price list's handler, with per-path misbehaviour that no ``Fault`` covers."""

    class Handler(_handler(state)):  # type: ignore[misc]
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            mode = hostile.get(path)
            if mode is None:
                super().do_GET()
                return
            state.requests.append((path, dict(self.headers.items())))
            kind, *extra = mode
            body = state.site.get(path, b"")
            self.close_connection = True
            with contextlib.suppress(ConnectionError):
                if kind == "close-delimited":  # no Content-Length: the end is the close
                    self.send_response(200)
                    self.send_header("Content-Type", "text/csv")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body[: extra[0]])
                elif kind == "short-length":  # a Content-Length shorter than the file
                    self.send_response(200)
                    self.send_header("Content-Type", "text/csv")
                    self.send_header("Content-Length", str(extra[0]))
                    self.end_headers()
                    self.wfile.write(body[: extra[0]])
                elif kind == "gzip":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/csv")
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(extra[0])))
                    self.end_headers()
                    self.wfile.write(extra[0])
                elif kind == "drip":  # a byte now and then, never the end
                    self.send_response(200)
                    self.send_header("Content-Type", "text/csv")
                    self.send_header("Content-Length", str(len(body) * 1000))
                    self.end_headers()
                    guard = time.monotonic() + HANG_GUARD_S
                    data = body * 1000
                    for offset in range(len(data)):
                        if state.stopping.wait(DRIP_GAP_S) or time.monotonic() > guard:
                            break
                        self.wfile.write(data[offset : offset + 1])
                        self.wfile.flush()

    return Handler


@contextlib.contextmanager
def hostile_price_list() -> Iterator[tuple[FakePriceList, dict[str, tuple]]]:
    state = FakePriceList(site=build_site())
    hostile: dict[str, tuple] = {}
    server = _QuietServer(("127.0.0.1", 0), _hostile_handler(state, hostile))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state, hostile
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[tuple[FakePriceList, dict[str, tuple]]]:
    with hostile_price_list() as both:
        yield both


# --- what must hold after every case -------------------------------------------------------


def _tree(folder: Path, skip: tuple[Path, ...] = ()) -> dict[str, tuple[int, int]]:
    return {
        str(path): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(path.is_relative_to(s) for s in skip)
    }


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's price cache. At the end: no file outside the cache and the project folder
    (``tmp_path/proj``) was created, changed or deleted, here or in the user's home the tests
    set up, and no partial download is left in the cache."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    home = Path(os.environ["XDG_CACHE_HOME"]).parent
    allowed = (folder, tmp_path / "proj")
    before = _tree(tmp_path, allowed), _tree(home)
    yield folder
    assert (_tree(tmp_path, allowed), _tree(home)) == before, "a file outside was touched"
    assert not list(folder.rglob(".trntui-download-*")), "a partial download was left"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def settings_for(state: FakePriceList, cache: Path, **changes: object) -> PricingSettings:
    return PricingSettings(base_url=state.base_url, cache_dir=cache, **changes)  # type: ignore[arg-type]


def on_demand(quotes: tuple[PriceQuote, ...]) -> dict[str, float | None]:
    return {q.instance_type: q.usd_per_hour for q in quotes if q.purchase_option == "on-demand"}


def warm(state: FakePriceList, cache: Path) -> bytes:
    """Fetch the good file once; return the cached copy's bytes."""
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert on_demand(result.quotes) == GOOD and result.error is None
    return offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes()


def ec2_file(**prices: str) -> bytes:
    """The us-east-1 EC2 file with some SKUs' PricePerUnit replaced."""
    rows = [
        {**row, "PricePerUnit": prices.get(row["SKU"], row["PricePerUnit"])} for row in ec2_rows()
    ]
    return offer_csv("AmazonEC2", EC2_HEADER, rows)


def ec2_csv(state: FakePriceList) -> str:
    return state.csv_path("AmazonEC2", "us-east-1")


def publish(state: FakePriceList, data: bytes) -> None:
    """A new version of the us-east-1 EC2 file (with a new ETag)."""
    state.site[ec2_csv(state)] = data
    state.etags.pop(ec2_csv(state), None)


# --- case 1: an unknown price is never stored; a bad quotes file is one line ----------------


def _ambiguous_site(state: FakePriceList) -> None:
    """A Local Zone row in the region's file that does not say it is one: a second, different
    on-demand price for trn2.48xlarge."""
    rows = ec2_rows()
    twin = dict(next(row for row in rows if row["SKU"] == "TRN2SHARED"))
    twin.update({"SKU": "TRN2LZ", "PricePerUnit": "51.00", "Location": "US East (Dallas)"})
    twin["RateCode"] = twin["RateCode"].replace("TRN2SHARED", "TRN2LZ")
    publish(state, offer_csv("AmazonEC2", EC2_HEADER, [*rows, twin]))


def test_case1_an_ambiguous_price_is_never_stored_and_the_project_keeps_working(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, _ = server
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--save", str(project)]
    for name in TYPES:
        fetch += ["--instance-type", name]
    assert cli(capsys, *fetch)[0] == 0
    stored = load_quote_book(project).quotes
    _ambiguous_site(state)
    code, out, err = cli(capsys, *fetch)
    assert code == 0
    assert "trn2.48xlarge on-demand: unknown" in out and "2 different on-demand rates" in out
    assert "not saved: trn2.48xlarge on-demand" in err
    book = load_quote_book(project)
    assert all(quote.usd_per_hour is not None for quote in book.quotes)
    trn2 = [q for q in book.quotes if q.instance_type == "trn2.48xlarge"]
    assert trn2 == [q for q in stored if q.instance_type == "trn2.48xlarge"], "old quote kept"
    assert on_demand(book.quotes) == GOOD
    # Every command that reads the quotes still works.
    assert cli(capsys, "price", "list", str(project))[0] == 0
    add = ["price", "add", str(project), "--instance-type", "trn3.48xlarge", "--region"]
    assert cli(capsys, *add, "us-east-1", "--usd-per-hour", "60", "--source", "offer")[0] == 0


def test_case1_a_quote_without_a_price_is_refused_by_the_store(new_project: Path) -> None:
    from trntui.store.quotes import add_quotes

    unknown = PriceQuote("p5.48xlarge", "us-east-1", "on-demand", None, datetime.now(UTC), False)
    with pytest.raises(UserError, match="no known price"):
        add_quotes(new_project, [unknown])
    assert not quotes_path(new_project).exists()


QUOTE_PART = """schema_version = 2

[[quote]]
instance_type = "p5.48xlarge"
region = "us-east-1"
purchase_option = "on-demand"
usd_per_hour = 55.04
accelerator_count = 8
manual = false
source_note = ""
retrieved_at = 2026-11-20T18:02:11Z
"""
RATE_PART = """
[[rate]]
service = "s3-standard-storage"
region = "us-east-1"
tiers = [{ start = 0.0, usd_per_unit = 0.023 }]
manual = false
retrieved_at = 2026-11-20T18:02:11Z
"""
QUOTE = QUOTE_PART + RATE_PART

HAND_EDITS = {
    # The file the bug of case 1 wrote: a quote with no usd_per_hour.
    "no price": ("quote", "usd_per_hour = 55.04\n", "", "usd_per_hour"),
    "price as text": ("quote", "usd_per_hour = 55.04", 'usd_per_hour = "55.04"', "usd_per_hour"),
    "price inf": ("quote", "usd_per_hour = 55.04", "usd_per_hour = inf", "usd_per_hour"),
    "price nan": ("quote", "usd_per_hour = 55.04", "usd_per_hour = nan", "usd_per_hour"),
    "price negative": ("quote", "usd_per_hour = 55.04", "usd_per_hour = -55.04", "usd_per_hour"),
    "upfront inf": ("quote", "manual = false", "manual = false\nupfront_usd = inf", "upfront"),
    "recurring negative": (
        "quote", "manual = false", "manual = false\nrecurring_usd_per_hour = -1.0", "recurring"
    ),
    "accelerators negative": ("quote", "accelerator_count = 8", "accelerator_count = -8",
                              "accelerator"),
    "no instance type": ("quote", 'instance_type = "p5.48xlarge"\n', "", "instance_type"),
    "region a number": ("quote", 'region = "us-east-1"', "region = 5", "region"),
    "negative side rate": ("rate", "usd_per_unit = 0.023", "usd_per_unit = -0.5", "tiers"),
    "side rate inf": ("rate", "usd_per_unit = 0.023", "usd_per_unit = inf", "tiers"),
    "tier start text": ("rate", "start = 0.0", 'start = "0"', "tiers"),
    "tiers not a list": ("rate", "tiers = [{ start = 0.0, usd_per_unit = 0.023 }]", 'tiers = "x"',
                         "tiers"),
    "rate region a number": ("rate", 'region = "us-east-1"', "region = 1", "region"),
    "rate manual text": ("rate", "manual = false", 'manual = "no"', "manual"),
}  # fmt: skip


@pytest.mark.parametrize("edit", HAND_EDITS.values(), ids=list(HAND_EDITS))
def test_case1_and_6_a_hand_edited_quotes_file_that_does_not_load_is_one_line(
    edit: tuple[str, str, str, str], new_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    part, old, new, key = edit
    path = quotes_path(new_project)
    path.parent.mkdir(exist_ok=True)
    if part == "quote":
        text = QUOTE_PART.replace(old, new, 1) + RATE_PART
    else:
        text = QUOTE_PART + RATE_PART.replace(old, new, 1)
    assert text != QUOTE
    path.write_text(text)
    with pytest.raises(InputFileError) as raised:
        load_quote_book(new_project)
    message = str(raised.value)
    assert message.startswith(f"{path}:") and key in message and "\n" not in message
    for command in (["price", "list"], ["price", "add"]):
        extra = ["--instance-type", "x.large", "--region", "us-east-1", "--usd-per-hour", "1",
                 "--source", "s"] if command[1] == "add" else []  # fmt: skip
        code, _out, err = cli(capsys, *command, str(new_project), *extra)
        assert code == 2 and err.strip().count("\n") == 0 and str(path) in err
    assert path.read_text() == text, "a bad file is reported, never rewritten"


_HOSTILE = st.sampled_from(
    [float("inf"), float("-inf"), float("nan"), -1.0, -0.0, 0.0, 1e308, 1e-10, 192.0, "55",
     True, [], {}, None]
)  # fmt: skip
_ANY_VALUE = st.one_of(
    _HOSTILE,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=6),
    st.booleans(),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=2),
    st.dictionaries(st.sampled_from(["start", "end", "usd_per_unit"]), st.floats(), max_size=3),
    st.datetimes(timezones=st.just(UTC)),
    st.none(),
)
_QUOTE_KEYS = [  # the price keys twice: drawn more often
    "usd_per_hour", "upfront_usd", "recurring_usd_per_hour", "accelerator_count",
    "instance_type", "region", "purchase_option", "usd_per_hour", "upfront_usd",
    "recurring_usd_per_hour", "accelerator_count", "manual", "source_note", "retrieved_at",
    "pinned", "block_days", "ultraserver_instances", "unknown",
]  # fmt: skip
_RATE_KEYS = ["service", "region", "tiers", "manual", "retrieved_at", "source_note"]


@settings(max_examples=50, deadline=None)
@given(
    quote_edits=st.dictionaries(st.sampled_from(_QUOTE_KEYS), _ANY_VALUE, max_size=3),
    tier=st.dictionaries(st.sampled_from(["usd_per_unit", "start", "end"]), _ANY_VALUE),
    rate_edits=st.dictionaries(st.sampled_from(_RATE_KEYS), _ANY_VALUE, max_size=2),
)
def test_case1_and_6_fuzzed_quotes_files_load_clean_or_fail_in_one_line(
    quote_edits: dict, tier: dict, rate_edits: dict, new_project: Path
) -> None:
    import tomllib

    document = tomllib.loads(QUOTE)
    for key, value in quote_edits.items():
        if value is None:
            document["quote"][0].pop(key, None)
        else:
            document["quote"][0][key] = value
    document["rate"][0]["tiers"] = [{**document["rate"][0]["tiers"][0], **tier}]
    for key, value in rate_edits.items():
        if value is None:
            document["rate"][0].pop(key, None)
        else:
            document["rate"][0][key] = value
    document = json.loads(json.dumps(document, default=str), parse_constant=float)  # no None
    path = quotes_path(new_project)
    path.parent.mkdir(exist_ok=True)
    try:
        path.write_text(tomli_w.dumps(_restore_times(document)))
    except (TypeError, ValueError):
        return  # not writable as TOML: nothing to read back
    try:
        book = load_quote_book(new_project)
    except InputFileError as error:
        assert str(error).startswith(str(path)) and "\n" not in str(error)
        return
    for quote in book.quotes:
        assert quote.usd_per_hour is not None and 0 < quote.usd_per_hour < float("inf")
        assert 0 <= quote.upfront_usd < float("inf")
    for rate in book.rates:
        for each in rate.tiers:
            assert 0 <= each.usd_per_unit < float("inf") and each.start >= 0


def _restore_times(document: dict) -> dict:
    """``json`` turned date-times into text; a ``retrieved_at`` that was one is one again."""
    for table in (*document.get("quote", []), *document.get("rate", [])):
        value = table.get("retrieved_at")
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                table["retrieved_at"] = datetime.fromisoformat(value)
    return document


# --- case 5: a cut-off file never replaces the good copy -----------------------------------


def _cut_mid_row(body: bytes) -> int:
    return body.index(b'"TRN1SHARED"') + 5


@pytest.mark.parametrize("kind", ["close-delimited", "short-length", "gzip-cut"])
def test_case5_a_cut_file_keeps_the_good_cached_copy_and_says_so(
    kind: str, server: tuple[FakePriceList, dict], cache: Path
) -> None:
    state, hostile = server
    good = warm(state, cache)
    body = state.site[ec2_csv(state)]
    if kind == "gzip-cut":  # a whole response (its Content-Length holds) of a cut gzip stream
        zipped = gzip.compress(body)
        hostile[ec2_csv(state)] = ("gzip", zipped[: len(zipped) * 2 // 3])
    else:
        hostile[ec2_csv(state)] = (kind, _cut_mid_row(body))
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert isinstance(result.error, PricingFormatError)
    assert on_demand(result.quotes) == GOOD, "no quote silently missing"
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    message = result.status.describe()
    assert "using the cached copy (published 2026-11-20" in message


def test_case5_the_cli_says_which_copy_is_used_and_without_one_fails_in_one_line(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, hostile = server
    hostile[ec2_csv(state)] = ("close-delimited", _cut_mid_row(state.site[ec2_csv(state)]))
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type", "p5.48xlarge"]
    code, _out, err = cli(capsys, *fetch)
    assert code == 2 and err.count("\n") == 1 and "did not say how long" in err
    assert not offer_csv_path(cache, "AmazonEC2", "us-east-1").exists()
    del hostile[ec2_csv(state)]
    assert cli(capsys, *fetch)[0] == 0
    publish(state, state.site[ec2_csv(state)] + b"\n")  # a new version, which is then cut
    hostile[ec2_csv(state)] = ("short-length", _cut_mid_row(state.site[ec2_csv(state)]))
    code, out, err = cli(capsys, *fetch)
    assert code == 0 and "$55.04" in out
    assert "cut off" in err and "using the cached copy" in err


# --- case 6: refuse what is not a price, ask before storing what looks like a mistake ------


def test_case6_non_finite_and_negative_amounts_are_refused_on_every_way_in() -> None:
    now = datetime.now(UTC)
    for bad in (float("inf"), float("nan"), -1.0):
        with pytest.raises(InvalidQuoteError):
            PriceQuote("p5.48xlarge", "us-east-1", "on-demand", bad, now, False)
        with pytest.raises(InvalidQuoteError):
            RateTier(0.0, None, bad)
        with pytest.raises(InvalidQuoteError):
            manual_quote(
                instance_type="p5.48xlarge", region="us-east-1",
                purchase_option="reserved-1yr-standard-all-upfront", usd_per_hour=None,
                upfront_usd=bad, retrieved_at=now, source_note="offer",
            )  # fmt: skip


def test_case6_implausible_prices_are_flagged_and_need_force(
    new_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add = ["price", "add", str(new_project), "--region", "us-east-1", "--source", "typed"]
    for price, kind in (("1e308", "trn2.48xlarge"), ("1e-10", "p5.48xlarge"),
                        ("0.0001", "m7i.large"), ("5000", "m7i.large")):  # fmt: skip
        code, _out, err = cli(capsys, *add, "--instance-type", kind, "--usd-per-hour", price)
        assert code == 2 and "--force" in err and "implausible" not in err.split(":")[0]
        assert load_quote_book(new_project).quotes == ()
    for price in ("inf", "nan", "-3"):
        with pytest.raises(SystemExit) as exited:
            main([*add, "--instance-type", "p5.48xlarge", "--usd-per-hour", price])
        assert exited.value.code == 2
    code, _out, _err = cli(
        capsys, *add, "--instance-type", "trn2.48xlarge", "--usd-per-hour", "1e308", "--force"
    )
    assert code == 0
    (quote,) = load_quote_book(new_project).quotes
    kinds = {
        f.kind
        for f in quote_flags(quote, target_region="us-east-1", today=datetime.now(UTC).date())
    }
    assert FlagKind.IMPLAUSIBLE in kinds
    assert "implausible price" in cli(capsys, "price", "list", str(new_project))[1]


def test_case6_the_plausibility_rule() -> None:
    now = datetime.now(UTC)

    def quote(kind: str, price: float) -> PriceQuote:
        return PriceQuote(kind, "us-east-1", "on-demand", price, now, False)

    assert implausible_price(quote("p5.48xlarge", P5_ON_DEMAND)) is None
    assert implausible_price(quote("trn1.2xlarge", 1.34)) is None
    assert implausible_price(quote("t4g.nano", 0.0042)) is None
    assert implausible_price(quote("p5.48xlarge", 8 * 201)) is not None  # > $200/GPU-hour
    assert implausible_price(quote("trn2.48xlarge", 16 * 0.049)) is not None  # < $0.05
    assert implausible_price(quote("m7i.large", 3201)) is not None  # > 16 x $200


def test_case6_a_fetched_implausible_price_is_saved_only_with_force(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, _ = server
    publish(state, ec2_file(P5SHARED="192.0E+3"))  # $24,000 per GPU-hour
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type",
             "p5.48xlarge", "--save", str(project)]  # fmt: skip
    code, _out, err = cli(capsys, *fetch)
    assert code == 2 and "--force" in err and "p5.48xlarge on-demand" in err
    assert load_quote_book(project).quotes == ()
    assert cli(capsys, *fetch, "--force")[0] == 0
    assert on_demand(load_quote_book(project).quotes) == {"p5.48xlarge": 192000.0}


# --- case 8: JSON nested beyond reason ------------------------------------------------------


def test_case8_a_deeply_nested_region_index_falls_back_to_the_cached_copy(
    server: tuple[FakePriceList, dict], cache: Path, capsys
) -> None:
    from tests.test_pricing_support import Fault

    state, _ = server
    good = warm(state, cache)
    index = region_index_path(cache, "AmazonEC2").read_bytes()
    nested = b'{"regions": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    state.faults[EC2_INDEX] = Fault(status=200, body=nested, content_type="application/json")
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert isinstance(result.error, PricingFormatError) and "nested" in str(result.error)
    assert on_demand(result.quotes) == GOOD
    assert region_index_path(cache, "AmazonEC2").read_bytes() == index
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    code, out, err = cli(
        capsys, "price", "fetch", "--pricing-url", state.base_url, "--instance-type",
        "p5.48xlarge",
    )  # fmt: skip
    assert code == 0 and "$55.04" in out and "nested" in err and "cached copy" in err
    # A nested cache sidecar is an unreadable sidecar, not a crash.
    sidecar = offer_csv_path(cache, "AmazonEC2", "us-east-1").with_name("index.csv.meta.json")
    sidecar.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    assert read_cached(offer_csv_path(cache, "AmazonEC2", "us-east-1")) is None


# --- case 12: one deadline, a cap on decompression, no partial files, bad rows skipped ------


def test_case12_a_server_that_drips_forever_meets_the_deadline(
    server: tuple[FakePriceList, dict], cache: Path, capsys
) -> None:
    state, hostile = server
    good = warm(state, cache)
    publish(state, state.site[ec2_csv(state)] + b"\n")
    hostile[ec2_csv(state)] = ("drip",)
    short = settings_for(state, cache, deadline_s=0.5)
    result = fetch_instance_quotes("us-east-1", TYPES, settings=short)
    assert isinstance(result.error, PricingDeadlineError), result.error
    assert on_demand(result.quotes) == GOOD
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    code, out, err = cli(
        capsys, "price", "fetch", "--pricing-url", state.base_url, "--instance-type",
        "p5.48xlarge", "--deadline", "0.5",
    )  # fmt: skip
    assert code == 0 and "deadline of 0.5 s" in err and "$55.04" in out


def test_case12_a_decompression_bomb_is_capped(
    server: tuple[FakePriceList, dict], cache: Path
) -> None:
    state, hostile = server
    good = warm(state, cache)
    bomb = gzip.compress(state.site[ec2_csv(state)] + b"0" * (64 * 1024**2), compresslevel=9)
    assert len(bomb) < 200_000
    hostile[ec2_csv(state)] = ("gzip", bomb)
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert isinstance(result.error, PricingTooLargeError) and "expands" in str(result.error)
    assert on_demand(result.quotes) == GOOD
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good


def test_case12_gzip_within_the_cap_still_works(
    server: tuple[FakePriceList, dict], cache: Path
) -> None:
    state, hostile = server
    hostile[ec2_csv(state)] = ("gzip", gzip.compress(state.site[ec2_csv(state)]))
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert result.error is None and on_demand(result.quotes) == GOOD
    (asked,) = [headers for path, headers in state.requests if path == ec2_csv(state)]
    assert asked["Accept-Encoding"] == "gzip"
    assert (
        offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == state.site[ec2_csv(state)]
    )


def test_case12_partial_downloads_of_killed_fetches_are_removed_at_the_next_fetch(
    server: tuple[FakePriceList, dict], cache: Path
) -> None:
    state, _ = server
    folder = offer_csv_path(cache, "AmazonEC2", "us-east-1").parent
    folder.mkdir(parents=True)
    killed = folder / ".trntui-download-killed.csv"
    running = folder / ".trntui-download-running.csv"
    index_folder = region_index_path(cache, "AmazonEC2").parent
    killed_index = index_folder / ".trntui-download-killed.json"
    killed_sidecar = folder / ".trntui-tmp-killed.json"
    for path in (killed, running, killed_index, killed_sidecar):
        path.write_bytes(b"partial")
        an_hour_ago = time.time() - 3600
        os.utime(path, (an_hour_ago, an_hour_ago))
    with open(running, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process's download, still running
        result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
        assert result.error is None
        assert not killed.exists() and not killed_index.exists()
        assert not killed_sidecar.exists()
        assert running.exists(), "a running download keeps its file"
    running.unlink()


def test_case12_a_row_whose_price_is_not_a_number_is_skipped_with_a_note(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, _ = server
    publish(state, ec2_file(TRN1SHARED="NaN", TRN2SHARED="inf"))
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    # Their rows exist, with no usable price: unknown (said so, issue 30 item 7), not missing.
    unknown = {"trn1.32xlarge": None, "trn2.48xlarge": None}
    assert on_demand(result.quotes) == {"p5.48xlarge": P5_ON_DEMAND, **unknown}
    assert result.misses == ()
    lines = [row for row in csv.reader(io.StringIO(state.site[ec2_csv(state)].decode()))]
    trn1_line = next(n for n, row in enumerate(lines, 1) if row[0] == "TRN1SHARED")
    assert any(f"index.csv:{trn1_line}:" in note and "'NaN'" in note for note in result.notes)
    assert any("'inf'" in note and "not a finite number" in note for note in result.notes)
    project = init_project(tmp_path / "proj")
    code, out, _err = cli(
        capsys, "price", "fetch", "--pricing-url", state.base_url, "--instance-type",
        "p5.48xlarge", "--instance-type", "trn1.32xlarge", "--save", str(project),
    )  # fmt: skip
    assert code == 0 and "skipped:" in out and "'NaN'" in out
    assert on_demand(load_quote_book(project).quotes) == {"p5.48xlarge": P5_ON_DEMAND}


async def test_case6_the_app_asks_before_storing_an_implausible_manual_quote(
    tmp_path: Path,
) -> None:
    from textual.widgets import Input

    from tests import SIZE, copy_sample
    from tests.ui_support import settle
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp
    from trntui.ui.screens.confirm import ConfirmScreen
    from trntui.ui.screens.item_form import ItemFormScreen
    from trntui.ui.screens.prices import PricesScreen

    root = copy_sample(tmp_path / "proj", "prices", "runs", "logs")
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            for answer in ("n", "y"):
                await pilot.press("a")
                await settle(pilot)
                form = app.screen
                assert isinstance(form, ItemFormScreen)
                form.query_one("#field-usd_per_hour", Input).value = "50000"
                form.query_one("#field-source_note", Input).value = "typed in a hurry"
                await pilot.press("ctrl+s")
                await settle(pilot)
                assert isinstance(app.screen, ConfirmScreen)
                assert "implausible" in app.screen.question
                await pilot.press(answer)
                await settle(pilot)
                if answer == "n":
                    # Back to the form as typed, to correct the price; esc leaves it.
                    assert isinstance(app.screen, ItemFormScreen)
                    await pilot.press("escape")
                    await settle(pilot)
                assert isinstance(app.screen, PricesScreen)
                stored = [q.usd_per_hour for q in load_quote_book(root).quotes]
                assert stored == ([] if answer == "n" else [50000.0])


_PRICE_TEXT = st.one_of(
    st.sampled_from(["NaN", "nan", "inf", "-inf", "Infinity", "-1", "-0.0", "0", "1e308",
                     "1e-10", "192", "", " ", "4l.28", "0x10", "1_000", "55.04", "1e400"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=8),
)  # fmt: skip


@settings(max_examples=50, deadline=None)
@given(trn1=_PRICE_TEXT, reserved=_PRICE_TEXT)
def test_case12_fuzzed_price_cells_are_skipped_or_priced_never_a_crash(
    trn1: str, reserved: str, tmp_path: Path
) -> None:
    """Whatever text a price cell holds, extraction prices the row with a finite positive
    number, or skips it with a note (and a type left with no usable price is an unknown
    price saying which line), and the other rows are priced as before."""
    from trntui.pricing.extract import OfferSource, instance_quotes

    rows = [
        {**row, "PricePerUnit": trn1} if row["SKU"] == "TRN1SHARED" else row for row in ec2_rows()
    ]
    hourly = next(
        i
        for i, row in enumerate(rows)
        if row["SKU"] == "P5SHARED" and row["TermType"] != "OnDemand"
    )
    rows[hourly] = {**rows[hourly], "PricePerUnit": reserved}
    path = tmp_path / "index.csv"
    path.write_bytes(offer_csv("AmazonEC2", EC2_HEADER, rows))
    source = OfferSource("AmazonEC2", "http://127.0.0.1/x.csv", "p", "v", datetime.now(UTC))
    notes: list[str] = []
    quotes = instance_quotes(path, source, "us-east-1", TYPES, notes=notes)
    for quote in quotes:
        if quote.usd_per_hour is None:
            assert "no usable price" in quote.source_note and "index.csv:" in quote.source_note
        else:
            assert 0 < quote.usd_per_hour < float("inf")
    assert on_demand(tuple(quotes))["p5.48xlarge"] == P5_ON_DEMAND
    assert on_demand(tuple(quotes))["trn2.48xlarge"] == TRN2_ON_DEMAND
    import math

    try:
        usable = math.isfinite(float(trn1)) and float(trn1) > 0 and trn1.strip()[0] != "-"
    except ValueError:
        usable = False
    assert usable or any("TRN1SHARED" in note for note in notes), notes


def test_case12_a_server_that_never_answers_meets_the_deadline_too(
    server: tuple[FakePriceList, dict], cache: Path
) -> None:
    from tests.test_pricing_support import Fault

    state, _ = server
    good = warm(state, cache)
    state.faults[ec2_csv(state)] = Fault(stall=True)
    short = settings_for(state, cache, deadline_s=0.5, timeout_s=HANG_GUARD_S)
    result = fetch_instance_quotes("us-east-1", TYPES, settings=short)
    assert isinstance(result.error, PricingDeadlineError), result.error
    assert on_demand(result.quotes) == GOOD
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good


async def test_case6_the_app_asks_before_storing_an_implausible_fetched_price(
    tmp_path: Path,
) -> None:
    import datetime as dt

    from tests import SIZE, copy_sample
    from tests.ui_support import settle
    from trntui.core.quotes import PriceQuote
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp
    from trntui.ui.screens.confirm import ConfirmScreen
    from trntui.ui.screens.prices import PricesScreen

    root = copy_sample(tmp_path / "proj", "prices", "runs", "logs")
    fetched = PriceQuote(
        "p5.48xlarge",
        "us-east-1",
        "on-demand",
        55_040.0,  # cents read as dollars
        dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        False,
        accelerator_count=8,
    )
    with Project.open(root) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("3")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, PricesScreen)
            for answer in ("n", "y"):
                screen._fetched(([fetched], [], ()))
                await settle(pilot)
                assert isinstance(app.screen, ConfirmScreen)
                assert "implausible" in app.screen.question
                await pilot.press(answer)
                await settle(pilot)
                stored = [q.usd_per_hour for q in load_quote_book(root).quotes]
                assert stored == ([] if answer == "n" else [55_040.0])


def test_two_quotes_of_the_same_key_are_refused_at_the_second(tmp_path: Path) -> None:
    """Issue 30, item 13: both were listed and the first silently used."""
    from tests import copy_sample

    project = copy_sample(tmp_path / "proj")
    path = quotes_path(project)
    text = path.read_text()
    start = text.index('[[quote]]\ninstance_type = "p5.48xlarge"')
    end = text.index("[[quote]]", start + 1)
    twin = text[start:end].replace("usd_per_hour = 55.04", "usd_per_hour = 98.32")
    path.write_text(text + "\n" + twin)
    line = (text + "\n").count("\n") + 1
    with pytest.raises(InputFileError, match="same type, region, option and origin") as raised:
        load_quote_book(project)
    assert raised.value.line == line


# --- issue 30, items 5 and 6: one validation before a download replaces the cached copy ----


def _damaged(data: bytes, kind: str) -> bytes:
    """``data`` with one fault in the row of P5DEDIC (a middle row; the last stays whole)."""
    start = data.index(b'"P5DEDIC"')
    end = data.index(b"\n", start)
    row = data[start:end]
    if kind == "bad-byte":  # one byte that is not UTF-8, inside a quoted value
        row = row.replace(b"Instance Hour", b"Instance \xffHour", 1)
    else:  # one quote left open
        row = row.replace(b'"Dedicated"', b'"Dedicated', 1)
    assert row != data[start:end]
    return data[:start] + row + data[end:]


def _line_of(data: bytes, sku: bytes) -> int:
    return data[: data.index(b'"' + sku + b'"')].count(b"\n") + 1


@pytest.mark.parametrize("kind", ["bad-byte", "open-quote"])
def test_i30_item5_a_download_that_does_not_parse_never_replaces_the_good_copy(
    kind: str, server: tuple[FakePriceList, dict], cache: Path, capsys
) -> None:
    state, _ = server
    good = warm(state, cache)
    damaged = _damaged(state.site[ec2_csv(state)] + b"\n", kind)
    publish(state, damaged)
    for _attempt in range(2):  # the next fetch meets the same file: still the good copy
        result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
        assert isinstance(result.error, PricingFormatError), result.error
        assert f":{_line_of(damaged, b'P5DEDIC')}:" in str(result.error)
        assert "nothing was replaced" in str(result.error)
        assert on_demand(result.quotes) == GOOD
        assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    offline = fetch_instance_quotes(
        "us-east-1", TYPES, settings=settings_for(state, cache), offline=True
    )
    assert on_demand(offline.quotes) == GOOD and offline.error is None
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type", "p5.48xlarge"]
    code, out, err = cli(capsys, *fetch)
    assert code == 0 and "$55.04" in out and "using the cached copy" in err


def _damage_cache(cache: Path, kind: str) -> Path:
    path = offer_csv_path(cache, "AmazonEC2", "us-east-1")
    path.write_bytes(_damaged(path.read_bytes(), kind))
    return path


@pytest.mark.parametrize("kind", ["bad-byte", "open-quote"])
def test_i30_item5_a_damaged_cached_copy_is_fetched_whole_after_a_304(
    kind: str, server: tuple[FakePriceList, dict], cache: Path
) -> None:
    state, _ = server
    good = warm(state, cache)
    _damage_cache(cache, kind)
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert result.error is None and on_demand(result.quotes) == GOOD
    asked = [headers.get("if-none-match") for headers in state.hits(ec2_csv(state))]
    assert asked[1] is not None and asked[2] is None  # a 304, then the whole file
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good


def test_i30_item5_offline_or_unreachable_with_a_damaged_copy_says_what_to_do(
    server: tuple[FakePriceList, dict], cache: Path, capsys
) -> None:
    from tests.test_pricing_support import Fault

    state, _ = server
    warm(state, cache)
    path = _damage_cache(cache, "bad-byte")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type", "p5.48xlarge"]
    code, _out, err = cli(capsys, *fetch, "--offline")
    assert code == 2 and err.count("\n") == 1
    assert str(path) in err and "damaged" in err and "without --offline" in err
    state.faults[ec2_csv(state)] = Fault(status=503)
    code, _out, err = cli(capsys, *fetch)
    assert code == 2 and err.count("\n") == 1
    assert "503" in err and str(path) in err and "damaged" in err
    del state.faults[ec2_csv(state)]
    code, out, _err = cli(capsys, *fetch)  # online again: a 304, then the whole file
    assert code == 0 and "$55.04" in out
    assert cli(capsys, *fetch, "--offline")[0] == 0


def _cut_at_record(data: bytes, sku: bytes) -> bytes:
    """``data`` up to the record of ``sku`` (cut exactly at a record boundary)."""
    return data[: data.index(b'"' + sku + b'"')]


@pytest.mark.parametrize("kind", ["header-only", "cut-at-a-record"])
def test_i30_item6_a_file_without_its_rows_is_refused_and_saves_no_miss(
    kind: str, server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, _ = server
    full = state.site[ec2_csv(state)]
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--save", str(project)]
    for name in TYPES:
        fetch += ["--instance-type", name]
    assert cli(capsys, *fetch)[0] == 0
    good = offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes()
    # The same version, its Content-Length right for what is sent: nothing in the framing
    # tells the cut, only the file itself and the copy it would replace.
    cut = _cut_at_record(full, b"P5SHARED" if kind == "header-only" else b"TRN1SHARED")
    assert cut.endswith(b"\n")
    publish(state, cut)
    code, out, err = cli(capsys, *fetch)
    assert code == 0 and "using the cached copy" in err
    assert ("no rows" if kind == "header-only" else "smaller than the cached copy") in err
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    book = load_quote_book(project)
    assert book.misses == () and on_demand(book.quotes) == GOOD
    assert "not offered" not in out


def test_i30_item6_a_header_only_file_is_no_evidence_even_without_a_cached_copy(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    state, _ = server
    publish(state, _cut_at_record(state.site[ec2_csv(state)], b"P5SHARED"))
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--save", str(project),
             "--instance-type", "p5.48xlarge"]  # fmt: skip
    code, _out, err = cli(capsys, *fetch)
    assert code == 2 and "no rows" in err and err.count("\n") == 1
    assert not offer_csv_path(cache, "AmazonEC2", "us-east-1").exists()
    assert load_quote_book(project).misses == ()


# --- issue 30, item 7: a row with an unusable price is said so, never "not offered" --------


@pytest.mark.parametrize("price", ["", "-0.0", "0.00", "NaN"])
def test_i30_item7_a_type_whose_price_is_unusable_is_said_so_never_not_offered(
    price: str, server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    from trntui.core.quotes import LookupStatus, find_quote

    state, _ = server
    data = ec2_file(TRN1SHARED=price)
    publish(state, data)
    line = _line_of(data, b"TRN1SHARED")
    result = fetch_instance_quotes("us-east-1", TYPES, settings=settings_for(state, cache))
    assert "trn1.32xlarge" not in {miss.instance_type for miss in result.misses}
    said = [note for note in result.notes if "TRN1SHARED" in note]
    assert said and f"index.csv:{line}:" in said[0] and repr(price) in said[0], result.notes
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--save", str(project)]
    for name in TYPES:
        fetch += ["--instance-type", name]
    code, out, err = cli(capsys, *fetch)
    assert code == 0
    trn1 = [text for text in (out + err).splitlines() if "trn1.32xlarge" in text]
    assert trn1 and not any("not offered" in text for text in trn1), trn1
    assert any(f"index.csv:{line}:" in text and "no usable price" in text for text in trn1), trn1
    book = load_quote_book(project)
    assert book.misses == ()
    lookup = find_quote(book.quotes, "trn1.32xlarge", "us-east-1", misses=book.misses)
    assert lookup.status is not LookupStatus.NOT_OFFERED
    assert on_demand(book.quotes) == {k: v for k, v in GOOD.items() if k != "trn1.32xlarge"}


# --- issue 30: a low-speed limit, like curl's --speed-limit/--speed-time -------------------


def test_i30_a_server_that_drips_is_given_up_at_the_low_speed_limit(
    server: tuple[FakePriceList, dict], cache: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trntui.pricing.errors import PricingTooSlowError
    from trntui.pricing.settings import SPEED_TIME_ENV

    state, hostile = server
    good = warm(state, cache)
    publish(state, state.site[ec2_csv(state)] + b"\n")
    hostile[ec2_csv(state)] = ("drip",)  # about 100 bytes a second, never the end
    # The deadline is far off: only the low-speed limit (1,000 bytes/s over 0.3 s) ends it.
    slow = settings_for(
        state, cache, deadline_s=HANG_GUARD_S, speed_limit_bps=1000, speed_time_s=0.3
    )
    result = fetch_instance_quotes("us-east-1", TYPES, settings=slow)
    assert isinstance(result.error, PricingTooSlowError), result.error
    assert "slower than 1,000 bytes/s for 0.3 s" in str(result.error)
    assert on_demand(result.quotes) == GOOD
    assert offer_csv_path(cache, "AmazonEC2", "us-east-1").read_bytes() == good
    monkeypatch.setenv(SPEED_TIME_ENV, "0.3")
    code, out, err = cli(
        capsys, "price", "fetch", "--pricing-url", state.base_url, "--instance-type",
        "p5.48xlarge", "--deadline", str(HANG_GUARD_S),
    )  # fmt: skip
    assert code == 0 and "$55.04" in out
    assert "bytes/s for 0.3 s" in err and SPEED_TIME_ENV in err and "using the cached copy" in err


def test_i30_the_low_speed_limit_is_set_like_the_deadline() -> None:
    from trntui.pricing.errors import PricingSettingsError
    from trntui.pricing.settings import (
        DEFAULT_SPEED_LIMIT_BPS,
        DEFAULT_SPEED_TIME_S,
        SPEED_LIMIT_ENV,
        SPEED_TIME_ENV,
    )

    # A byte a second is given up within a minute by default.
    assert DEFAULT_SPEED_LIMIT_BPS > 1 and DEFAULT_SPEED_TIME_S <= 60
    settings = PricingSettings.from_env(environ={SPEED_LIMIT_ENV: "5000", SPEED_TIME_ENV: "10"})
    assert (settings.speed_limit_bps, settings.speed_time_s) == (5000, 10.0)
    off = PricingSettings.from_env(environ={SPEED_LIMIT_ENV: "0"})
    assert off.speed_limit_bps == 0  # 0 turns the limit off, as in curl
    refused = [{SPEED_LIMIT_ENV: "fast"}, {SPEED_LIMIT_ENV: "-1"}, {SPEED_TIME_ENV: "0"},
               {SPEED_TIME_ENV: "inf"}, {SPEED_TIME_ENV: "nan"}]  # fmt: skip
    for environ in refused:
        with pytest.raises(PricingSettingsError, match="TRNTUI_PRICING_SPEED"):
            PricingSettings.from_env(environ=environ)


# --- issue 30, item 8: one plausibility band for every price; no overflow traceback --------


def test_i30_item8_the_plausibility_band_of_side_rates() -> None:
    from trntui.core.quotes import SideService, implausible_rate_usd

    # Each service's us-east-1 list price and the dearest region's (sa-east-1) pass ...
    listed = {
        SideService.S3_STANDARD_STORAGE: (0.023, 0.0405),
        SideService.EBS_GP3_STORAGE: (0.08, 0.152),
        SideService.CLOUDWATCH_LOGS_INGESTION: (0.50, 0.90),
        SideService.CLOUDWATCH_LOGS_STORAGE: (0.03, 0.0408),
        SideService.INTER_AZ_TRANSFER: (0.01, 0.01),
    }
    for service, prices in listed.items():
        for price in (*prices, 0.0):  # 0 says the service costs nothing
            assert implausible_rate_usd(service, price) is None, (service, price)
        # ... a price per TB for one per GB, cents for dollars, 1e15, 1e308 do not.
        for slip in (prices[0] * 1000, prices[0] * 100, prices[0] / 730, 1e15, 1e308):
            assert implausible_rate_usd(service, slip) is not None, (service, slip)


def test_i30_item8_a_huge_side_rate_needs_force_and_then_is_a_clear_problem(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rate = ["price", "rate", str(sample_dir), "--service", "s3-standard-storage", "--region",
            "us-east-1", "--source", "typed"]  # fmt: skip
    before = load_quote_book(sample_dir).rates
    for huge in ("1e308", "1e15", "23"):  # 23: per TB, typed as per GB
        code, _out, err = cli(capsys, *rate, "--usd-per-unit", huge)
        assert code == 2 and "--force" in err and err.count("\n") == 1
        assert load_quote_book(sample_dir).rates == before
    assert cli(capsys, *rate, "--usd-per-unit", "0.025")[0] == 0
    assert cli(capsys, *rate, "--usd-per-unit", "1e308", "--force")[0] == 0
    listed = cli(capsys, "price", "list", str(sample_dir))[1]
    assert "s3-standard-storage (manual): implausible rate: us-east-1: $1e+308" in listed
    # The estimate overflows: one line naming the input, never a traceback (cli checks).
    for command in (["estimate", str(sample_dir)], ["estimate", str(sample_dir), "--json"],
                    ["report", str(sample_dir), "--format", "md", "-o", "-"]):  # fmt: skip
        code, _out, err = cli(capsys, *command)
        assert code == 2 and err.count("\n") == 1, err
        assert "S3 Standard rate = 1e+308" in err and "storage_usd is inf" in err


def test_i30_item8_the_estimate_never_computes_on_an_overflow() -> None:
    from trntui.core.estimate import INPUT_SPECS, EstimateOverflowError, cost_frame, input_frame

    row = dict.fromkeys(INPUT_SPECS, 1.0) | {"failed_fraction": 0.0, "capacity_block": 0.0}
    assert cost_frame(input_frame([row])).row(0, named=True)["total_usd"] > 0
    tiny = row | {"steady_throughput": 1e-310, "work_amount": 1e10}  # finite, both
    with pytest.raises(EstimateOverflowError, match=r"training_h is inf .*Useful throughput"):
        cost_frame(input_frame([row, tiny]))
    huge = row | {"usd_per_hour": 1e308, "work_amount": 1e6}
    with pytest.raises(EstimateOverflowError, match=r"instance_usd is inf .*Instance price"):
        cost_frame(input_frame([huge]))


def test_i30_item8_a_fetched_huge_s3_tier_is_saved_only_with_force(
    server: tuple[FakePriceList, dict], cache: Path, tmp_path: Path, capsys
) -> None:
    from tests.test_pricing_support import S3_HEADER, s3_rows

    state, _ = server
    rows = [{**row, "PricePerUnit": "1e308"} if row["EndingRange"] == "51200" else row
            for row in s3_rows()]  # fmt: skip
    state.site[state.csv_path("AmazonS3", "us-east-1")] = offer_csv("AmazonS3", S3_HEADER, rows)
    project = init_project(tmp_path / "proj")
    fetch = ["price", "fetch", "--pricing-url", state.base_url, "--instance-type",
             "p5.48xlarge", "--side-rates", "--save", str(project)]  # fmt: skip
    code, _out, err = cli(capsys, *fetch)
    assert code == 2 and "--force" in err and "s3-standard-storage" in err
    assert load_quote_book(project).rates == () and load_quote_book(project).quotes == ()
    assert cli(capsys, *fetch, "--force")[0] == 0
    assert {r.service.value for r in load_quote_book(project).rates} >= {"s3-standard-storage"}


def test_i30_item8_an_override_of_a_price_passes_the_same_band(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trntui.store.scenarios import list_scenarios

    save = ["scenario", "save", str(sample_dir), "what-if", "--why", "a typo"]
    for override in ("Trainium3 trial:usd_per_hour=1e15",
                     "Trainium3 trial:s3_usd_per_gb_month=23",
                     "GPU baseline (1 x p5.48xlarge):usd_per_hour=0.3"):  # fmt: skip
        code, _out, err = cli(capsys, *save, "--set", override)
        assert code == 2 and "--force" in err and "implausible" not in err.split(":")[0]
        assert "what-if" not in {info.name for info in list_scenarios(sample_dir)}
    plausible = "GPU baseline (1 x p5.48xlarge):usd_per_hour=60"
    assert cli(capsys, *save, "--set", plausible)[0] == 0
    assert cli(capsys, *save, "--replace", "--force", "--set",
               "Trainium3 trial:usd_per_hour=1e15")[0] == 0  # fmt: skip


async def test_i30_item8_the_app_shows_an_overflow_and_asks_before_an_implausible_override(
    sample_dir: Path,
) -> None:
    from tests import SIZE
    from tests.ui_support import settle
    from trntui.core.estimate import Override
    from trntui.store.project import Project
    from trntui.ui.app import TrnTuiApp
    from trntui.ui.screens.confirm import ConfirmScreen
    from trntui.ui.screens.scenarios import ScenariosScreen

    with Project.open(sample_dir) as project:
        app = TrnTuiApp(project)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.estimate_problem == "" and app.analysis is not None
            await pilot.press("4")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ScenariosScreen)
            huge = Override("usd_per_hour", 1e308, "Trainium3 trial", who="me", why="typo")
            for answer in ("n", "y"):
                screen._override_kept(huge)
                await settle(pilot)
                assert isinstance(app.screen, ConfirmScreen)
                assert "implausible" in app.screen.question
                await pilot.press(answer)
                await settle(pilot)
                assert app.session.overrides == (() if answer == "n" else (huge,))
            # Confirmed, then 30 times the work: $1e308 an hour for more than 2 hours passes
            # the largest float (1.8e308): the problem is said, the app goes on.
            more = Override("work_amount", 1e6, None, who="me", why="a longer run")
            assert app.session.set_overrides((huge, more), label="more work") is None
            await settle(pilot)
            assert "inf" in app.estimate_problem and "Instance price" in app.estimate_problem
