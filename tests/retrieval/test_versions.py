"""Versions of one text: the current one is preferred unless the question names a year, and the answer says which."""

from __future__ import annotations

from core.models import Hit
from core.retrieval.versions import prefer_versions, preferred_versions, version_note, version_of


def _hit(name: str, score: float = 0.9) -> Hit:
    return Hit(
        id=name, content="第二十条 ……", score=score, dataset="laws", document_id=name, document_name=name
    )


HITS = [
    _hit("行政复议法(2017-09-01)", 0.95),
    _hit("行政复议法(2023-09-01)", 0.90),
    _hit("公司法(2018-10-26)"),
    _hit("公司法(2023-12-29).md"),
    _hit("刑法"),
]


def test_dated_document_names_are_read_as_title_and_date() -> None:
    """Dates in parentheses, with or without month and day, are versions; plain names are not."""
    assert version_of("行政复议法(2023-09-01).md") is not None
    assert version_of("行政复议法(2023-09-01).md").label == "2023-09-01"  # type: ignore[union-attr]
    assert version_of("宪法修正案（1988年）").title == "宪法修正案"  # type: ignore[union-attr]
    assert version_of("Handbook (2024)").label == "2024"  # type: ignore[union-attr]
    assert version_of("刑法") is None and version_of("Winner (band)") is None


def test_the_newest_version_is_preferred_unless_the_question_names_a_year() -> None:
    """No year: newest of each title; "2018年修正的公司法": the 2018 text, and only for that law."""
    assert preferred_versions("行政复议的申请期限?", HITS) == {
        "行政复议法": (2023, 9, 1),
        "公司法": (2023, 12, 29),
    }
    assert preferred_versions("按照2018年修正的公司法，需要几个发起人?", HITS) == {
        "行政复议法": (2023, 9, 1),
        "公司法": (2018, 10, 26),
    }
    assert preferred_versions("2026年的预算是多少?", HITS)["公司法"] == (2023, 12, 29)


def test_other_versions_move_behind_every_other_hit_with_their_score_halved() -> None:
    """The superseded text keeps its place in the evidence, after the rest, so citations draw on the current one."""
    ordered = prefer_versions("行政复议的申请期限?", HITS)
    assert [h.id for h in ordered] == [
        "行政复议法(2023-09-01)",
        "公司法(2023-12-29).md",
        "刑法",
        "行政复议法(2017-09-01)",
        "公司法(2018-10-26)",
    ]
    assert ordered[3].score == 0.475
    single = [_hit("行政复议法(2017-09-01)")]
    assert prefer_versions("期限?", single) == single  # one version alone is not demoted


def test_the_note_names_the_cited_version_and_the_others_found() -> None:
    """A citation of a multi-version text gets one line naming it and the other versions; others get none."""
    zh = version_note(["行政复议法(2023-09-01)", "刑法"], HITS, "zh")
    assert zh == "版本说明：引用的是《行政复议法》2023-09-01 版本；资料中另有 2017-09-01 版本。"
    en = version_note(["公司法(2018-10-26)"], HITS, "en")
    assert en == "Version: this cites 公司法 (2018-10-26); the sources also hold the 2023-12-29 version."
    assert version_note(["刑法"], HITS, "zh") == ""


def test_citing_two_versions_of_one_text_gives_one_line_naming_both() -> None:
    """Both versions cited: one line naming them and no other (there is no other); with a third found, it is
    named as the one not cited, never each cited version as "the other"."""
    both = version_note(["公司法(2023-12-29)", "公司法(2018-10-26)"], HITS, "zh")
    assert both == ""
    third = [*HITS, _hit("公司法(2013-12-28)")]
    assert version_note(["公司法(2023-12-29)", "公司法(2018-10-26)"], third, "zh") == (
        "版本说明：引用的是《公司法》2023-12-29、2018-10-26 版本；资料中另有 2013-12-28 版本。"
    )
