"""Fixtures in the exact AWS Price List layout, and a real HTTP server on 127.0.0.1 serving them.

The header below is the real EC2 offer-file header (column for column); S3, CloudWatch and
data-transfer files carry the shared price columns plus the product columns the price list uses
for those services. Prices here are made-up test values, chosen so that every excluded row would
change the result if it leaked through.
"""

from __future__ import annotations

import contextlib
import csv
import http.server
import io
import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from tests import HANG_GUARD_S

EC2_HEADER = [
    "SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription", "EffectiveDate",
    "StartingRange", "EndingRange", "Unit", "PricePerUnit", "Currency", "RelatedTo",
    "LeaseContractLength", "PurchaseOption", "OfferingClass", "Product Family", "serviceCode",
    "Location", "Location Type", "Instance Type", "Current Generation", "Instance Family",
    "vCPU", "Physical Processor", "Clock Speed", "Memory", "Storage", "Network Performance",
    "Processor Architecture", "Storage Media", "Volume Type", "Max Volume Size",
    "Max IOPS/volume", "Max IOPS Burst Performance", "Max throughput/volume", "Provisioned",
    "Tenancy", "EBS Optimized", "Operating System", "License Model", "Group",
    "Group Description", "Transfer Type", "From Location", "From Location Type", "To Location",
    "To Location Type", "usageType", "operation", "AvailabilityZone", "CapacityStatus",
    "ClassicNetworkingSupport", "Dedicated EBS Throughput", "ECU", "Elastic Graphics Type",
    "Enhanced Networking Supported", "From Region Code", "GPU", "GPU Memory", "Instance",
    "Instance Capacity - 10xlarge", "Instance Capacity - 12xlarge",
    "Instance Capacity - 16xlarge", "Instance Capacity - 18xlarge",
    "Instance Capacity - 24xlarge", "Instance Capacity - 2xlarge",
    "Instance Capacity - 32xlarge", "Instance Capacity - 4xlarge",
    "Instance Capacity - 8xlarge", "Instance Capacity - 9xlarge", "Instance Capacity - large",
    "Instance Capacity - medium", "Instance Capacity - metal", "Instance Capacity - xlarge",
    "instanceSKU", "Intel AVX2 Available", "Intel AVX Available", "Intel Turbo Available",
    "MarketOption", "Normalization Size Factor", "Physical Cores", "Pre Installed S/W",
    "Processor Features", "Product Type", "Region Code", "Resource Type", "serviceName",
    "SnapshotArchiveFeeType", "To Region Code", "Volume API Name", "VPCNetworkingSupport",
]  # fmt: skip

_PRICE_HEADER = EC2_HEADER[:15]
S3_HEADER = [
    *_PRICE_HEADER, "Product Family", "serviceCode", "Location", "Location Type",
    "Availability", "Storage Class", "Volume Type", "usageType", "operation", "Durability",
    "Region Code", "serviceName",
]  # fmt: skip
CLOUDWATCH_HEADER = [
    *_PRICE_HEADER, "Product Family", "serviceCode", "Location", "Location Type", "Group",
    "Group Description", "usageType", "operation", "Region Code", "serviceName",
]  # fmt: skip
TRANSFER_HEADER = [
    *_PRICE_HEADER, "Product Family", "serviceCode", "Transfer Type", "From Location",
    "From Location Type", "To Location", "To Location Type", "usageType", "operation",
    "From Region Code", "To Region Code", "serviceName",
]  # fmt: skip

PUBLICATION_DATE = "2026-11-20T18:02:11Z"
VERSION = "20261120180211"
ON_DEMAND_TERM = "JRTCKXETXF"
HOURLY_DIMENSION = "6YS6EN2CT7"

# The prices the tests expect, written independently of the code under test.
P5_ON_DEMAND = 55.04
TRN2_ON_DEMAND = 44.70
TRN1_ON_DEMAND = 21.50
P5_GPU_COUNT = 8


