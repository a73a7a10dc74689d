"""The extractive assessor on multi-hop questions: bridges, comparisons and compound parts, through the Engine."""

from __future__ import annotations

import pytest

from adapters.extractive import ExtractiveEngine
from adapters.extractive.judging.assess import DEFAULT_COVERAGE_THRESHOLD, judge_parts
from adapters.extractive.question.salience import part_terms
from core.text import normalize_query
from tests.extractive.helpers import hit, ticks_during

KISS_QUESTION = (
    "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"
)
KISS = hit(
    1,
    "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as Corliss Archer. "
    "In the film, two teenage girls cause their parents much concern.",
    "Kiss and Tell (1945 film)",
)
TREASURER = hit(
    2,
    "The Lord High Treasurer was a government position held by a woman only once; the post was later put "
    "into commission.",
    "Lord High Treasurer",
)
TEMPLE = hit(
    3,
    "Shirley Temple Black was an American actress and diplomat. As an adult, she served as Chief of Protocol "
    "of the United States.",
    "Shirley Temple",
)
MAGAZINES = "Which magazine was started first, Arthur's Magazine or First for Women?"
ARTHURS = hit(
    1,
    "Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia.",
    "Arthur's Magazine",
)
FIRST_FOR_WOMEN = hit(
    2,
    "First for Women is a woman's magazine published in the USA. It was started in 1989.",
    "First for Women",
)
engine = ExtractiveEngine()


async def test_words_scattered_over_a_distractor_do_not_cover_a_bridge_question() -> None:
    """The film paragraph plus a paragraph that merely shares the question's words is not enough evidence."""
    verdict, _ = await engine.assess(KISS_QUESTION, [KISS, TREASURER], [KISS_QUESTION])
    assert not verdict.sufficient
    assert verdict.queries == ("Shirley Temple government position held woman portrayed",)
    assert 'look up "Shirley Temple" next' in verdict.missing


async def test_the_paragraph_about_the_bridge_entity_completes_the_question() -> None:
    """Once the paragraph about the woman the film names arrives, the question is covered."""
    searched = [KISS_QUESTION, "Shirley Temple government position held woman portrayed"]
    verdict, _ = await engine.assess(KISS_QUESTION, [KISS, TREASURER, TEMPLE], searched)
    assert (verdict.sufficient, verdict.missing, verdict.queries) == (True, "", ())


async def test_a_bridge_shaped_question_needs_the_hop_even_when_one_paragraph_has_every_word() -> None:
    """'A university that is located in what city': the professor's paragraph alone never answers it."""
    question = "Ralph Hefferline was a psychology professor at a university that is located in what city?"
    professor = hit(
        1,
        "Ralph Hefferline was a psychology professor at Columbia University, located in the city he loved.",
        "Ralph Hefferline",
    )
    verdict, _ = await engine.assess(question, [professor], [question])
    assert not verdict.sufficient
    assert verdict.queries[0] == "Columbia University city"
    university = hit(
        2, "Columbia University is a research university in New York City.", "Columbia University"
    )
    final, _ = await engine.assess(question, [professor, university], [question, *verdict.queries])
    assert final.sufficient


async def test_a_handbook_bridge_looks_up_the_team_the_first_document_names() -> None:
    """'The team that runs the VPN' -> the IT page names the team; the team's own page answers the floor."""
    question = "Which floor is the office of the team that runs the VPN on?"
    it_page = hit(
        1, "The VPN is run by the Infrastructure Team. Requests go through the IT portal.", "it-accounts.md"
    )
    verdict, _ = await engine.assess(question, [it_page], [question])
    assert not verdict.sufficient
    assert verdict.queries[0] == "Infrastructure Team floor office"
    team_page = hit(
        2, "The Infrastructure Team sits on floor 7 of the north building.", "infrastructure-team.md"
    )
    final, _ = await engine.assess(question, [it_page, team_page], [question, *verdict.queries])
    assert final.sufficient


async def test_a_searched_bridge_query_is_not_proposed_again() -> None:
    """A hop already searched (differently spaced and punctuated) is replaced by another query."""
    searched = [KISS_QUESTION, "shirley temple: held woman, portrayed government-position!"]
    verdict, _ = await engine.assess(KISS_QUESTION, [KISS, TREASURER], searched)
    assert not verdict.sufficient
    assert verdict.queries
    assert all(normalize_query(q) not in {normalize_query(s) for s in searched} for q in verdict.queries)


