"""The inventory model: validation messages a person understands, and the rules of SPEC §1."""

from __future__ import annotations

import datetime as dt

import pytest

from trntui.core.fields import FieldValueError
from trntui.core.inventory import (
    Inventory,
    InventoryInvalid,
    MigrationRisk,
    ModelInfo,
    SideCosts,
    TrainingGoal,
    TrainingTarget,
    parse_value,
)


def test_number_below_range_names_the_unit_and_the_bound() -> None:
    with pytest.raises(FieldValueError) as caught:
        parse_value(SideCosts, "dataset_gb", "-3")
    message = str(caught.value)
    assert "Dataset size" in message
    assert "at least 0 GB" in message
    assert "-3" in message


def test_zero_parameters_is_rejected_because_the_model_must_have_some() -> None:
    with pytest.raises(FieldValueError, match="above 0 billion"):
        parse_value(ModelInfo, "parameters_billion", "0")


def test_text_in_a_number_field_says_what_was_expected() -> None:
    with pytest.raises(FieldValueError, match="'seventy' is not a number"):
        parse_value(ModelInfo, "parameters_billion", "seventy")


def test_whole_number_field_refuses_a_fraction() -> None:
    with pytest.raises(FieldValueError, match="whole number"):
        parse_value(ModelInfo, "sequence_length", "8192.5")


def test_typed_values_are_parsed_with_their_units_stripped_of_separators() -> None:
    assert parse_value(ModelInfo, "sequence_length", "8,192") == 8192
    with pytest.raises(FieldValueError, match="no underscores"):  # one rule: test_numbers.py
        parse_value(ModelInfo, "sequence_length", "8_192")
    assert parse_value(TrainingGoal, "work_amount", "1,000,000") == 1_000_000.0
    assert parse_value(TrainingGoal, "deadline", "2027-01-31") == dt.date(2027, 1, 31)
    assert parse_value(ModelInfo, "operators", "a, b,, c ") == ("a", "b", "c")


def test_choice_is_case_insensitive_but_stored_canonically() -> None:
    assert parse_value(MigrationRisk, "status", "Confirmed") == "confirmed"
    with pytest.raises(FieldValueError, match=r"'to-confirm', 'confirmed', 'resolved'"):
        parse_value(MigrationRisk, "status", "maybe")


def test_bad_date_explains_the_format() -> None:
    with pytest.raises(FieldValueError, match="YYYY-MM-DD"):
        parse_value(TrainingGoal, "deadline", "31/01/2027")


def test_instance_type_and_region_have_their_aws_shape() -> None:
    assert parse_value(TrainingTarget, "instance_type", "p5en.48xlarge") == "p5en.48xlarge"
    with pytest.raises(FieldValueError, match=r"family\.size"):
        parse_value(TrainingTarget, "instance_type", "H100 x8")
    with pytest.raises(FieldValueError, match="region code"):
        parse_value(TrainingTarget, "region", "Virginia")


def test_required_field_cannot_be_emptied() -> None:
    with pytest.raises(FieldValueError, match="required"):
        parse_value(TrainingTarget, "name", "   ")


def test_empty_optional_field_means_unknown_not_zero() -> None:
    assert parse_value(SideCosts, "log_gb", "") is None


@pytest.mark.parametrize(
    ("instance_type", "family"),
    [
        ("trn3.48xlarge", "Trainium3"),
        ("trn2u.48xlarge", "Trainium2"),
        ("trn1n.32xlarge", "Trainium"),
        ("p5.48xlarge", "GPU"),
        ("p6-b200.48xlarge", "GPU"),
        ("c7i.8xlarge", "other"),
    ],
)
def test_accelerator_family_from_instance_type(instance_type: str, family: str) -> None:
    target = TrainingTarget(name="t", instance_type=instance_type)
    assert target.accelerator_family == family


def test_document_problems_are_all_collected_with_their_key_paths() -> None:
    document = {
        "model": {"parameters_billion": "70", "sequence_length": -1},
        "targets": [{"name": "a", "instance_type": "p5.48xlarge", "instance_count": 0}],
        "colour": {},
    }
    with pytest.raises(InventoryInvalid) as caught:
        Inventory.from_dict(document)
    paths = [p.path for p in caught.value.problems]
    assert "model.parameters_billion" in paths
    assert "model.sequence_length" in paths
    assert "targets[0].instance_count" in paths
    assert "colour" in paths


def test_two_targets_with_one_name_are_refused() -> None:
    target = {"name": "same", "instance_type": "p5.48xlarge"}
    with pytest.raises(InventoryInvalid, match="used twice"):
        Inventory.from_dict({"targets": [target, target]})


def test_unknown_key_lists_the_known_ones() -> None:
    with pytest.raises(InventoryInvalid) as caught:
        Inventory.from_dict({"model": {"paramters_billion": 7}})
    assert "unknown key" in str(caught.value)
    assert "parameters_billion" in str(caught.value)


def test_warnings_ask_for_a_trainium3_and_a_gpu_target() -> None:
    notes = Inventory().warnings()
    assert any("Trainium3" in n for n in notes)
    assert any("GPU" in n for n in notes)
    both = Inventory(
        targets=(
            TrainingTarget(name="t", instance_type="trn3.48xlarge"),
            TrainingTarget(name="g", instance_type="p5.48xlarge"),
        ),
        goal=TrainingGoal(work_amount=1.0, work_unit="steps"),
    )
    assert not any("target" in n for n in both.warnings())


def test_risk_effort_stays_in_days_and_never_enters_targets() -> None:
    inventory = Inventory(risks=(MigrationRisk(title="kernel", effort_days=10.0),))
    document = inventory.to_dict()
    assert document["risks"] == [{"title": "kernel", "status": "to-confirm", "effort_days": 10.0}]
    assert "targets" not in document


def test_every_field_label_fits_its_column_in_the_forms() -> None:
    from trntui.core.fields import specs_of
    from trntui.core.inventory import LIST_SECTIONS, SECTIONS
    from trntui.core.manual_quote import ManualQuoteEntry
    from trntui.ui.widgets.field_form import LABEL_WIDTH

    too_long = [
        (cls.__name__, spec.label)
        for cls in (*SECTIONS.values(), *LIST_SECTIONS.values(), ManualQuoteEntry)
        for spec in specs_of(cls).values()
        if len(spec.label + (" *" if spec.required else "")) > LABEL_WIDTH - 1
    ]
    assert too_long == []


def test_every_inventory_placeholder_reads_as_an_example_not_a_value() -> None:
    """A grey ``trn3.48xlarge`` in an empty required field read as filled in, and the form
    then said "Instance type is required" (the walkthrough, issue 26): an example says so."""
    from trntui.core.inventory import LIST_SECTIONS, SECTIONS, specs_of

    placeholders = {
        f"{cls.TITLE} > {spec.label}": spec.placeholder
        for cls in [*SECTIONS.values(), *LIST_SECTIONS.values()]
        for spec in specs_of(cls).values()
        if spec.placeholder
    }
    assert "Training target > Instance type" in placeholders
    assert {
        label: text for label, text in placeholders.items() if not text.startswith("e.g. ")
    } == {}
