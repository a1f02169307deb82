"""``trntui price fetch|add|list`` against a local price list server and a real project folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.test_pricing_support import (
    P5_ON_DEMAND,
    PUBLICATION_DATE,
    SP_PUBLICATION_DATE,
    TRN2_ON_DEMAND,
    VERSION,
    FakePriceList,
    savings_plan_csv,
    savings_plan_rows,
    sp_csv_path,
)
from trntui.commands.price import register
from trntui.core.errors import UserError
from trntui.core.quotes import SideService
from trntui.pricing.settings import CACHE_DIR_ENV, PRICING_URL_ENV
from trntui.store.project import init_project
from trntui.store.quotes import load_quote_book


@pytest.fixture(autouse=True)
def _empty_price_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with its own empty price cache (the server is ``price_server``)."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="trntui")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_fetch_json_holds_the_quote_and_its_provenance(
    price_server: FakePriceList, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(
        "price", "fetch", "--pricing-url", price_server.base_url,
        "--instance-type", "p5.48xlarge", "--instance-type", "trn3.48xlarge", "--json",
    )  # fmt: skip
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    on_demand = [q for q in document["quotes"] if q["purchase_option"] == "on-demand"]
    assert len(on_demand) == 1
    quote = on_demand[0]
    assert quote["instance_type"] == "p5.48xlarge"
    assert quote["region"] == "us-east-1"
    assert quote["usd_per_hour"] == P5_ON_DEMAND
    assert quote["upfront_usd"] == 0.0
    assert quote["usd_per_accelerator_hour"] == pytest.approx(P5_ON_DEMAND / 8)
    assert quote["publication_date"] == PUBLICATION_DATE
    assert quote["version"] == VERSION
    assert quote["sku"] == "P5SHARED"
    assert quote["manual"] is False
    assert quote["source_url"].startswith(price_server.base_url)
    assert quote["retrieved_at"].endswith("+00:00")
    (missing,) = document["missing"]
    assert missing["instance_type"] == "trn3.48xlarge"
    assert missing["status"] == "not-listed-yet"
    assert "add a manual quote" in missing["message"]
    assert document["source"]["error"] is None


def test_fetch_reads_the_url_from_the_environment(
    price_server: FakePriceList, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PRICING_URL_ENV, price_server.base_url)
    assert run("price", "fetch", "--region", "us-west-2", "--instance-type", "trn2.48xlarge") == 0
    out = capsys.readouterr().out
    assert "us-west-2" in out
    assert f"${TRN2_ON_DEMAND:,.2f}" in out
    # 44.70 / 16 chips: a derived price, to the cent like every total (not $2.7938)
    assert "$2.79" in out and "$2.7938" not in out


def test_fetch_with_side_rates_and_save_into_a_project(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = init_project(tmp_path / "proj")
    code = run(
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "trn2.48xlarge", "--side-rates", "--save", str(project), "--json",
    )  # fmt: skip
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    assert {rate["service"] for rate in document["side_rates"]} == {
        "s3-standard-storage",
        "ebs-gp3-storage",
        "cloudwatch-logs-ingestion",
        "cloudwatch-logs-storage",
        "inter-az-transfer",
    }
    book = load_quote_book(project)
    assert [(q.instance_type, q.usd_per_hour) for q in book.quotes] == [
        ("trn2.48xlarge", TRN2_ON_DEMAND)
    ]
    assert len(book.rates) == 5


def test_a_manual_side_rate_wins_over_the_fetched_one(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = init_project(tmp_path / "proj")
    run(
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "trn2.48xlarge", "--side-rates", "--save", str(project),
    )  # fmt: skip
    fetched = load_quote_book(project).rate(SideService.S3_STANDARD_STORAGE, "us-east-1")
    assert fetched is not None and not fetched.manual
    capsys.readouterr()
    code = run(
        "price", "rate", str(project), "--service", "s3-standard-storage", "--region",
        "us-east-1", "--usd-per-unit", "0.0125", "--source", "EDP rate card", "--date",
        "2026-10-01",
    )  # fmt: skip
    assert code == 0
    assert "Added manual rate" in capsys.readouterr().out
    book = load_quote_book(project)
    chosen = book.rate(SideService.S3_STANDARD_STORAGE, "us-east-1")
    assert chosen is not None and chosen.manual
    assert chosen.first_tier_usd_per_unit == 0.0125
    assert chosen.source_note == "EDP rate card"
    assert len(book.rates) == 6, "the fetched rate is kept beside the manual one"
    assert run("price", "list", str(project), "--json") == 0
    listed = json.loads(capsys.readouterr().out)["rates"]
    assert {"EDP rate card"} == {r["source_note"] for r in listed if r["manual"]}
    with pytest.raises(UserError, match="--source"):
        run(
            "price", "rate", str(project), "--service", "ebs-gp3-storage", "--region",
            "us-east-1", "--usd-per-unit", "0.08", "--source", "  ",
        )  # fmt: skip
    with pytest.raises(SystemExit):  # argparse: "' ' is not an AWS region code"
        run(
            "price", "rate", str(project), "--service", "ebs-gp3-storage", "--region",
            " ", "--usd-per-unit", "0.08", "--source", "rate card",
        )  # fmt: skip
    assert "' ' is not an AWS region code" in capsys.readouterr().err
    assert len(load_quote_book(project).rates) == 6


def test_insecure_url_is_a_user_error(price_server: FakePriceList) -> None:
    with pytest.raises(UserError, match="refusing pricing URL"):
        run("price", "fetch", "--pricing-url", "http://pricing.example.com")


def test_add_then_list_a_manual_trainium3_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = init_project(tmp_path / "proj")
    code = run(
        "price", "add", str(project), "--instance-type", "trn3.48xlarge", "--region",
        "us-east-1", "--usd-per-hour", "61.5", "--source", "AWS account team, 2026-11-25",
        "--date", "2026-11-25",
    )  # fmt: skip
    assert code == 0
    assert "Added manual quote" in capsys.readouterr().out
    assert run("price", "list", str(project), "--json", "--region", "us-west-2") == 0
    document = json.loads(capsys.readouterr().out)
    (quote,) = document["quotes"]
    assert quote["manual"] is True
    assert quote["usd_per_hour"] == 61.5
    assert quote["source_note"] == "AWS account team, 2026-11-25"
    assert quote["retrieved_at"].startswith("2026-11-25")
    assert quote["sku"] is None
    assert any("not the target region us-west-2" in flag for flag in quote["flags"])
    assert any("manual quote" in flag for flag in quote["flags"])
    assert run("price", "list", str(project)) == 0
    assert "trn3.48xlarge" in capsys.readouterr().out


def test_old_manual_quote_is_listed_as_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = init_project(tmp_path / "proj")
    run(
        "price", "add", str(project), "--instance-type", "p5.48xlarge", "--region", "us-east-1",
        "--usd-per-hour", "31.0", "--source", "Capacity Block offer", "--purchase-option",
        "capacity-block", "--date", "2020-01-01",
    )  # fmt: skip
    capsys.readouterr()
    run("price", "list", str(project), "--max-age-days", "10")
    assert "days old (limit 10)" in capsys.readouterr().out


@pytest.mark.parametrize("price", ["0", "-3", "abc", "nan"])
def test_add_refuses_a_price_that_is_not_positive(tmp_path: Path, price: str) -> None:
    project = init_project(tmp_path / "proj")
    with pytest.raises(SystemExit) as raised:
        run(
            "price", "add", str(project), "--instance-type", "p5.48xlarge", "--region",
            "us-east-1", "--usd-per-hour", price, "--source", "x",
        )  # fmt: skip
    assert raised.value.code == 2
    assert load_quote_book(project).quotes == ()


def test_add_refuses_an_unknown_purchase_option(tmp_path: Path) -> None:
    project = init_project(tmp_path / "proj")
    with pytest.raises(UserError, match="unknown purchase option 'cheap'"):
        run(
            "price", "add", str(project), "--instance-type", "p5.48xlarge", "--region",
            "us-east-1", "--usd-per-hour", "3", "--source", "x", "--purchase-option", "cheap",
        )  # fmt: skip


def test_add_to_a_folder_that_is_not_a_project(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a trntui project"):
        run(
            "price", "add", str(tmp_path), "--instance-type", "p5.48xlarge", "--region",
            "us-east-1", "--usd-per-hour", "3", "--source", "x",
        )  # fmt: skip


def test_main_cli_offers_the_price_command(
    price_server: FakePriceList, capsys: pytest.CaptureFixture[str]
) -> None:
    from trntui.cli import main

    code = main(["price", "fetch", "--pricing-url", "http://10.1.2.3", "--json"])
    assert code == 2
    assert "refusing pricing URL" in capsys.readouterr().err


def test_a_fetched_official_price_is_used_over_an_older_manual_one_unless_pinned(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: an EXAMPLE manual quote for p5.48xlarge, then `price fetch --save`
    over real HTTP on loopback: the estimate uses the price list's and says why; a quote a
    person pins (a negotiated price) is used over it."""
    import dataclasses

    from trntui.commands import estimate as estimate_commands
    from trntui.core.inventory import TrainingTarget
    from trntui.store.project import Project

    project = init_project(tmp_path / "proj")
    with Project.open(project) as session:
        target = TrainingTarget("GPU", "p5.48xlarge", 1, "us-east-1", "on-demand")
        session.save_inventory(dataclasses.replace(session.inventory, targets=(target,)))
    assert run(
        "price", "add", str(project), "--instance-type", "p5.48xlarge", "--region", "us-east-1",
        "--usd-per-hour", "98.32", "--source", "EXAMPLE figure from an old estimate",
        "--date", "2026-10-01",
    ) == 0  # fmt: skip
    assert run(
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "p5.48xlarge", "--save", str(project),
    ) == 0  # fmt: skip
    capsys.readouterr()

    def gpu_price() -> dict:
        parser = argparse.ArgumentParser()
        estimate_commands.register(parser.add_subparsers())
        args = parser.parse_args(["estimate", str(project), "--json"])
        assert args.func(args) == 0
        (gpu,) = json.loads(capsys.readouterr().out)["targets"]
        return gpu

    gpu = gpu_price()
    assert gpu["inputs"]["usd_per_hour"]["value"] == P5_ON_DEMAND
    assert "AWS Price List" in gpu["quote_reason"] and "manual" in gpu["quote_reason"]
    assert run(
        "price", "add", str(project), "--instance-type", "p5.48xlarge", "--region", "us-east-1",
        "--usd-per-hour", "41.0", "--source", "private pricing agreement 2026-11",
        "--date", "2026-11-20", "--pin",
    ) == 0  # fmt: skip
    capsys.readouterr()
    gpu = gpu_price()
    assert gpu["inputs"]["usd_per_hour"]["value"] == 41.0
    assert "pinned" in gpu["quote_reason"]


