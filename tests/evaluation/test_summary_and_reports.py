"""Aggregation of per-question results, the printed table and the self-contained HTML page."""

from __future__ import annotations

from bot.evaluation.html_report import render_html
from bot.evaluation.report import render_missing, render_table
from bot.evaluation.runner import QuestionResult
from bot.evaluation.summary import summarise_all


def _result(**fields: object) -> QuestionResult:
    base: dict[str, object] = {
        "id": "q",
        "type": "single",
        "question": "?",
        "gold": [],
        "expect_notice": False,
    }
    base.update(fields)
    return QuestionResult(**base)  # type: ignore[arg-type]


def test_rates_per_type_and_overall() -> None:
    """Gold shares, all-gold rates, cited-of-final, notice rates, calls and routes are computed per type."""
    results = [
        _result(
            id="1",
            gold=["a", "b"],
            baseline_found=[True, False],
            final_found=[True, True],
            cited_found=[True, False],
            any_round_found=[True, True],
            route="multi",
            escalated=True,
            route_source="rule",
            rounds=2,
            calls={"assess": 2, "answer": 1},
            seconds=1.0,
        ),
        _result(
            id="2", type="absent", expect_notice=True, notice=True, route="single", rounds=1, seconds=3.0
        ),
        _result(id="3", type="absent", expect_notice=True, notice=False, rounds=1, seconds=2.0),
        _result(
            id="4",
            notice=True,
            gold=["c"],
            baseline_found=[True],
            final_found=[True],
            cited_found=[True],
            any_round_found=[True],
            rounds=1,
            seconds=0.5,
        ),
    ]
    single, absent, overall = summarise_all(results)
    assert (single.name, absent.name, overall.name) == ("single", "absent", "all")
    assert (single.baseline.hits, single.baseline.total) == (2, 3)
    assert (single.final.hits, single.final.total) == (3, 3)
    assert (single.cited_of_final.hits, single.cited_of_final.total) == (2, 3)
    assert (single.baseline_all.hits, single.final_all.hits, single.final_all.total) == (1, 2, 2)
    assert (absent.notice_expected.hits, absent.notice_expected.total) == (1, 2)
    assert (single.false_notice.hits, single.false_notice.total) == (1, 2)
    assert single.calls["assess"] == 1.0 and single.routes == {"escalated": 1, "none": 1}
    assert overall.mean_rounds == 1.25 and overall.latency_p95 == 3.0


def test_an_answer_without_notice_or_cited_gold_counts_as_an_unhedged_miss() -> None:
    """Of the answerable questions, those answered with no notice and none of their gold cited are counted
    (the other side of false notices: an answer quoting the wrong paragraphs and not saying so)."""
    results = [
        _result(id="1", gold=["a"], final_found=[True], cited_found=[False], any_round_found=[True]),
        _result(id="2", gold=["a"], final_found=[True], cited_found=[True], any_round_found=[True]),
        _result(
            id="3", gold=["a"], notice=True, final_found=[False], cited_found=[False], any_round_found=[False]
        ),
        _result(id="4", type="absent", expect_notice=True),
    ]
    single = summarise_all(results)[0]
    assert (single.unhedged_miss.hits, single.unhedged_miss.total) == (1, 3)
    assert "no notice, no gold cited" in render_table(summarise_all(results))


def test_table_and_html_show_every_group_and_escape_text() -> None:
    """The table has a column per type; the page is one file with inline SVG and escaped user text."""
    results = [
        _result(
            question="<script>alert(1)</script>",
            gold=["x"],
            baseline_found=[False],
            final_found=[True],
            cited_found=[False],
        ),
        _result(id="2", type="absent", expect_notice=True),
    ]
    groups = summarise_all(results)
    table = render_table(groups)
    assert table.splitlines()[0].split() == ["single", "absent", "all"]
    assert "gold in final evidence" in table and "100% (1/1)" in table
    page = render_html("kb eval", "header", groups, results)
    assert page.startswith("<!doctype html>") and "<svg" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing to fetch


def test_the_parts_judged_missing_are_listed_for_hedged_answerable_questions_only() -> None:
    """A notice where none was expected lists its missing text by type; expected notices and clean answers
    are not listed; a long text is shortened; nothing hedged, nothing printed."""
    results = [
        _result(id="a", notice=True, missing="缺少关于「试用期」的资料"),
        _result(id="b", type="absent", notice=True, expect_notice=True, missing="x"),
        _result(id="c", notice=False),
        _result(id="d", type="multihop", notice=True, missing="y" * 300),
    ]
    text = render_missing(results)
    lines = text.splitlines()
    assert lines[0] == "judged missing where no notice was expected (2 of 4):"
    assert lines[1] == "  single     a: 缺少关于「试用期」的资料"
    assert lines[2].startswith("  multihop   d: yyy") and lines[2].endswith("…") and len(lines) == 3
    assert render_missing([_result(id="c")]) == ""


def test_claim_and_attribution_rows_count_answers_sentences_and_markers() -> None:
    """Answers with an unsupported claim; sentences tied to a paragraph (kept, corrected, added) of those
    looked at; markers corrected or removed of the markers the model wrote; answers with a left-out part
    quoted; the rows are in the table."""
    results = [
        _result(id="1", unsupported=["45 天"], attributions={"kept": 1, "corrected": 1, "none": 2}),
        _result(id="2", attributions={"added": 3, "removed": 1}, left_out=["病假有几天"]),
    ]
    [group] = summarise_all(results)
    assert (group.unsupported.hits, group.unsupported.total) == (1, 2)
    assert (group.attributed.hits, group.attributed.total) == (5, 8)
    assert (group.markers_corrected.hits, group.markers_corrected.total) == (2, 3)
    assert (group.left_out.hits, group.left_out.total) == (1, 2)
    table = render_table([group])
    assert "model sentences tied to a paragraph" in table and "model markers corrected or removed" in table
    assert "answers with left-out parts quoted" in table
