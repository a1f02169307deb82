"""Reading offer files: metadata checks, record-block splitting, row selection and side rates."""

from __future__ import annotations

import csv
import io
import itertools
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_pricing_support import (
    CLOUDWATCH_HEADER,
    EC2_HEADER,
    PUBLICATION_DATE,
    S3_HEADER,
    VERSION,
    cloudwatch_rows,
    ec2_rows,
    offer_csv,
    s3_rows,
)
from trntui.core.quotes import SideService
from trntui.pricing.errors import PricingFormatError
from trntui.pricing.extract import (
    OfferRows,
    OfferSource,
    RecordBlocks,
    RowQueries,
    RowQuery,
    instance_quotes,
    read_preamble,
    scan_offer_file,
    side_rates,
)
from trntui.pricing.extract.records import _WAITING_PIECES, count_lines


def write(tmp_path: Path, data: bytes, name: str = "index.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def source(offer: str = "AmazonEC2") -> OfferSource:
    return OfferSource(
        offer, "http://127.0.0.1/x.csv", PUBLICATION_DATE, VERSION, datetime.now(UTC)
    )


def test_preamble_gives_publication_date_version_and_columns(tmp_path: Path) -> None:
    path = write(tmp_path, offer_csv("AmazonEC2", EC2_HEADER, ec2_rows()))
    preamble = read_preamble(path, expected_offer="AmazonEC2")
    assert preamble.publication_date == PUBLICATION_DATE
    assert preamble.version == VERSION
    assert preamble.format_version == "v1.0"
    assert preamble.columns == tuple(EC2_HEADER)


def test_wrong_offer_code_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, offer_csv("AmazonS3", S3_HEADER, s3_rows()))
    with pytest.raises(PricingFormatError, match="expected 'AmazonEC2'"):
        read_preamble(path, expected_offer="AmazonEC2")


def test_header_without_a_filter_column_names_it(tmp_path: Path) -> None:
    header = [name for name in EC2_HEADER if name != "Tenancy"]
    rows = [{k: v for k, v in row.items() if k in header} for row in ec2_rows()]
    path = write(tmp_path, offer_csv("AmazonEC2", header, rows))
    with pytest.raises(PricingFormatError, match="'Tenancy'") as raised:
        read_preamble(path)
    assert ":6:" in str(raised.value)


def test_metadata_rows_out_of_order(tmp_path: Path) -> None:
    data = offer_csv("AmazonEC2", EC2_HEADER, ec2_rows()).replace(b'"Version"', b'"Versions"')
    with pytest.raises(PricingFormatError, match="'Version'"):
        read_preamble(write(tmp_path, data))


def test_html_page_is_recognised(tmp_path: Path) -> None:
    path = write(tmp_path, b"  <!doctype html><html><head><title>Login</title></head></html>")
    with pytest.raises(PricingFormatError, match="HTML"):
        read_preamble(path)


def test_ambiguous_on_demand_rows_leave_the_price_unknown(tmp_path: Path) -> None:
    rows = ec2_rows()
    twin = dict(next(row for row in rows if row["SKU"] == "TRN2SHARED"))
    twin.update({"SKU": "TRN2TWIN", "PricePerUnit": "50.00"})
    path = write(tmp_path, offer_csv("AmazonEC2", EC2_HEADER, [*rows, twin]))
    (quote,) = instance_quotes(path, source(), "us-east-1", ["trn2.48xlarge"])
    assert quote.usd_per_hour is None
    assert "2 different on-demand rates" in quote.source_note


def _cut_file(cut_after: bytes, extra: int) -> bytes:
    rows = [row for row in ec2_rows() if row["SKU"] != "TRN1SHARED"]
    whole = offer_csv("AmazonEC2", EC2_HEADER, rows)
    trn1 = next(row for row in ec2_rows() if row["SKU"] == "TRN1SHARED")
    last = offer_csv("AmazonEC2", EC2_HEADER, [trn1]).splitlines()[-1]
    return whole + last[: last.index(cut_after) + extra]