def test_a_fetch_keeps_its_misses_so_only_those_are_called_not_offered(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trntui.core.quotes import LookupStatus, find_quote

    project = init_project(tmp_path / "proj")
    assert run(
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "p5.48xlarge", "--instance-type", "g9.fictional", "--save", str(project),
    ) == 0  # fmt: skip
    book = load_quote_book(project)
    assert [(m.instance_type, m.region) for m in book.misses] == [("g9.fictional", "us-east-1")]
    missing = find_quote(book.quotes, "g9.fictional", "us-east-1", misses=book.misses)
    assert missing.status is LookupStatus.NOT_OFFERED
    never = find_quote(book.quotes, "p4d.24xlarge", "us-east-1", misses=book.misses)
    assert never.status is LookupStatus.NO_QUOTE  # never looked up: no claim either way


def test_fetch_savings_plans_saves_them_and_the_estimate_uses_the_plan_rate(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`price fetch --savings-plans --save` through the real entry point, over HTTP on loopback;
    then `estimate --json` prices a target bought with an EC2 Instance Savings Plan (3 years,
    partial upfront) at that plan's rate in the fixture's us-east-1 file: $22.94 an hour."""
    import dataclasses

    from trntui.cli import main
    from trntui.core.inventory import TrainingTarget
    from trntui.store.project import Project

    plan = "savings-plan-ec2-instance-3yr-partial-upfront"
    project = init_project(tmp_path / "proj")
    with Project.open(project) as session:
        target = TrainingTarget("GPU", "p5.48xlarge", 1, "us-east-1", plan)
        session.save_inventory(dataclasses.replace(session.inventory, targets=(target,)))
    code = main([
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "p5.48xlarge", "--instance-type", "trn3.48xlarge", "--savings-plans", "--save",
        str(project), "--json",
    ])  # fmt: skip
    assert code == 0
    document = json.loads(capsys.readouterr().out)
    plans = document["savings_plans"]
    assert len(plans["quotes"]) == 12
    (chosen,) = [q for q in plans["quotes"] if q["purchase_option"] == plan]
    assert chosen["usd_per_hour"] == 22.94
    assert chosen["upfront_usd"] == 0.0 and chosen["recurring_usd_per_hour"] is None
    assert chosen["offer_code"] == "AWSComputeSavingsPlan"
    assert chosen["sku"] == "ISP3PUP5USEAST1X"
    assert plans["source"]["url"] == price_server.base_url + sp_csv_path("us-east-1")
    (missing,) = plans["missing"]
    assert (missing["instance_type"], missing["status"]) == ("trn3.48xlarge", "not-listed-yet")
    assert document["quotes"], "the EC2 quotes are still fetched"

    book = load_quote_book(project)
    saved = {q.purchase_option: q for q in book.quotes if q.purchase_option.startswith("savings")}
    assert len(saved) == 12
    assert saved[plan].usd_per_hour == 22.94 and saved[plan].manual is False
    assert saved[plan].publication_date == SP_PUBLICATION_DATE
    assert any(q.purchase_option == "on-demand" for q in book.quotes)

    assert main(["estimate", str(project), "--json"]) == 0
    (gpu,) = json.loads(capsys.readouterr().out)["targets"]
    assert gpu["inputs"]["usd_per_hour"]["value"] == 22.94
    assert "AWS Price List" in gpu["quote_reason"]


def test_fetch_savings_plans_prints_their_table(
    price_server: FakePriceList, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(
        "price", "fetch", "--pricing-url", price_server.base_url, "--region", "us-west-2",
        "--instance-type", "p5.48xlarge", "--savings-plans",
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    plans = out[out.index("Savings Plans rates for us-west-2") :]
    assert "savings-plan-compute-1yr-no-upfront" in plans and "$42.10" in plans
    assert "savings-plan-ec2-instance-3yr-all-upfront" in plans and "$23.10" in plans
    assert f"published {SP_PUBLICATION_DATE}" in plans


def test_a_savings_plans_row_that_is_not_a_price_is_skipped_with_a_note(
    price_server: FakePriceList, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 16 case 12: one bad row costs that row (named by file and line), not the fetch."""
    from trntui.cli import main

    rows = savings_plan_rows("us-east-1")
    rows[0] = {**rows[0], "DiscountedRate": "4l.28"}
    price_server.site[sp_csv_path("us-east-1")] = savings_plan_csv(rows)
    project = init_project(tmp_path / "proj")
    code = main([
        "price", "fetch", "--pricing-url", price_server.base_url, "--instance-type",
        "p5.48xlarge", "--savings-plans", "--save", str(project),
    ])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "AWSComputeSavingsPlan/us-east-1/index.csv:7:" in out  # the first row, line 7
    assert "'4l.28'" in out and "row skipped" in out
    options = {quote.purchase_option for quote in load_quote_book(project).quotes}
    assert "on-demand" in options and "savings-plan-compute-1yr-partial-upfront" in options
    assert "savings-plan-compute-1yr-no-upfront" not in options, "the bad row priced nothing"
