"""Issue 26, what the walkthrough at 80x24 under tmux still found: text a narrow screen cut
past reading, a unit not shown, a choice the screen did not follow.

With three targets the estimate bar fell back to names cut to eight cells (``Train…al``,
``GPU b…e)``), while it still spelled out what each target lacked; the Training targets
footer ended in ``^z U``; the side-rate form's unit read ``USD/unit``; the Estimate tab cut
its stage labels; a dropdown in a form drew over the form's border; esc then a key, sent at
once, was read as another key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

import pytest
from rich.console import Console
from textual.widgets import (
    DataTable,
    Footer,
    Input,
    Label,
    OptionList,
    Select,
    Static,
    TabbedContent,
)
from textual.widgets._footer import FooterKey

from tests import MLPERF_DATA, SIZE
from tests.ui_support import open_new_target_form, open_section, settle, type_runs_filter
from trntui.core.format import fit_words, usd
from trntui.core.inventory import TrainingTarget
from trntui.core.manual_quote import manual_quote
from trntui.core.report import Analysis, analyze
from trntui.store.estimate_context import derive_and_store_context
from trntui.store.project import Project
from trntui.ui.app import TrnTuiApp
from trntui.ui.screens.import_runs import ImportRunsScreen
from trntui.ui.screens.item_form import ItemFormScreen
from trntui.ui.screens.scenarios.rendering import EstimateTable
from trntui.ui.widgets.estimate_bar import estimate_line

LONG_NAMES = (
    "Trainium3 trial (1 x trn3.48xlarge)",
    "GPU baseline (1 x p5.48xlarge)",
    "GPU B200 (1 x p6-b200.48xlarge)",
)


def labels_on_the_bar(text: str) -> list[str]:
    """Each target's label: what stands before its total or its "incomplete"."""
    labels = []
    for line in text.splitlines():
        for part in line.split(" · "):
            for mark in (" incomplete", " $"):
                if mark in part:
                    labels.append(part.split(mark)[0])
                    break
    return labels


def whole_words(label: str, name: str) -> bool:
    """``label`` is ``name``, or its first words and/or last words around one ``…``."""
    if label == name:
        return True
    head, _, tail = label.partition("…")
    words = name.split(" ")
    heads = {" ".join(words[:i]) for i in range(len(words))}
    tails = {" ".join(words[i:]) for i in range(1, len(words) + 1)} | {""}
    return head.rstrip() in heads and tail.lstrip() in tails


def three_targets(
    project: Project, names: tuple[str, str, str], third_type: str = "p6-b200.48xlarge"
) -> Analysis:
    """The sample's analysis with a third target measured by the GPU set: a p6-b200.48xlarge
    (no quote: incomplete) unless ``third_type`` says another."""
    inventory = project.inventory
    trn, gpu = inventory.targets
    third = dataclasses.replace(gpu, instance_type=third_type)
    targets = tuple(
        dataclasses.replace(target, name=name)
        for target, name in zip((trn, gpu, third), names, strict=True)
    )
    inventory = dataclasses.replace(inventory, targets=targets)
    return analyze(derive_and_store_context(project.root, inventory))


def test_the_bar_keeps_three_long_target_names_readable_at_80_columns(
    sample_project: Project,
) -> None:
    analysis = three_targets(sample_project, LONG_NAMES)
    assert not analysis.estimate.targets[2].complete

    text = estimate_line(
        analysis, problem="a recompute failed", width=78, example=True, lines=3
    ).plain
    assert all(len(line) <= 78 for line in text.splitlines()), text
    labels = labels_on_the_bar(text)
    assert len(labels) == 3 and len(set(labels)) == 3, text
    for label, name in zip(labels, LONG_NAMES, strict=True):
        assert whole_words(label, name), f"{label!r} cuts a word of {name!r}:\n{text}"
        assert len(label) >= 12, f"{label!r}: a readable part of {name!r}:\n{text}"


def test_fit_words_cuts_between_words_keeping_both_ends() -> None:
    assert fit_words("GPU baseline (1 x p5.48xlarge)", 16) == "GPU…p5.48xlarge)"
    assert fit_words("Trainium3 trial (1 x trn3.48xlarge)", 16) == "Trainium3 trial…"
    assert fit_words("short", 16) == "short"
    # one long word: cut in the middle as fit_middle does
    assert fit_words("HPE-Cray-XD670-H200-SXM5", 12) == "HPE-Cray…XM5"