def offer_csv(
    offer_code: str,
    header: list[str],
    rows: list[dict[str, str]],
    *,
    quoting: int = csv.QUOTE_ALL,
    disclaimer: str | None = None,
    published: tuple[str, str] = (PUBLICATION_DATE, VERSION),
) -> bytes:
    """An offer file: the five metadata rows, the header, then every row (fully quoted, as the
    EC2 offer files are, unless ``quoting`` says otherwise)."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=quoting, lineterminator="\n")
    writer.writerow(["FormatVersion", "v1.0"])
    writer.writerow(
        [
            "Disclaimer",
            disclaimer
            or "This pricing list is for informational purposes only. All prices are subject "
            "to the additional terms included in the pricing pages on http://aws.amazon.com. "
            "All Free Tier prices are also subject to the terms included at "
            "https://aws.amazon.com/free/",
        ]
    )
    writer.writerow(["Publication Date", published[0]])
    writer.writerow(["Version", published[1]])
    writer.writerow(["OfferCode", offer_code])
    writer.writerow(header)
    for row in rows:
        unknown = set(row) - set(header)
        assert not unknown, f"fixture row uses columns not in the header: {unknown}"
        writer.writerow([row.get(name, "") for name in header])
    return out.getvalue().encode("utf-8")


def _instance_row(
    instance_type: str,
    price: str,
    *,
    sku: str,
    region: str = "us-east-1",
    prefix: str = "",
    term: str = "OnDemand",
    tenancy: str = "Shared",
    os_name: str = "Linux",
    capacity: str = "Used",
    preinstalled: str = "NA",
    market: str = "OnDemand",
    unit: str = "Hrs",
    gpu: str = "",
    **extra: str,
) -> dict[str, str]:
    usage_kind = {"Shared": "BoxUsage", "Dedicated": "DedicatedUsage"}[tenancy]
    row = {
        "SKU": sku,
        "OfferTermCode": ON_DEMAND_TERM
        if term == "OnDemand"
        else extra.pop("term_code", "4NA7Y494T4"),
        "TermType": term,
        "PriceDescription": f"${price} per {os_name} {instance_type} Instance Hour",
        "EffectiveDate": "2026-11-01T00:00:00Z",
        "StartingRange": "0",
        "EndingRange": "Inf",
        "Unit": unit,
        "PricePerUnit": price,
        "Currency": "USD",
        "Product Family": "Compute Instance",
        "serviceCode": "AmazonEC2",
        "Location": "US East (N. Virginia)" if region == "us-east-1" else "US West (Oregon)",
        "Location Type": "AWS Region",
        "Instance Type": instance_type,
        "Current Generation": "Yes",
        "Instance Family": "Accelerated Computing",
        "vCPU": "192",
        "Memory": "2048 GiB",
        "Tenancy": tenancy,
        "Operating System": os_name,
        "License Model": "No License required",
        "usageType": f"{prefix}{usage_kind}:{instance_type}",
        "operation": "RunInstances" if os_name == "Linux" else "RunInstances:0002",
        "CapacityStatus": capacity,
        "GPU": gpu,
        "MarketOption": market,
        "Pre Installed S/W": preinstalled,
        "Region Code": region,
        "serviceName": "Amazon Elastic Compute Cloud",
    }
    row["RateCode"] = f"{sku}.{row['OfferTermCode']}.{HOURLY_DIMENSION}"
    row.update(extra)
    return row


def _reserved_rows(
    instance_type: str, sku: str, term_code: str, lease: str, option: str, klass: str,
    hourly: str, upfront: str | None,
) -> list[dict[str, str]]:  # fmt: skip
    common = {
        "term": "Reserved",
        "term_code": term_code,
        "LeaseContractLength": lease,
        "PurchaseOption": option,
        "OfferingClass": klass,
        "gpu": "8",
    }
    rows = [_instance_row(instance_type, hourly, sku=sku, **common)]
    if upfront is not None:
        fee = _instance_row(instance_type, upfront, sku=sku, unit="Quantity", **common)
        fee["RateCode"] = f"{sku}.{term_code}.2TG2D8R56U"
        fee["PriceDescription"] = "Upfront Fee"
        rows.append(fee)
    return rows


def ec2_rows(region: str = "us-east-1", prefix: str = "") -> list[dict[str, str]]:
    """One offer file's worth of rows: the ones to keep and each kind that must be excluded."""
    kw = {"region": region, "prefix": prefix}
    rows = [
        _instance_row("p5.48xlarge", f"{P5_ON_DEMAND}", sku="P5SHARED", gpu="8", **kw),
        _instance_row("p5.48xlarge", "60.00", sku="P5DEDIC", tenancy="Dedicated", gpu="8", **kw),
        _instance_row("p5.48xlarge", "70.00", sku="P5WIN", os_name="Windows", gpu="8", **kw),
        _instance_row("p5.48xlarge", "80.00", sku="P5SQL", preinstalled="SQL Std", gpu="8", **kw),
        _instance_row(
            "p5.48xlarge", "1.23", sku="P5UNUSED", capacity="UnusedCapacityReservation", **kw
        ),
        _instance_row(
            "p5.48xlarge", "0.00", sku="P5ALLOC", capacity="AllocatedCapacityReservation", **kw
        ),
        _instance_row("p5.48xlarge", "31.46", sku="P5CB", market="CapacityBlock", gpu="8", **kw),
        # A Local Zone listed in the region's file, and a bring-your-own-license row: another
        # price for the same type, which must not make the region's price ambiguous.
        _instance_row(
            "p5.48xlarge",
            "66.05",
            sku="P5LZ",
            gpu="8",
            **kw,
            **{"Location Type": "AWS Local Zone", "Location": "US East (Dallas)"},
        ),
        _instance_row(
            "p5.48xlarge",
            "49.99",
            sku="P5BYOL",
            gpu="8",
            **kw,
            **{"License Model": "Bring your own license"},
        ),
        _instance_row("trn2.48xlarge", f"{TRN2_ON_DEMAND}", sku="TRN2SHARED", **kw),
        _instance_row("trn1.32xlarge", f"{TRN1_ON_DEMAND}", sku="TRN1SHARED", **kw),
        _instance_row("p4de.24xlarge", "0.0000000000", sku="P4DEZERO", gpu="8", **kw),
    ]
    if region == "us-east-1":
        rows += _reserved_rows(
            "p5.48xlarge", "P5SHARED", "4NA7Y494T4", "1yr", "No Upfront", "standard", "40.00", None
        )
        rows += _reserved_rows(
            "p5.48xlarge", "P5SHARED", "HU7G6KETJZ", "1yr", "Partial Upfront", "standard",
            "20.00", "175200",
        )  # fmt: skip
        rows += _reserved_rows(
            "p5.48xlarge", "P5SHARED", "NQ3QZPMQV9", "3yr", "All Upfront", "convertible",
            "0.0000000000", "788400",
        )  # fmt: skip
    storage = {
        "Product Family": "Storage",
        "Instance Type": "",
        "Tenancy": "",
        "Operating System": "",
        "CapacityStatus": "",
        "MarketOption": "",
        "Pre Installed S/W": "",
        "Unit": "GB-Mo",
    }
    for sku, volume, usage, price, unit in (
        ("GP3STORAGE", "gp3", "EBS:VolumeUsage.gp3", "0.08", "GB-Mo"),
        ("GP2STORAGE", "gp2", "EBS:VolumeUsage.gp2", "0.10", "GB-Mo"),
        ("GP3IOPS", "gp3", "EBS:VolumeP-IOPS.gp3", "0.005", "IOPS-Mo"),
    ):
        row = _instance_row("x", price, sku=sku, **kw)
        row.update(storage)
        row.update(
            {"Volume API Name": volume, "usageType": f"{prefix}{usage}", "Unit": unit,
             "operation": "", "PriceDescription": f"${price} per {unit} of {volume}"}
        )  # fmt: skip
        rows.append(row)
    return rows