def test_row_cut_off_between_fields_is_not_priced(tmp_path: Path) -> None:
    data = _cut_file(b'"Shared"', len(b'"Shared"'))  # ends after the Tenancy field
    quotes = instance_quotes(write(tmp_path, data), source(), "us-east-1")
    assert "trn1.32xlarge" not in {quote.instance_type for quote in quotes}
    assert "p5.48xlarge" in {quote.instance_type for quote in quotes}


def test_row_cut_off_inside_a_field_is_a_format_error(tmp_path: Path) -> None:
    data = _cut_file(b'"Shared"', 3)  # ends inside the quoted Tenancy field
    last_line = data.count(b"\n") + 1
    path = write(tmp_path, data)
    with pytest.raises(PricingFormatError, match=f"^{path}:{last_line}: .*cannot be read as CSV"):
        instance_quotes(path, source(), "us-east-1")


def test_side_rates_in_us_east_1_have_no_prefix(tmp_path: Path) -> None:
    s3 = write(tmp_path, offer_csv("AmazonS3", S3_HEADER, s3_rows()), "s3.csv")
    cloudwatch = write(
        tmp_path, offer_csv("AmazonCloudWatch", CLOUDWATCH_HEADER, cloudwatch_rows()), "cw.csv"
    )
    s3_found = side_rates(s3, source("AmazonS3"), "us-east-1")
    assert s3_found[SideService.S3_STANDARD_STORAGE].usage_type == "TimedStorage-ByteHrs"
    assert len(s3_found[SideService.S3_STANDARD_STORAGE].tiers) == 3
    cw_found = side_rates(cloudwatch, source("AmazonCloudWatch"), "us-east-1")
    assert cw_found[SideService.CLOUDWATCH_LOGS_INGESTION].first_tier_usd_per_unit == 0.5
    # Vended logs (0.25) must not be taken for standard ingestion.
    assert cw_found[SideService.CLOUDWATCH_LOGS_STORAGE].first_tier_usd_per_unit == 0.03


def _csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for key, value in (
        ("FormatVersion", "v1.0"),
        ("Disclaimer", 'prices, "quoted", and more'),
        ("Publication Date", PUBLICATION_DATE),
        ("Version", VERSION),
        ("OfferCode", "AmazonEC2"),
    ):
        writer.writerow([key, value])
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


cell = st.text(alphabet=st.sampled_from('ab,"\n x'), max_size=12)


@settings(max_examples=60)
@given(
    rows=st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=40),
    block_bytes=st.integers(min_value=1, max_value=200),
)
def test_blocks_never_split_a_quoted_field(
    tmp_path_factory: pytest.TempPathFactory, rows: list[list[str]], block_bytes: int
) -> None:
    path = tmp_path_factory.mktemp("blocks") / "index.csv"
    path.write_bytes(_csv_bytes(["SKU", "Note", "Unit"], rows))
    query = RowQuery(pl.lit(True), ("SKU", "Note", "Unit"))
    frame = scan_offer_file(path, lambda _columns: query, block_bytes=block_bytes)
    got = [[value or "" for value in row] for row in frame.iter_rows()]
    assert got == rows


def test_reading_thread_is_gone_after_an_error(tmp_path: Path) -> None:
    import threading

    bad_row = b'"a","b"' + b',"x"' * 120 + b"\n"
    data = offer_csv("AmazonEC2", EC2_HEADER, ec2_rows()) + bad_row * 2000
    path = write(tmp_path, data)
    with pytest.raises(PricingFormatError):
        scan_offer_file(path, lambda _columns: RowQuery(pl.lit(True), ("SKU",)), block_bytes=4096)
    assert not [t for t in threading.enumerate() if t.name.startswith("trntui-offer-")]


csv_rows = st.lists(st.lists(cell, min_size=3, max_size=3), min_size=1, max_size=40)
"""A file's rows: at least one (a file of a header alone is refused, see below)."""
cut_points = st.lists(st.integers(min_value=0, max_value=10_000), max_size=30)


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    bounds = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[start:end] for start, end in itertools.pairwise(bounds)]