@pytest.mark.usefixtures("instant_saves")
async def test_the_footer_of_a_list_section_holds_its_keys_at_80_columns(
    sample_project: Project,
) -> None:
    """Training targets' footer ended in ``^z U`` at 80 columns: scrolled past its width."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for section in ("targets", "risks"):
            await open_section(pilot, section)
            app.screen.query_one(f"#items-{section} DataTable").focus()
            await settle(pilot)
            footer = app.screen.query_one(Footer)
            shown = [key.description for key in footer.query(FooterKey)]
            assert footer.max_scroll_x == 0, (section, shown)
            assert {"Add", "Edit", "Undo", "Quit", "Help"} <= set(shown), shown


@pytest.mark.usefixtures("instant_saves")
async def test_the_side_rate_form_shows_the_unit_of_the_service_rated(
    new_session: Project,
) -> None:
    target = TrainingTarget("GPU", "p5.48xlarge", 1, "us-east-1", "on-demand")
    inventory = dataclasses.replace(new_session.inventory, targets=(target,))
    new_session.save_inventory(inventory)
    app = TrnTuiApp(new_session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        form = app.screen
        assert isinstance(form, ItemFormScreen)
        service = form.query_one("#field-service", Select)
        assert service.value == "s3-standard-storage"

        def unit() -> str:
            return str(form.query_one("#row-usd_per_unit .field-unit", Label).content)

        assert unit() == "USD/GB-month"
        service.value = "inter-az-transfer"
        await settle(pilot)
        assert unit() == "USD/GB each way"
        service.value = "cloudwatch-logs-ingestion"
        await settle(pilot)
        assert unit() == "USD/GB"


@pytest.mark.usefixtures("instant_saves")
async def test_a_price_per_accelerator_hour_is_to_the_cent_like_every_other_total(
    sample_project: Project,
) -> None:
    """$113.93 for 8 B200s read ``$14.2413``/accelerator-h next to ``$6.88`` for p5: the
    rule for a rate a source states (its four decimals) was applied to a quotient."""
    quote = manual_quote(
        instance_type="p6-b200.48xlarge",
        region="us-east-1",
        purchase_option="on-demand",
        usd_per_hour=113.93,
        upfront_usd=0.0,
        retrieved_at=dt.datetime(2026, 11, 20, tzinfo=dt.UTC),
        source_note="AWS pricing page",
    )
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.session.add_quote(quote, label="test") is None
        await pilot.press("3")
        await settle(pilot)
        table = app.screen.query_one("#quotes", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        row = next(row for row in rows if row[0] == "p6-b200.48xlarge")
        assert "$113.93" in row and "$14.24" in row, row


@pytest.mark.usefixtures("instant_saves")
async def test_the_runs_table_shows_the_set_just_imported(
    sample_project: Project, tmp_path
) -> None:
    """After an import the table stayed on its first set (the sample's GPU runs): the set
    just imported, last in the table's order, was off screen."""
    log = MLPERF_DATA / "v5.0/NVIDIA/results/nyx_n1_ngc25.04_nemo/llama2_70b_lora/result_4.txt"
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert table.cursor_row == 0
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ImportRunsScreen)
        dialog.query_one("#paths", Input).value = str(log)
        dialog.query_one("#set", Input).value = "zz-new"
        dialog.query_one("#set", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, ImportRunsScreen)
        table = app.screen.query_one("#runs", DataTable)
        assert str(table.get_row_at(table.cursor_row)[0]) == "zz-new"
        assert "zz-new" in str(app.screen.query_one("#set-summary", Static).content)
        # and in view: the set line took a line more for the new set, after the scroll
        rows_shown = table.scrollable_content_region.height - table.header_height
        assert table.scroll_y <= table.cursor_row < table.scroll_y + rows_shown, (
            table.scroll_y,
            table.cursor_row,
            rows_shown,
        )