def _service_row(header: list[str], sku: str, usage: str, unit: str, price: str, **extra: str):
    row = {
        "SKU": sku,
        "OfferTermCode": ON_DEMAND_TERM,
        "RateCode": f"{sku}.{ON_DEMAND_TERM}.{HOURLY_DIMENSION}",
        "TermType": "OnDemand",
        "EffectiveDate": "2026-11-01T00:00:00Z",
        "StartingRange": "0",
        "EndingRange": "Inf",
        "Unit": unit,
        "PricePerUnit": price,
        "Currency": "USD",
        "usageType": usage,
    }
    row.update(extra)
    return {key: value for key, value in row.items() if key in header}


def s3_rows(prefix: str = "") -> list[dict[str, str]]:
    usage = f"{prefix}TimedStorage-ByteHrs"
    standard = {"Storage Class": "General Purpose", "Volume Type": "Standard"}
    return [
        _service_row(S3_HEADER, "S3STD", usage, "GB-Mo", "0.0230000000", StartingRange="0",
                     EndingRange="51200", **standard),
        _service_row(S3_HEADER, "S3STD", usage, "GB-Mo", "0.0220000000", StartingRange="51200",
                     EndingRange="512000", **standard),
        _service_row(S3_HEADER, "S3STD", usage, "GB-Mo", "0.0210000000", StartingRange="512000",
                     EndingRange="Inf", **standard),
        _service_row(S3_HEADER, "S3INT", f"{prefix}TimedStorage-INT-FA-ByteHrs", "GB-Mo", "0.0250",
                     **{"Storage Class": "Intelligent-Tiering",
                        "Volume Type": "IntelligentTieringFAStorage"}),
        _service_row(S3_HEADER, "S3GLACIER", f"{prefix}TimedStorage-GlacierByteHrs", "GB-Mo",
                     "0.0040", **{"Storage Class": "Archive", "Volume Type": "Amazon Glacier"}),
    ]  # fmt: skip