@settings(max_examples=80)
@given(rows=csv_rows, cuts=cut_points, block_bytes=st.integers(min_value=1, max_value=300))
def test_rows_come_out_the_same_however_the_bytes_arrive(
    rows: list[list[str]], cuts: list[int], block_bytes: int
) -> None:
    """A download hands ``OfferRows`` pieces cut anywhere (inside the header, a quoted field, a
    newline in a value); the rows are those of the file read whole, and so are their lines
    where no value holds a line break (row numbers count records, a price list's one a line)."""
    data = _csv_bytes(["SKU", "Note", "Unit"], rows)
    query = RowQuery(pl.lit(True), ("SKU", "Note", "Unit", "line"), "line")
    stream = OfferRows("download", lambda _columns: query, block_bytes=block_bytes)
    try:
        for piece in _pieces(data, cuts):
            stream.add(piece)
        frame = stream.finish()
    finally:
        stream.close()
    got = [[value or "" for value in row[:3]] for row in frame.iter_rows()]
    assert got == rows
    # Each record's line in the file, after 5 metadata rows and the header; exact when no value
    # holds a line break (a price list's never do), which the row numbers count as one line.
    if not any("\n" in value for row in rows for value in row):
        assert frame["line"].to_list() == list(range(7, 7 + len(rows)))
    elif rows:
        assert frame["line"][0] == 7


@settings(max_examples=80)
@given(
    rows=csv_rows,
    cuts=cut_points,
    block_bytes=st.integers(min_value=1, max_value=300),
    counted=st.booleans(),
)
def test_blocks_are_whole_records_and_lose_nothing(
    rows: list[list[str]], cuts: list[int], block_bytes: int, counted: bool
) -> None:
    """Whether ``add`` counts a piece's quotes and line breaks or is given them (as
    ``OfferRows`` gives them when its caller counted), each block is whole records and
    ``lines`` is its line breaks."""
    data = _csv_bytes(["SKU", "Note", "Unit"], rows)
    body = data[data.index(b'"SKU"') :].split(b"\n", 1)[1]
    blocks = RecordBlocks(block_bytes)
    out: list[bytes] = []
    lines: list[int] = []
    for piece in _pieces(body, cuts):
        counts = (piece.count(b'"'), piece.count(b"\n")) if counted else (None, None)
        if (block := blocks.add(piece, *counts)) is not None:
            out.append(block)
            lines.append(blocks.lines)
    out.append(blocks.rest())
    lines.append(blocks.lines)
    assert b"".join(out) == body
    assert lines == [block.count(b"\n") for block in out]
    for block in out[:-1]:
        assert len(list(csv.reader(io.StringIO(block.decode())))) >= 1
        assert block.endswith(b"\n") and block.count(b'"') % 2 == 0


@settings(max_examples=200)
@given(
    data=st.binary(max_size=3000)
    | st.lists(st.sampled_from([b"\n", b"x", b"x" * 300]), max_size=200).map(b"".join)
)
def test_line_breaks_are_counted_exactly_sparse_or_dense(data: bytes) -> None:
    assert count_lines(data) == data.count(b"\n")


def test_line_breaks_are_counted_exactly_past_the_switch_to_dense() -> None:
    for size in (255, 256, 257, 4096, 1 << 20):
        for every in (1, 2, 255, 256, 257, 1000):
            data = b"".join(b"\n" if index % every == 0 else b"x" for index in range(size))
            assert count_lines(data) == data.count(b"\n"), (size, every)