def test_the_estimate_tab_names_each_stage_whole_and_billed_hours_with_their_unit(
    sample_project: Project,
) -> None:
    """At 80 columns with three targets the stage labels read "Launch, startup and compi…",
    "Training (steady useful w…" and "Billed instance-hours" showed 0.4988 with no unit."""
    names = ("Trainium3", "GPU baseline p5", "GPU p5 reserved")
    analysis = three_targets(sample_project, names, third_type="p5.48xlarge")
    console = Console(width=78, record=True, color_system=None)
    console.print(EstimateTable(analysis.estimate))
    lines = console.export_text().splitlines()
    assert not [line for line in lines if "…" in line], "\n".join(lines)
    billed = next(line for line in lines if line.strip().startswith("Billed instance-hours"))
    hours = [target.instance_hours for target in analysis.estimate.targets]
    assert all(h is not None for h in hours)
    assert re.findall(r"(\S+) h\b", billed) == [f"{h:,.4g}" for h in hours], billed


@pytest.mark.usefixtures("instant_saves")
async def test_a_dropdown_stays_inside_a_new_target_form_that_shows_errors(
    sample_project: Project,
) -> None:
    """A new target's form, tabbed through (two "is required" lines under its fields): the
    purchase option list drew over the form's bottom border."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        form = await open_new_target_form(pilot)
        await pilot.press("tab", "tab", "tab", "tab", "tab")
        await settle(pilot)
        box = form.query_one("ItemFormScreen > Vertical").region
        for select in form.query(Select):
            select.focus()
            await pilot.press("enter")
            await settle(pilot)
            overlay = select.query_one(OptionList)
            assert overlay.display and overlay.has_focus
            inside = box.shrink((1, 1, 1, 1))
            assert inside.contains_region(overlay.region), (select.id, overlay.region, box)
            await pilot.press("escape")
            await settle(pilot)


async def test_esc_then_a_digit_sent_at_once_by_the_terminal_switches_screens(
    sample_project: Project,
) -> None:
    """tmux (escape-time) and SSH send esc and the key typed right after it as one sequence,
    ``ESC 2``. Textual read that as the macOS Option character ``™`` and typed it into the
    field; the alt+2 binding never fired from a terminal. Here the bytes go through the
    parser the app's driver uses."""
    from textual._xterm_parser import XTermParser

    from trntui.ui.driver import read_escape_then_key_as_alt

    read_escape_then_key_as_alt()
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await open_section(pilot, "model")
        field = app.focused
        assert isinstance(field, Input)
        before = field.value
        parser = XTermParser()
        keys = [*parser.feed("\x1b2"), *parser.feed("")]
        assert [key.key for key in keys] == ["alt+2"]
        for key in keys:
            app.post_message(key)
        await settle(pilot)
        assert app.current_mode == "runs"
        assert field.value == before, "nothing typed into the field left"


async def test_esc_then_a_sign_sent_at_once_by_the_terminal_is_esc_then_the_sign(
    sample_project: Project,
) -> None:
    """``ESC ?`` (esc to leave the Runs filter, then ? for Help, sent as one sequence) read as
    ``?`` alone: the esc was lost and the ? typed into the filter. The bytes go through the
    parser the app's driver uses, as the app makes it read them."""
    from textual._xterm_parser import XTermParser

    from trntui.ui.driver import read_escape_then_sign
    from trntui.ui.screens.help import HelpScreen

    read_escape_then_sign()

    def read(sequence: str) -> list[str]:
        parser = XTermParser()
        return [key.key for key in [*parser.feed(sequence), *parser.feed("")]]

    assert read("\x1b/") == ["escape", "slash"]
    assert read("\x1b ") == ["escape", "space"]
    assert read("\x1b[A") == ["up"], "an arrow key's sequence is still one key"
    assert read("\x1b[") == ["left_square_bracket"], "ESC [ begins the terminal's sequences"
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        field = await type_runs_filter(pilot, "trn3")
        parser = XTermParser()
        for key in [*parser.feed("\x1b?"), *parser.feed("")]:
            app.post_message(key)
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert field.value == "trn3", "nothing typed into the filter"