async def test_each_compared_entity_needs_its_own_paragraph() -> None:
    """With only one magazine's paragraph, the gap and the one next query are about the other magazine."""
    verdict, _ = await engine.assess(MAGAZINES, [ARTHURS], [MAGAZINES])
    assert not verdict.sufficient
    assert verdict.missing == 'no evidence yet for "Which magazine was started first, First for Women"'
    assert verdict.queries == ("Which magazine was started first, First for Women",)
    both, _ = await engine.assess(MAGAZINES, [ARTHURS, FIRST_FOR_WOMEN], [MAGAZINES, *verdict.queries])
    assert both.sufficient


async def test_a_name_run_together_with_a_demonym_is_read_up_to_its_title() -> None:
    """ "Dara Quill Irish" in the question is Dara Quill's page plus a property: her own page, saying she
    is Welsh, answers the part; without the title cut the part named a thing no paragraph holds."""
    question = "Are both Tomas Brennick and Dara Quill Irish?"
    brennick = hit(
        1,
        "Tomas Brennick (born 1950) is an Irish painter and printmaker.",
        "Tomas Brennick-1a2b3c",
        "Tomas Brennick",
    )
    quill = hit(
        2,
        "Dara Quill (born 1961) is a Welsh sculptor known for slate carvings.",
        "Dara Quill-4d5e6f",
        "Dara Quill",
    )
    verdict, _ = await engine.assess(question, [brennick, quill], [question])
    assert verdict.sufficient
    alone, _ = await engine.assess(question, [brennick], [question])
    assert not alone.sufficient


async def test_a_title_typed_with_one_slip_is_read_as_the_evidence_title() -> None:
    """ "Withing the Quiet Hours" is the page "Within the Quiet Hours" typed with one letter too many: judged
    as if spelt right, the part lacks nothing (no notice); without that song's page it names a missing thing."""
    typed = 'Which English musician is known for both the songs "Morning Harbour Lights" and "Withing the Quiet Hours"?'
    spelt = typed.replace("Withing", "Within")
    harbour = hit(
        1,
        '"Morning Harbour Lights" is a song by English musician Tobias Wren, released on his 1979 album.',
        "Morning Harbour Lights-1c1c1c",
        "Morning Harbour Lights",
    )
    quiet = hit(
        2,
        '"Within the Quiet Hours" is a song written by Tobias Wren and released in 1968.',
        "Within the Quiet Hours-2d2d2d",
        "Within the Quiet Hours",
    )
    verdict, _ = await engine.assess(typed, [harbour, quiet], [typed])
    right, _ = await engine.assess(spelt, [harbour, quiet], [spelt])
    assert (verdict.sufficient, verdict.partial) == (right.sufficient, right.partial)
    assert verdict.sufficient or verdict.partial
    alone, _ = await engine.assess(typed, [harbour], [typed])
    assert not alone.sufficient and not alone.partial


def test_a_question_opening_with_a_command_or_a_participle_does_not_name_that_word() -> None:
    """ "Name …", "Considered …, which …", "Located in Paris, …": the first word is no entity the evidence must
    hold (the name after it still is); a name opening a question stays one ("Alfred directed …")."""
    assert part_terms("Name two novels by Oren Salt that were released before 1990").entities == (
        "Oren Salt",
        "1990",
    )
    considered = "Considered the oldest lighthouse on the coast, which lighthouse was rebuilt in 1890"
    assert "Considered" not in part_terms(considered).entities
    assert part_terms("Located in Paris, which museum holds the Mona Lisa").entities == ("Paris", "Mona Lisa")
    assert part_terms("Alfred directed which film").entities == ("Alfred",)


async def test_an_ordinal_in_the_question_is_found_as_that_ordinal_in_the_evidence() -> None:
    """ "the 41st annual regatta" names the number 41, which the paragraph writes as "41st" too: found, no
    notice; "141st" is not it (that paragraph alone still lacks it)."""
    question = "Which town hosted the 41st annual regatta on Lake Varna?"
    host = hit(
        1, "The 41st annual regatta on Lake Varna was hosted by Dunmore.", "Lake Varna-5e5e5e", "Lake Varna"
    )
    other = hit(2, "The 141st annual regatta on Lake Varna drew 40 boats.", "Lake Varna-6f6f6f", "Lake Varna")
    verdict, _ = await engine.assess(question, [host], [question])
    assert verdict.sufficient
    without, _ = await engine.assess(question, [other], [question])
    assert not without.sufficient