@pytest.mark.parametrize("break_in_a_value", [False, True])
def test_lines_stay_exact_when_the_caller_counts_for_a_scan_that_is_behind(
    break_in_a_value: bool,
) -> None:
    """Pieces that come while the thread is behind are counted by the caller (``add``); the
    rows and their lines are the same as when the thread counts every piece."""
    import threading

    rows = [[f"r{index}", "x", "u"] for index in range(400)]
    if break_in_a_value:
        rows[30][1] = "two\nlines"
    data = _csv_bytes(["SKU", "Note", "Unit"], rows)
    query = RowQuery(pl.lit(True), ("SKU", "Note", "line"), "line")

    def read(plan: Callable[[object], RowQuery]) -> tuple[pl.DataFrame, list[bool]]:
        stream = OfferRows("download", plan, block_bytes=200)
        counted: list[bool] = []
        put = stream._put

        def watched_put(piece: tuple[bytes, int | None, int | None], **options: bool) -> None:
            counted.append(piece[1] is not None)
            put(piece, **options)

        stream._put = watched_put  # type: ignore[method-assign]
        try:
            for start in range(0, len(data), 37):
                stream.add(data[start : start + 37])
            return stream.finish(), counted
        finally:
            stream.close()

    release = threading.Event()

    def slow_plan(_columns: object) -> RowQuery:
        release.wait(30)  # e.g. Polars loading: the pieces wait, then more come
        return query

    threading.Timer(0.5, release.set).start()
    try:
        behind, counted = read(slow_plan)
    finally:
        release.set()
    assert sum(counted) > 10  # the caller counted the pieces that came while the queue was full
    alone, counted = read(lambda _columns: query)
    assert behind.equals(alone)
    assert behind["SKU"].to_list() == [row[0] for row in rows]
    if not break_in_a_value:
        assert behind["line"].to_list() == list(range(7, 407))


def test_an_earlier_blocks_fault_is_raised_before_a_later_unclosed_quote() -> None:
    """A block is parsed while the next gathers: its fault still comes first, even when the
    record after it never ends (an unclosed quote found before the parse is waited for)."""
    rows = [["a", "fine", "x"]] * 50 + [["b", "bad", "x"], ["c", 'open "quote', "x"]]
    rows += [["d", "more", "x"]] * 8000
    data = _csv_bytes(["SKU", "Note", "Unit"], rows)
    data = data.replace(b'"bad"', b'"\xffbad"')  # not UTF-8
    data = data.replace(b'"open ""quote"', b'"open "quote"')
    with pytest.raises(PricingFormatError, match=r"^cache/index.csv:57: .*cannot be read as CSV"):
        _gather(data, 512, block_bytes=4096)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'"FormatVersion","v1.0"\n"Disclaimer","x"\n', "ends before the header row"),
        (b'"FormatVersion","v1.0"\n"Disclaimer","unclosed\n' * 3, "unterminated quote near"),
    ],
)
def test_a_file_without_a_header_is_refused_by_finish(data: bytes, problem: str) -> None:
    query = RowQuery(pl.lit(True), ("SKU",))
    stream = OfferRows("cache/index.csv", lambda _columns: query, block_bytes=64)
    try:
        stream.add(data)  # never raises: the download it is fed by goes on
        with pytest.raises(PricingFormatError, match=f"^cache/index.csv: {problem}"):
            stream.finish()
    finally:
        stream.close()


def test_a_files_side_services_are_read_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trntui.pricing.extract import scan as scan_module
    from trntui.pricing.extract import side_services as module

    reads: list[int] = []
    read_file = module.scan_offer_file
    monkeypatch.setattr(
        module,
        "scan_offer_file",
        lambda path, plan: reads.append(len(plan(()).queries)) or read_file(path, plan),
    )
    cloudwatch = write(
        tmp_path, offer_csv("AmazonCloudWatch", CLOUDWATCH_HEADER, cloudwatch_rows()), "cw.csv"
    )
    found = side_rates(cloudwatch, source("AmazonCloudWatch"), "us-east-1")
    assert reads == [2]  # one read, one parse for the two services' queries
    parses: list[int] = []
    read_block = scan_module._read_block
    monkeypatch.setattr(
        scan_module, "_read_block", lambda *args: parses.append(1) or read_block(*args)
    )
    side_rates(cloudwatch, source("AmazonCloudWatch"), "us-east-1")
    assert parses == [1]  # the file is one block: parsed once for both
    assert set(found) == {
        SideService.CLOUDWATCH_LOGS_INGESTION,
        SideService.CLOUDWATCH_LOGS_STORAGE,
    }