def test_a_paste_holding_an_escape_sequence_arrives_whole_and_in_order() -> None:
    """Text copied from a coloured terminal (``E ESC [31m F``, then a bell, a tab and a
    control) reached the field as ``^[31mFE``, its tab moving the focus on: Textual's parser
    took what followed the ``ESC`` out of the paste and sent it as keys, ahead of the paste.
    Now the paste is one Paste event, in order, without the ``ESC``, however the terminal's
    bytes are cut into reads; an esc key and an arrow key around it read as before."""
    from textual import events
    from textual._xterm_parser import XTermParser

    from trntui.ui.driver import keep_pastes_whole

    keep_pastes_whole()
    body = "E\x1b[31mRED\x07bell\ttab\x01ctl"
    sent = "\x1b[A" + "\x1b[200~" + body + "\x1b[201~" + "\x1b[B"
    for cut in range(len(sent) + 1):
        for second in range(cut, len(sent) + 1):
            parser = XTermParser()
            pieces = [sent[:cut], sent[cut:second], sent[second:]]
            got = [e for piece in pieces if piece for e in parser.feed(piece)]
            got += list(parser.feed(""))
            where = f"cut at {cut} and {second}"
            keys = [e.key for e in got if isinstance(e, events.Key)]
            pastes = [e.text for e in got if isinstance(e, events.Paste)]
            assert keys == ["up", "down"], where
            assert pastes == [body.replace("\x1b", "")], where
    parser = XTermParser()
    alone = [*parser.feed("\x1b"), *parser.feed("")]
    assert [e.key for e in alone if isinstance(e, events.Key)] == ["escape"]


def test_a_terminal_sequence_split_by_a_slow_link_reads_no_esc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mouse report (or an arrow key) that arrives in two parts, the first ending past the
    parser's wait for the rest (a slow SSH link), is read key by key, as Textual reads it:
    never with an esc first, which would close the form the mouse moved over."""
    import textual.constants
    from textual._xterm_parser import XTermParser

    from trntui.ui.driver import read_escape_then_sign

    read_escape_then_sign()
    monkeypatch.setattr(textual.constants, "ESCAPE_DELAY", 0.0)  # the wait is over at tick()
    parser = XTermParser()
    keys = [*parser.feed("\x1b[<35;1"), *parser.tick(), *parser.feed("0;5M"), *parser.feed("")]
    names = [key.key for key in keys]
    assert names[0] == "left_square_bracket" and "escape" not in names, names


async def test_esc_then_a_letter_arriving_as_alt_letter_is_esc_then_the_letter(
    sample_project: Project,
) -> None:
    """Esc (cancel a new target's form) then ``a`` (add one) arrived as alt+a: the ``a`` was
    typed into the form's Name field and the form stayed open."""
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        first = await open_new_target_form(pilot)
        await pilot.press("alt+a")
        await settle(pilot)
        assert isinstance(app.screen, ItemFormScreen) and app.screen is not first
        assert app.screen.query_one("#field-name", Input).value == ""


def screen_lines(app: TrnTuiApp) -> list[str]:
    """The screen as a person sees it, line by line."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def test_a_200_character_target_name_leaves_the_figures_on_screen(
    sample_project: Project,
) -> None:
    """A target named with 200 characters: the Estimate tab's column header wrapped into 16
    lines of the name and no figure showed without scrolling; the Sensitivity tab's title took
    four lines, the Trn3 vs GPU tab's "Not compared here" three. Each now shows the name cut
    between words; the Estimate tab writes it in full under the table, and the status line
    when ``t`` picks it."""
    long_name = ("Very long target name number " * 8)[:200].strip()
    inventory = sample_project.inventory
    long_target = dataclasses.replace(inventory.targets[1], name=long_name)
    sample_project.save_inventory(
        dataclasses.replace(inventory, targets=(*inventory.targets, long_target))
    )
    app = TrnTuiApp(sample_project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        shown = screen_lines(app)
        analysis = app.session.analysis
        assert analysis is not None
        target = next(t for t in analysis.estimate.targets if t.name == long_name)
        time_row = [line for line in shown if line.strip().startswith("Instance time")]
        assert time_row, "\n".join(shown)
        assert time_row[0].rstrip().endswith(usd(target.term("instance_usd"))), time_row
        table = app.screen.query_one("#estimate-table", Static)
        console = Console(width=table.content_region.width, record=True, color_system=None)
        console.print(table.content)
        whole = " ".join(console.export_text().split())
        assert long_name in whole, "written in full under the table"

        tabs = app.screen.query_one(TabbedContent)
        tabs.active = "sensitivity"
        await settle(pilot)
        await pilot.press("t", "t")
        await settle(pilot)
        title = app.screen.query_one("#sens-title", Static)
        assert title.size.height <= 2, str(title.render())
        assert long_name in " ".join(app.session.signals.status.value[0].split())

        tabs.active = "compare"
        await settle(pilot)
        body = str(app.screen.query_one("#compare-body", Static).render())
        left_out = next(line for line in body.splitlines() if "Not compared here" in line)
        assert long_name not in left_out and "…" in left_out, left_out