async def test_a_bridge_part_asking_a_year_held_whole_by_one_paragraph_stating_it_gets_no_notice() -> None:
    """The club's page holds every word of "…one of the Coastal League's original six charter clubs when the
    league was established in what year" and states 1921: the hop the part's shape implies is unverified, but
    nothing is missing (no notice); the same page without the year still lacks the asked year (notice)."""
    question = (
        "Tomas Brennick spent six seasons with a club based in Dunmore, and was one of the Coastal League's "
        "original six charter clubs when the league was established in what year?"
    )
    player = hit(
        1,
        "Tomas Brennick (born 1950) is an Irish footballer who spent six seasons with Dunmore Rovers, a club "
        "based in Dunmore.",
        "Tomas Brennick-1a1a1a",
        "Tomas Brennick",
    )
    page = (
        "Dunmore Rovers is a football club based in Dunmore. It was one of the Coastal League's original six "
        "charter clubs when the league was established"
    )
    stating = hit(2, f"{page} in 1921.", "Dunmore Rovers-2b2b2b", "Dunmore Rovers")
    silent = hit(2, f"{page}.", "Dunmore Rovers-2b2b2b", "Dunmore Rovers")
    verdict, _ = await engine.assess(question, [player, stating], [question])
    assert verdict.sufficient or verdict.partial
    without, _ = await engine.assess(question, [player, silent], [question])
    assert not without.sufficient and not without.partial


async def test_an_opening_word_run_into_a_name_is_cut_at_the_title() -> None:
    """ "Between Ilse Marna Vock" holds the title "Ilse Marna Vock" and no paragraph holds the whole run."""
    question = "Between Ilse Marna Vock and Oren Salt, which filmmaker worked in more jobs?"
    vock = hit(
        1,
        "Ilse Marna Vock is a German director, producer and editor of film.",
        "Ilse Marna Vock-0a0a0a",
        "Ilse Marna Vock",
    )
    salt = hit(2, "Oren Salt is an American filmmaker and screenwriter.", "Oren Salt-0b0b0b", "Oren Salt")
    verdict, _ = await engine.assess(question, [vock, salt], [question])
    assert verdict.sufficient


async def test_uncovered_compared_entities_get_one_query_each() -> None:
    """Neither magazine found: two queries, one per compared entity."""
    unrelated = hit(5, "A list of periodicals sold at the station kiosk.", "Kiosk")
    verdict, _ = await engine.assess(MAGAZINES, [unrelated], [MAGAZINES])
    assert not verdict.sufficient
    assert verdict.queries == (
        "Which magazine was started first, Arthur's Magazine",
        "Which magazine was started first, First for Women",
    )


async def test_a_compared_entity_mentioned_in_passing_is_not_supported() -> None:
    """The director's paragraph names Ed Wood as an influence: Ed Wood still needs a paragraph of his own."""
    question = "Were Scott Derrickson and Ed Wood of the same nationality?"
    derrickson = hit(
        1,
        "Scott Derrickson is an American director and producer. He has cited Ed Wood among his influences.",
        "Scott Derrickson",
    )
    verdict, _ = await engine.assess(question, [derrickson], [question])
    assert not verdict.sufficient
    assert verdict.queries == ("Were Ed Wood of the same nationality",)
    wood = hit(2, "Edward Davis Wood Jr., known as Ed Wood, was an American filmmaker.", "Ed Wood")
    final, _ = await engine.assess(question, [derrickson, wood], [question, *verdict.queries])
    assert final.sufficient


async def test_chinese_distributed_question_asks_for_the_missing_entity_only() -> None:
    """年假和病假分别有几天 with only the annual-leave rule found: the gap and the query are 病假有几天."""
    question = "年假和病假分别有几天？"
    leave = hit(1, "工龄满 1 年不满 5 年：每年 10 天年假。", "年假制度.md", "年假天数")
    verdict, _ = await engine.assess(question, [leave], [question])
    assert (verdict.sufficient, verdict.missing, verdict.queries) == (
        False,
        "缺少关于「病假有几天」的资料",
        ("病假有几天",),
    )
    sick = hit(2, "员工每年享有 12 天带薪病假。", "病假与其他假期.md", "病假")
    final, _ = await engine.assess(question, [leave, sick], [question, "病假有几天"])
    assert final.sufficient


