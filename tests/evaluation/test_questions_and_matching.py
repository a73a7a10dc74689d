"""The evaluation question format and the gold/keyword matching rules."""

from __future__ import annotations

import json

from bot.evaluation.matching import Paragraph, found_gold, keywords_present, normalise
from bot.evaluation.questions import EvalQuestion, Gold, parse_lines, parse_question


def _line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


def test_lines_parse_with_defaults_and_unknown_fields_ignored() -> None:
    """Gold objects (or plain strings), turns and keywords are read; expect_notice defaults to 'no gold'."""
    parsed = parse_lines(
        [
            _line(
                id="a",
                type="single",
                question="年假几天?",
                gold=[{"must_contain": "10 天", "file": "年假.md"}],
            ),
            _line(id="b", type="absent", question="团建预算?", extra="ignored"),
            _line(id="c", type="followup", question="那病假呢?", turns=["年假几天?"], gold=["12 天"]),
        ]
    )
    assert parsed.bad_lines == []
    first, absent, follow_up = parsed.questions
    assert first.gold == (Gold("10 天", "年假.md"),) and first.expect_notice is False
    assert absent.gold == () and absent.expect_notice is True
    assert follow_up.turns == ("年假几天?",) and follow_up.gold == (Gold("12 天"),)


def test_bad_lines_are_reported_with_their_number_and_skipped() -> None:
    """Invalid JSON, a missing question, bad gold and a repeated id each name their line; good lines stay."""
    parsed = parse_lines(
        [
            _line(id="ok", question="q"),
            "{not json",
            "",
            _line(id="x"),
            _line(id="y", question="q", gold=[{"file": "no string"}]),
            _line(id="ok", question="again"),
            _line(id="z", question="q", expect_notice="yes"),
        ]
    )
    assert [q.id for q in parsed.questions] == ["ok"]
    assert [(bad.line, bad.reason.split(" ")[0]) for bad in parsed.bad_lines] == [
        (2, "not"),
        (4, "`question`"),
        (5, "gold"),
        (6, "duplicate"),
        (7, "`expect_notice`"),
    ]


def test_numbers_match_whether_written_in_chinese_numerals_or_digits() -> None:
    """六十日 in the gold matches 60日 in the text and the other way round; whitespace and width are ignored."""
    assert normalise("六十日") == normalise("60日")
    assert keywords_present("应当自知道之日起 60 日内提出", ["六十日", "九十日"]) == [True, False]
    assert normalise("ＡＢＣ  def") == "abcdef"


def test_a_gold_string_matches_the_paragraph_it_was_copied_from_whatever_numerals_surround_it() -> None:
    """拾得人 is a word, not "10得人": the gold string and the paragraph holding it are normalised alike,
    numerals elsewhere in the paragraph (第三百一十七条) or not."""
    paragraph = Paragraph(
        "1",
        "物权编",
        "第三百一十六条 拾得人应当妥善保管遗失物。\n\n第三百一十七条 权利人领取遗失物时，"
        "应当向拾得人或者有关部门支付保管遗失物等支出的必要费用。",
    )
    assert found_gold(
        [Gold("应当向拾得人或者有关部门支付保管遗失物等支出的必要费用", file="物权编.md")], [paragraph]
    ) == [True]
    assert found_gold([Gold("第317条 权利人领取遗失物时")], [paragraph]) == [True]


def test_gold_with_a_file_matches_only_that_document() -> None:
    """The same sentence in another version of a law does not count when the gold names the file."""
    gold = [Gold("六十日内提出行政复议申请", file="行政复议法(2023-09-01).md")]
    old = Paragraph("1", "行政复议法(2017-09-01)", "可以自知道之日起六十日内提出行政复议申请")
    new = Paragraph("2", "行政复议法(2023-09-01)", "可以自知道之日起六十日内提出行政复议申请")
    assert found_gold(gold, [old]) == [False]
    assert found_gold(gold, [old, new]) == [True]
    assert found_gold([Gold("不存在的句子")], [old, new]) == [False]


def test_numerals_cn2an_cannot_read_are_kept_without_a_warning() -> None:
    """A lone 千 makes cn2an warn; the eval output stays clean and the text is kept as written."""
    import warnings

    from bot.evaluation.matching import normalise

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert normalise("预算 千 元") == "预算千元"


def test_a_question_written_as_json_reads_back_as_the_same_question() -> None:
    """EvalQuestion.to_json is the line parse_question reads: every field survives the round trip."""
    question = EvalQuestion(
        id="feedback-7",
        type="feedback_up",
        question="那病假呢?",
        gold=(Gold("病假需提供医院证明", file="病假与其他假期.md"), Gold("第二十一条", article="第21条")),
        turns=("年假有几天?",),
        answer_keywords=("证明",),
        expect_notice=False,
        notes="👍",
    )
    assert parse_question(question.to_json(), line=0) == question
    bare = EvalQuestion(id="q", type="absent", question="停车费?", expect_notice=True)
    assert parse_question(bare.to_json(), line=0) == bare