def cloudwatch_rows(prefix: str = "") -> list[dict[str, str]]:
    return [
        _service_row(CLOUDWATCH_HEADER, "CWINGEST", f"{prefix}DataProcessing-Bytes", "GB", "0.50",
                     **{"Product Family": "Data Payload", "Group": "Ingested Logs"}),
        _service_row(CLOUDWATCH_HEADER, "CWSTORE", f"{prefix}TimedStorage-ByteHrs", "GB-Mo",
                     "0.03", **{"Product Family": "Storage Snapshot", "Group": "Stored Logs"}),
        _service_row(CLOUDWATCH_HEADER, "CWVENDED", f"{prefix}VendedLog-Bytes", "GB", "0.25",
                     **{"Product Family": "Data Payload", "Group": "Vended Logs"}),
    ]  # fmt: skip


def transfer_rows(prefix: str = "", *, with_regional: bool = True) -> list[dict[str, str]]:
    intra = {"Transfer Type": "IntraRegion"}
    rows = [
        _service_row(TRANSFER_HEADER, "XAZIN", f"{prefix}DataTransfer-xAZ-In-Bytes", "GB",
                     "0.0000000000", **intra),
        _service_row(TRANSFER_HEADER, "XAZOUT", f"{prefix}DataTransfer-xAZ-Out-Bytes", "GB",
                     "0.0000000000", **intra),
        _service_row(TRANSFER_HEADER, "OUTNET", f"{prefix}DataTransfer-Out-Bytes", "GB", "0.09",
                     **{"Transfer Type": "AWS Outbound"}),
    ]  # fmt: skip
    if with_regional:
        rows.append(
            _service_row(TRANSFER_HEADER, "REGIONAL", f"{prefix}DataTransfer-Regional-Bytes",
                         "GB", "0.0100000000", **intra)
        )  # fmt: skip
    return rows


# The Savings Plans offer (AWSComputeSavingsPlan): its own tree, a region index that LISTS
# {regionCode, versionUrl} entries, and per-region CSV files that are not quoted, whose
# metadata names the offer AmazonComputeSavingsPlan. Header column for column as in a real
# file (the notes on the price list layouts, section 1.3).
SP_OFFER = "AWSComputeSavingsPlan"
SP_FILE_OFFER_CODE = "AmazonComputeSavingsPlan"
SP_PUBLICATION_DATE = "2026-11-18T09:35:12Z"
SP_VERSION = "20261118093512"
SP_HEADER = [
    "SKU", "RateCode", "Unit", "EffectiveDate", "DiscountedRate", "Currency", "DiscountedSKU",
    "DiscountedServiceCode", "DiscountedUsageType", "DiscountedOperation", "PurchaseOption",
    "LeaseContractLength", "LeaseContractLengthUnit", "ServiceCode", "UsageType", "Operation",
    "Description", "Instance Family", "Location", "Location Type", "Granularity",
    "Product Family", "DiscountedRegionCode", "DiscountedInstanceType",
]  # fmt: skip
SP_REGION_INDEX = f"/savingsPlan/v1.0/aws/{SP_OFFER}/current/region_index.json"
SP_REGIONS = {
    # region code: (usage-type prefix, location, location type)
    "us-west-2-den-1": ("DEN1-", "US West (Denver)", "AWS Local Zone"),
    "us-east-1-wl1-chi1": ("CHI1-", "US East (Verizon) - Chicago", "AWS Wavelength Zone"),
    "us-east-1": ("", "US East (N. Virginia)", "AWS Region"),
    "us-west-2": ("USW2-", "US West (Oregon)", "AWS Region"),
}
"""In the index's order: zones whose codes start with a region's code come first, so a
lookup by prefix would pick them. The Wavelength Zone's file is not on the server."""
_PAYMENT_SKU = {"No Upfront": "NU", "Partial Upfront": "PU", "All Upfront": "AU"}