async def test_a_quantity_under_a_sibling_section_does_not_answer_the_part() -> None:
    """病假有几天 is not answered by "每次不超过 3 天" under 病假与其他假期 > 事假: the document's name holds the word,
    the paragraph's own section is another leave; with the 病假 section found, only it is quoted for the part."""
    question = "年假和病假分别有几天？"
    leave = hit(1, "工龄满 1 年不满 5 年：每年 10 天年假。", "年假制度", "年假制度 > 年假天数")
    personal = hit(2, "事假为无薪假，每次不超过 3 天。", "病假与其他假期", "病假与其他假期 > 事假")
    verdict, _ = await engine.assess(question, [leave, personal], [question])
    assert (verdict.sufficient, verdict.queries) == (False, ("病假有几天",))
    sick = hit(3, "员工每年享有 12 天带薪病假。", "病假与其他假期", "病假与其他假期 > 病假")
    final, _ = await engine.assess(question, [leave, personal, sick], [question, "病假有几天"])
    assert final.sufficient
    [_, sick_part] = judge_parts(question, [leave, personal, sick], threshold=DEFAULT_COVERAGE_THRESHOLD)
    assert sick_part.covered and sick_part.paragraphs == (2,)


async def test_one_table_covering_both_compared_cities_is_enough() -> None:
    """北京和上海的住宿标准: one paragraph that states both cities' standards supports each of them."""
    question = "北京和上海的住宿标准哪个更高？"
    table = hit(
        1, "出差住宿标准：北京每晚 600 元，上海每晚 650 元，其他城市每晚 400 元。", "差旅.md", "住宿标准"
    )
    verdict, _ = await engine.assess(question, [table], [question])
    assert verdict.sufficient


async def test_chinese_compound_question_is_split_across_documents() -> None:
    """年假 found, 报销期限 not: the second part alone becomes the next query; both found is sufficient."""
    question = "年假有几天，以及报销的截止期限是多久？"
    leave = hit(1, "工龄满 1 年不满 5 年：每年 10 天年假。", "年假制度.md", "年假天数")
    expenses = hit(2, "所有费用必须在费用发生之日起 30 天内提交报销单，这是报销的截止期限。", "费用报销.md")
    first, _ = await engine.assess(question, [leave], [question])
    assert first.queries == ("报销的截止期限是多久",)
    second, _ = await engine.assess(question, [leave, expenses], [question, *first.queries])
    assert second.sufficient


async def test_assessing_many_paragraphs_leaves_the_event_loop_free() -> None:
    """Entity extraction and matching run in a worker thread: a 1 ms ticker keeps ticking meanwhile."""
    evidence = [
        hit(
            i, f"{KISS.content} {TEMPLE.content} Paragraph {i} names Person Number{i} of Town{i}.", f"Doc {i}"
        )
        for i in range(1000)
    ]
    await engine.assess(KISS_QUESTION, evidence[:2], [])  # jieba's dictionary loads once, outside the timing
    ticks, seconds = await ticks_during(lambda: engine.assess(KISS_QUESTION, evidence, [KISS_QUESTION]))
    assert seconds > 0.02  # enough work that blocking the loop would show
    assert ticks >= 3


async def test_a_word_capitalised_by_a_list_item_or_table_cell_is_never_looked_up() -> None:
    """ "* Other parking: …" and "| Other |" do not make "Other" a name: the next query is the named team
    plus the question's words in the question's order, never a lone stop word."""
    question = "Which cars does the parking policy allow for the infrastructure team?"
    policy = hit(
        1,
        "Parking rules.\n* Other parking: vans need approval from Facilities.\n\n| Group | Rule |\n| Other | none |",
        "parking-policy.md",
    )
    verdict, _ = await engine.assess(question, [policy], [question])
    assert not verdict.sufficient
    assert verdict.queries[0] == "Facilities cars allow infrastructure team"
    assert all("Other" not in query for query in verdict.queries)
    assert '"Other"' not in verdict.missing


async def test_the_anchor_and_the_paragraph_about_a_name_both_it_and_the_question_give_completes_a_part() -> (
    None
):
    """The question names the hall; the choir's paragraph names it too, and the hall's own paragraph says
    when it was built: the two together answer it, no notice and nothing more to look up."""
    question = "The Harbor Lights choir, led by conductor Mara Voss, performs at Westbridge Hall, which was built in what year?"
    choir = hit(
        1,
        "The Harbor Lights choir is an amateur choir led by conductor Mara Voss. "
        "It gives its winter concerts at Westbridge Hall.",
        "Harbor Lights choir",
    )
    hall = hit(
        2, "Westbridge Hall is a concert venue in Portsmouth. It was built in 1889.", "Westbridge Hall"
    )
    verdict, _ = await engine.assess(question, [choir, hall], [question])
    assert verdict.sufficient, verdict.missing
    alone, _ = await engine.assess(question, [choir], [question])
    assert not alone.sufficient