def test_queries_answered_from_one_parse_match_each_alone(tmp_path: Path) -> None:
    path = write(tmp_path, offer_csv("AmazonEC2", EC2_HEADER, ec2_rows()))
    shared = (
        RowQuery(pl.col("Instance Type") == "p5.48xlarge", ("SKU", "PricePerUnit", "line"), "line"),
        RowQuery(pl.col("TermType") == "Reserved", ("Instance Type", "SKU")),
        RowQuery(pl.col("SKU") == "no such SKU", ("SKU",)),
    )
    together = scan_offer_file(path, lambda _columns: RowQueries(shared), block_bytes=700)
    alone = [scan_offer_file(path, lambda _columns, q=query: q) for query in shared]
    assert [frame.height for frame in alone][:2] != [0, 0]
    for one, other in zip(together, alone, strict=True):
        assert one.equals(other), (one, other)


def _gather(data: bytes, piece_bytes: int, **options: object) -> object:
    query = RowQuery(pl.lit(True), ("SKU", "Note", "line"), "line")
    stream = OfferRows("cache/index.csv", lambda _columns: query, **options)  # type: ignore[arg-type]
    try:
        for start in range(0, len(data), piece_bytes):
            stream.add(data[start : start + piece_bytes])
        return stream.finish()
    finally:
        stream.close()


def test_an_unclosed_quote_is_refused_at_its_line_without_holding_the_file() -> None:
    rows = [["a", "fine", "x"], ["b", 'open "quote', "x"]] + [["c", "more", "x"]] * 40_000
    data = _csv_bytes(["SKU", "Note", "Unit"], rows).replace(b'"open ""quote"', b'"open "quote"')
    # The record on line 8 never ends: refused once it has run on for 4 blocks, not gathered
    # to the end of the file (each piece is searched for a record end once).
    with pytest.raises(PricingFormatError, match=r"^cache/index.csv:8: a record runs on"):
        _gather(data, 4096, block_bytes=64 * 1024)


@pytest.mark.parametrize("end", [b"", b"\n", b"\n\n  \n"])
def test_a_header_that_ends_the_file_is_no_price_list(end: bytes) -> None:
    """A header and nothing after it (cut there, or served so): no row of it is evidence of
    anything, so it is refused rather than read as a list where nothing is offered."""
    data = _csv_bytes(["SKU", "Note", "Unit"], []).rstrip(b"\n") + end
    with pytest.raises(PricingFormatError, match=r"^cache/index\.csv: a header and no rows"):
        _gather(data, 7, block_bytes=64)
    one_row = _csv_bytes(["SKU", "Note", "Unit"], [["a", "b", "c"]]).rstrip(b"\n")
    assert _gather(one_row, 7, block_bytes=64).height == 1  # type: ignore[attr-defined]


def test_a_caller_waiting_on_a_slow_scan_is_checked_and_stopped() -> None:
    import threading

    release = threading.Event()
    checks: list[int] = []

    def slow_plan(_columns: object) -> RowQuery:
        release.wait(30)  # the query (e.g. Polars loading) takes its time
        return RowQuery(pl.lit(True), ("SKU",))

    def check() -> None:
        checks.append(1)
        raise PricingFormatError("cancelled by the check")

    stream = OfferRows("download", slow_plan, block_bytes=64, check=check)
    data = _csv_bytes(["SKU", "Note", "Unit"], [["a", "b", "c"]] * 200)
    try:
        with pytest.raises(PricingFormatError, match="cancelled by the check"):
            for start in range(0, len(data), 16):  # more pieces than may wait
                stream.add(data[start : start + 16])
        assert checks == [1]
    finally:
        release.set()
        stream.close()
    with pytest.raises(RuntimeError, match="closed before they were finished"):
        stream.finish()