def sp_version_path(region: str) -> str:
    return f"/savingsPlan/v1.0/aws/{SP_OFFER}/{SP_VERSION}/{region}/index.json"


def sp_csv_path(region: str) -> str:
    return sp_version_path(region).removesuffix(".json") + ".csv"


def plan_row(
    family: str,
    years: str,
    payment: str,
    rate: str,
    *,
    region: str = "us-east-1",
    instance_type: str = "p5.48xlarge",
    discounted_sku: str = "P5SHARED",
    usage: str = "BoxUsage",
    operation: str = "RunInstances",
    discounted_region: str | None = None,
    discounted_prefix: str | None = None,
) -> dict[str, str]:
    """One rate of one plan, as a real row has it: the plan's SKU, term and payment, and the
    EC2 product it discounts (usage type, operation, region and type)."""
    prefix, location, location_type = SP_REGIONS[region]
    usage_prefix = prefix if discounted_prefix is None else discounted_prefix
    family_name = instance_type.split(".")[0]
    compute = family == "ComputeSavingsPlans"
    plan = f"{years}yr{payment.replace(' ', '')}"
    # Compute plans are global (one SKU each); an EC2 Instance plan is per family and region.
    scope = "GLOBAL" if compute else f"{family_name}{region}".upper().replace("-", "")
    sku = f"{'C' if compute else 'I'}SP{years}{_PAYMENT_SKU[payment]}{scope}".ljust(16, "X")[:16]
    return {
        "SKU": sku,
        "RateCode": f"{sku}.{discounted_sku}",
        "Unit": "Hrs",
        "EffectiveDate": "2026-10-01T00:00:00Z",
        "DiscountedRate": rate,
        "Currency": "USD",
        "DiscountedSKU": discounted_sku,
        "DiscountedServiceCode": "AmazonEC2",
        "DiscountedUsageType": f"{usage_prefix}{usage}:{instance_type}",
        "DiscountedOperation": operation,
        "PurchaseOption": payment,
        "LeaseContractLength": years,
        "LeaseContractLengthUnit": "year",
        "ServiceCode": "ComputeSavingsPlans",
        "UsageType": f"ComputeSP:{plan}" if compute else f"{prefix}EC2SP:{family_name}.{plan}",
        "Operation": "",
        "Description": (
            f"{years} year {payment} Compute Savings Plan"
            if compute
            else f"{years} year {payment} {family_name} EC2 Instance Savings Plan in {region}"
        ),
        "Instance Family": "" if compute else family_name,
        "Location": "Any" if compute else location,
        "Location Type": location_type,
        "Granularity": "hourly",
        "Product Family": family,
        "DiscountedRegionCode": discounted_region or region,
        "DiscountedInstanceType": instance_type,
    }


COMPUTE, INSTANCE = "ComputeSavingsPlans", "EC2InstanceSavingsPlans"
NO, PARTIAL, ALL = "No Upfront", "Partial Upfront", "All Upfront"