@pytest.mark.parametrize(("name", "heading"), [("Ada Quill", ""), ("Ada Quill-1a2b3c", "Ada Quill")])
def test_the_page_of_a_thing_the_question_names_and_the_anchor_names_back_completes_a_bridge(
    name: str, heading: str
) -> None:
    """ "The author of Moonfall Letters attended which university?": the writer's page says where she studied
    and names the book; the book's page names the writer. The two pages name each other: that is the hop,
    though the book's page adds no word of the part. A file name with a suffix ("Ada Quill-1a2b3c") is read
    by the document's own title (its first heading)."""
    question = "The author of Moonfall Letters attended which British university?"
    writer = hit(
        1,
        "Ada Quill (born 1931) is an American writer. She attended Somerville College, Oxford, and wrote "
        "Moonfall Letters in 1970.",
        name,
        heading,
    )
    book = hit(
        2, "Moonfall Letters is a 1970 book by Ada Quill, based on her doctoral thesis.", "Moonfall Letters"
    )
    assert [s.covered for s in judge_parts(question, [writer], threshold=DEFAULT_COVERAGE_THRESHOLD)] == [
        False
    ]
    [support] = judge_parts(question, [writer, book], threshold=DEFAULT_COVERAGE_THRESHOLD)
    assert support.covered and support.hop == 1


def test_the_page_of_a_name_the_anchor_ranks_third_completes_a_bridge_when_it_adds_the_missing_words() -> (
    None
):
    """The pianist's page names three singers; only the third one's page is in the evidence, and it says who
    was born in July: that page completes the part, though its name is not among the anchor's top two."""
    question = "Tom Reed has worked with which gospel singer born in the month of July?"
    anchor = hit(
        1,
        "Tom Reed is an American pianist and arranger. He has worked with gospel singers Ann Lake, Bo Fry and "
        "Cy Moss.",
        "Tom Reed",
    )
    singer = hit(2, "Cy Moss (born July 4, 1950) is an American gospel singer.", "Cy Moss")
    [alone] = judge_parts(question, [anchor], threshold=DEFAULT_COVERAGE_THRESHOLD)
    assert not alone.covered and [c.name for c in alone.candidates][:3] == ["Ann Lake", "Bo Fry", "Cy Moss"]
    [support] = judge_parts(question, [anchor, singer], threshold=DEFAULT_COVERAGE_THRESHOLD)
    assert support.covered and support.hop == 1


GAME_QUESTION = "What is the name of the adventure for Moon Quest, a game designed by Ada Brook?"
GAME = hit(
    1,
    'Moon Quest (abbreviated "MQ") is a fantasy role-playing game designed by Ada Brook in 1975 and published by '
    "Starlight Press of Tucson, Arizona.",
    "Moon Quest",
)
MODULE = hit(
    2, "Crystal Caverns is a 1981 solo adventure for MQ published by Starlight Press.", "Crystal Caverns"
)
UNRELATED_MODULE = hit(
    3, "Sunken Halls is a 1979 adventure module for a rival system, sold by Blue Moon Games.", "Sunken Halls"
)


async def test_a_bridge_part_split_over_two_paragraphs_naming_the_same_thing_gets_no_notice() -> None:
    """The game's page and a module's page that names the same publisher hold the part's words between them,
    though the judge cannot link them by the game's bridge ("MQ"): searched on, answered without a notice
    (partial). An adventure of an unrelated system completes the words too but names nothing of the game's
    page: the bridge is missing, and the verdict says so."""
    engine = ExtractiveEngine()
    split, _ = await engine.assess(GAME_QUESTION, [GAME, MODULE], [])
    assert not split.sufficient and split.partial and split.queries
    unrelated, _ = await engine.assess(GAME_QUESTION, [GAME, UNRELATED_MODULE], [])
    assert not unrelated.sufficient and not unrelated.partial


async def test_a_bridge_part_asking_a_year_split_over_two_paragraphs_needs_the_year_in_the_second() -> None:
    """Asked for a year, the paragraph that completes the game's page must state one: the module's page with
    its year makes the verdict partial (no notice); the same page without a year, or an unrelated system's
    module, leaves the year missing."""
    question = "In what year was the adventure for Moon Quest, a game designed by Ada Brook, published?"
    undated = hit(
        2, "Crystal Caverns is a solo adventure for MQ published by Starlight Press.", "Crystal Caverns"
    )
    engine = ExtractiveEngine()
    dated, _ = await engine.assess(question, [GAME, MODULE], [])
    assert not dated.sufficient and dated.partial
    for other in (undated, UNRELATED_MODULE):
        verdict, _ = await engine.assess(question, [GAME, other], [])
        assert not verdict.sufficient and not verdict.partial