def test_finishing_waits_for_the_scan_without_the_downloads_checks() -> None:
    """The body is whole once ``finish`` is called: a deadline or cancel check must not throw
    away rows of a file already in the cache, however far behind the scan is."""
    import threading

    entered, release = threading.Event(), threading.Event()

    def slow_plan(_columns: object) -> RowQuery:
        entered.set()
        release.wait(30)
        return RowQuery(pl.lit(True), ("SKU",))

    def check() -> None:
        raise PricingFormatError("past the deadline")

    data = _csv_bytes(["SKU", "Note", "Unit"], [["a", "b", "c"]] * 40)
    head_end = data.index(b'"a"')
    body = data[head_end:]
    size = -(-len(body) // _WAITING_PIECES)
    pieces = [body[start : start + size] for start in range(0, len(body), size)]
    assert len(pieces) == _WAITING_PIECES  # as many as may wait: finish finds no room
    stream = OfferRows("download", slow_plan, block_bytes=16, check=check)
    try:
        stream.add(data[:head_end])
        assert entered.wait(30)
        for piece in pieces:
            stream.add(piece)
        threading.Timer(0.3, release.set).start()
        frame = stream.finish()
    finally:
        release.set()
        stream.close()
    assert frame["SKU"].to_list() == ["a"] * 40


def test_closing_during_the_header_never_runs_the_plan() -> None:
    planned: list[object] = []
    stream = OfferRows("download", lambda columns: planned.append(columns), block_bytes=64)
    stream.add(_csv_bytes(["SKU", "Note", "Unit"], [])[:-8])  # cut after "Note", in the header
    while not stream._handoff.empty():  # the thread holds the cut header
        time.sleep(0.01)
    time.sleep(0.05)
    stream.close()  # as a cancelled download does: the header is cut, not the file's end
    assert planned == []


def test_a_file_with_a_byte_order_mark_and_crlf_line_ends_reads_the_same() -> None:
    rows = [["a", 'say "hi"', "x"], ["b", "two\r\nlines", "y"], ["c", "", "z"]]
    unix = _csv_bytes(["SKU", "Note", "Unit"], rows)
    windows = "\ufeff".encode() + unix.replace(b'"\n', b'"\r\n')
    seen: list[tuple[str, ...]] = []

    def plan(columns: tuple[str, ...]) -> RowQuery:
        seen.append(columns)
        return RowQuery(pl.lit(True), ("SKU", "Note", "Unit"))

    # Piece sizes 1 to 7 cut everywhere: inside the mark, between a CR and its LF at a record
    # end and inside the quoted CRLF of a value.
    for data, step in itertools.product((unix, windows), range(1, 8)):
        stream = OfferRows("download", plan, block_bytes=8)
        try:
            for start in range(0, len(data), step):
                stream.add(data[start : start + step])
            frame = stream.finish()
        finally:
            stream.close()
        assert [[value or "" for value in row] for row in frame.iter_rows()] == rows
    assert seen == [("SKU", "Note", "Unit")] * 14


def test_no_thread_runs_until_a_piece_comes() -> None:
    """A download answered "not modified" hands over no piece: nothing to start or to stop."""
    import threading

    def scanning() -> int:
        return sum(t.name == "trntui-offer-blocks" for t in threading.enumerate())

    before = scanning()
    stream = OfferRows("download", lambda _columns: RowQuery(pl.lit(True), ("SKU",)))
    assert scanning() == before
    stream.close()
    stream = OfferRows("download", lambda _columns: RowQuery(pl.lit(True), ("SKU",)))
    # The thread will wait for the next piece; close wakes it rather than waiting out the wait
    # (made long here, so that only a wake-up ends it in time).
    waiting = stream._handoff.get
    stream._handoff.get = lambda block=True, timeout=None: waiting(block, 30)  # type: ignore[method-assign]
    stream.add(b'"FormatVersion","v1.0"\n')
    assert scanning() == before + 1
    while not stream._handoff.empty():  # the thread took the piece and waits for the next
        time.sleep(0.01)
    started = time.perf_counter()
    stream.close()
    assert time.perf_counter() - started < 10
    assert scanning() == before