def savings_plan_rows(region: str = "us-east-1") -> list[dict[str, str]]:
    """A region's Savings Plans rows. us-east-1: p5.48xlarge in all 12 plans, trn2.48xlarge in
    two Compute plans only (no EC2 Instance plan), no trn3 at all, and one decoy of each kind
    that must be left out (each would change a p5 rate if it leaked through)."""
    if region == "us-east-1":
        rows = [
            plan_row(COMPUTE, "1", NO, "41.28"),
            plan_row(COMPUTE, "1", PARTIAL, "39.63"),
            plan_row(COMPUTE, "1", ALL, "38.8"),
            plan_row(COMPUTE, "3", NO, "30.27"),
            plan_row(COMPUTE, "3", PARTIAL, "28.07"),
            plan_row(COMPUTE, "3", ALL, "26.97"),
            plan_row(INSTANCE, "1", NO, "37.15"),
            plan_row(INSTANCE, "1", PARTIAL, "35.67"),
            plan_row(INSTANCE, "1", ALL, "34.92"),
            plan_row(INSTANCE, "3", NO, "24.77"),
            plan_row(INSTANCE, "3", PARTIAL, "22.94"),
            plan_row(INSTANCE, "3", ALL, "22.02"),
            plan_row(COMPUTE, "1", NO, "31.29", instance_type="trn2.48xlarge",
                      discounted_sku="TRN2SHARED"),
            plan_row(COMPUTE, "3", ALL, "20.12", instance_type="trn2.48xlarge",
                      discounted_sku="TRN2SHARED"),
            # Decoys, all in the plans above: a Dedicated Host, unused reservation capacity,
            # Dedicated Instance tenancy, Windows, and rows discounting other places' usage.
            plan_row(COMPUTE, "1", NO, "45.1", usage="HostBoxUsage", discounted_sku="P5HOST"),
            plan_row(COMPUTE, "1", NO, "12.4", usage="UnusedBox", discounted_sku="P5UNUSED"),
            plan_row(INSTANCE, "3", ALL, "45.41", usage="DedicatedUsage",
                      discounted_sku="P5DEDIC"),
            plan_row(COMPUTE, "3", NO, "47.02", operation="RunInstances:0002",
                      discounted_sku="P5WIN"),
            plan_row(COMPUTE, "1", PARTIAL, "43.33", discounted_region="us-west-2",
                      discounted_prefix="USW2-", discounted_sku="P5USW2"),
            plan_row(INSTANCE, "1", NO, "49.5", discounted_region="us-east-1-dfw-1",
                      discounted_prefix="DFW1-", discounted_sku="P5DFW1"),
        ]  # fmt: skip
    elif region == "us-west-2":
        rows = [
            plan_row(COMPUTE, "1", NO, "42.1", region=region, discounted_sku="P5USW2"),
            plan_row(INSTANCE, "3", ALL, "23.1", region=region, discounted_sku="P5USW2"),
        ]
    else:
        rows = [plan_row(COMPUTE, "1", NO, "50", region=region, discounted_sku="P5DEN1")]
    return rows


def savings_plan_csv(rows: list[dict[str, str]], *, quoting: int = csv.QUOTE_MINIMAL) -> bytes:
    """A Savings Plans file as published: not quoted (unless ``quoting`` says otherwise)."""
    return offer_csv(
        SP_FILE_OFFER_CODE, SP_HEADER, rows, quoting=quoting,
        disclaimer="This pricing list is for informational purposes only.",
        published=(SP_PUBLICATION_DATE, SP_VERSION),
    )  # fmt: skip


def savings_plan_site() -> dict[str, bytes]:
    index = {
        "disclaimer": "This pricing list is for informational purposes only.",
        "publicationDate": SP_PUBLICATION_DATE,
        "regions": [
            {"regionCode": region, "versionUrl": sp_version_path(region)} for region in SP_REGIONS
        ],
    }
    site = {SP_REGION_INDEX: json.dumps(index, indent=2).encode()}
    for region in ("us-west-2-den-1", "us-east-1", "us-west-2"):
        site[sp_csv_path(region)] = savings_plan_csv(savings_plan_rows(region))
    return site


OFFERS = {
    "AmazonEC2": (EC2_HEADER, ec2_rows),
    "AmazonS3": (S3_HEADER, s3_rows),
    "AmazonCloudWatch": (CLOUDWATCH_HEADER, cloudwatch_rows),
    "AWSDataTransfer": (TRANSFER_HEADER, transfer_rows),
}
REGION_PREFIX = {"us-east-1": "", "us-west-2": "USW2-"}


def version_path(offer: str, region: str) -> str:
    return f"/offers/v1.0/aws/{offer}/{VERSION}/{region}/index.json"


def build_site() -> dict[str, bytes]:
    """Every file of a small price list site, keyed by URL path."""
    site: dict[str, bytes] = {}
    for offer, (header, rows) in OFFERS.items():
        regions = {
            region: {"regionCode": region, "currentVersionUrl": version_path(offer, region)}
            for region in REGION_PREFIX
        }
        site[f"/offers/v1.0/aws/{offer}/current/region_index.json"] = json.dumps(
            {
                "formatVersion": "v1.0",
                "disclaimer": "This pricing list is for informational purposes only.",
                "publicationDate": PUBLICATION_DATE,
                "regions": regions,
            }
        ).encode()
        for region, prefix in REGION_PREFIX.items():
            csv_path = version_path(offer, region).removesuffix(".json") + ".csv"
            # A region's file states its own Region Code (the EC2 rows carry it).
            kw = {"region": region} if rows is ec2_rows else {}
            site[csv_path] = offer_csv(offer, header, rows(prefix=prefix, **kw))
    site.update(savings_plan_site())
    return site


@dataclass
class Fault:
    """How the server misbehaves for one path."""

    status: int | None = None
    body: bytes | None = None
    content_type: str | None = None
    truncate_to: int | None = None
    stall: bool = False
    """Never answer (until the server stops): a client can only give up on its own timeout."""


@dataclass
class FakePriceList:
    site: dict[str, bytes]
    faults: dict[str, Fault] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    etags: dict[str, str] = field(default_factory=dict)
    base_url: str = ""
    stopping: threading.Event = field(default_factory=threading.Event)

    def csv_path(self, offer: str, region: str) -> str:
        return version_path(offer, region).removesuffix(".json") + ".csv"

    def hits(self, path: str) -> list[dict[str, str]]:
        return [headers for seen, headers in self.requests if seen == path]

    def etag_for(self, path: str) -> str:
        return self.etags.setdefault(path, f'"etag-{abs(hash(self.site[path])) % 10**9}"')


class _QuietServer(http.server.ThreadingHTTPServer):
    """A client that cancels (as the tests make it) resets its connection: that is the test
    working, not a server fault worth a traceback on stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _handler(state: FakePriceList) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            state.requests.append((path, {k.lower(): v for k, v in self.headers.items()}))
            fault = state.faults.get(path, Fault())
            if fault.stall:
                state.stopping.wait()
                self.close_connection = True
                return
            if path not in state.site and fault.body is None:
                self._reply(404, b"<html><body>Not Found</body></html>", "text/html")
                return
            body = fault.body if fault.body is not None else state.site[path]
            if fault.status is not None:
                self._reply(fault.status, body, fault.content_type or "text/html")
                return
            etag = state.etag_for(path)
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            content_type = fault.content_type or (
                "application/json" if path.endswith(".json") else "text/csv"
            )
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", "Fri, 20 Nov 2026 18:02:11 GMT")
            self.end_headers()
            if fault.truncate_to is not None:
                self.wfile.write(body[: fault.truncate_to])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def _reply(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextlib.contextmanager
def running_price_list() -> Iterator[FakePriceList]:
    """Serve ``build_site()`` on 127.0.0.1 (an ephemeral port) until the block ends."""
    state = FakePriceList(site=build_site())
    server = _QuietServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    # A short poll: shutdown() waits for the serving loop to look, 0.5 s by default.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_fixture_header_is_the_real_ec2_header() -> None:
    assert len(EC2_HEADER) == len(set(EC2_HEADER))
    assert EC2_HEADER[:3] == ["SKU", "OfferTermCode", "RateCode"]
    assert EC2_HEADER[-1] == "VPCNetworkingSupport"
    assert {"usageType", "operation", "MarketOption", "Pre Installed S/W"} <= set(EC2_HEADER)


def test_fixture_server_serves_the_site(price_server: FakePriceList) -> None:
    import urllib.request

    url = price_server.base_url + "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
    with urllib.request.urlopen(url, timeout=HANG_GUARD_S) as response:
        index = json.load(response)
    assert index["regions"]["us-west-2"]["currentVersionUrl"].endswith("/index.json")
