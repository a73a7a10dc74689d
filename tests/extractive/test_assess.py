"""The extractive assessor: part coverage, gap queries, bridge queries, and the {sufficient, missing, queries} contract."""

from __future__ import annotations

from dataclasses import replace

from adapters.extractive import ExtractiveEngine
from adapters.extractive.language.entities import chinese_names
from adapters.extractive.question.salience import part_terms
from core.models import Assessment, Usage
from core.text import normalize_query
from tests.extractive.helpers import hit

LEAVE = hit(
    1, "工龄满 1 年不满 5 年：每年 10 天年假。当年未休完的年假最多结转 5 天。", "年假制度.md", "年假天数"
)
EXPENSES = hit(
    2, "所有费用必须在费用发生之日起 30 天内提交报销单，这是报销的截止期限。", "费用报销.md", "报销截止期限"
)
COMPOUND = "年假有几天，以及报销的截止期限是多久？"


async def test_all_parts_covered_is_sufficient() -> None:
    """When every part's terms occur in the evidence the verdict is sufficient, with no gap and no query."""
    verdict, usage = await ExtractiveEngine().assess(COMPOUND, [LEAVE, EXPENSES], [COMPOUND])
    assert verdict == Assessment(sufficient=True, missing="", queries=())
    assert usage == Usage()


async def test_missing_part_is_named_and_queried() -> None:
    """A part absent from the evidence becomes the missing text and the next query."""
    verdict, _ = await ExtractiveEngine().assess(COMPOUND, [LEAVE], [COMPOUND])
    assert not verdict.sufficient
    assert "报销的截止期限是多久" in verdict.missing
    assert "年假" not in verdict.missing
    assert verdict.queries == ("报销的截止期限是多久",)


async def test_english_missing_text_is_english() -> None:
    """An English question gets an English gap description."""
    question = "How many remote days are allowed per week and what is the home office stipend?"
    remote = hit(1, "Employees may work remotely for up to 2 days per week.", "remote.md")
    verdict, _ = await ExtractiveEngine().assess(question, [remote], [question])
    assert not verdict.sufficient
    assert verdict.missing == 'no evidence yet for "what is the home office stipend"'
    assert verdict.queries == ("what is the home office stipend",)


async def test_empty_evidence_is_never_sufficient() -> None:
    """No evidence is insufficient even for a question without content words, and every part is missing."""
    engine = ExtractiveEngine()
    verdict, _ = await engine.assess(COMPOUND, [], [])
    assert not verdict.sufficient
    assert verdict.queries == ("年假有几天", "报销的截止期限是多久")
    bare, _ = await engine.assess("为什么？", [], [])
    assert not bare.sufficient


async def test_searched_queries_are_never_reissued() -> None:
    """A query already searched (after normalisation) is replaced by a different one, or dropped."""
    engine = ExtractiveEngine()
    first, _ = await engine.assess(COMPOUND, [LEAVE], [COMPOUND, "报销的 截止期限是多久？"])
    assert first.queries and all(
        normalize_query(q) not in {normalize_query(COMPOUND), normalize_query("报销的截止期限是多久")}
        for q in first.queries
    )
    exhausted_searched = [COMPOUND, "报销的截止期限是多久", "报销 截止 期限", *first.queries]
    second, _ = await engine.assess(COMPOUND, [LEAVE], exhausted_searched)
    assert not second.sufficient
    assert second.queries == ()


async def test_at_most_two_queries() -> None:
    """Even with three uncovered parts only two next queries are proposed."""
    question = "年假有几天，以及报销的截止期限是多久，以及密码多久更换一次？"
    verdict, _ = await ExtractiveEngine().assess(question, [hit(1, "无关的内容：食堂在一楼。")], [question])
    assert len(verdict.queries) == 2
    assert "密码多久更换一次" in verdict.missing


async def test_bridge_query_pairs_the_new_entity_with_the_missing_words() -> None:
    """A film paragraph naming its director -> the next query is the director plus the words still missing."""
    question = "What is the nationality of the director of Night Train?"
    film = hit(1, "Night Train is a 1959 film directed by John Smith. It was shot in winter.", "Night Train")
    verdict, _ = await ExtractiveEngine().assess(question, [film], [question])
    assert not verdict.sufficient
    assert verdict.queries == ("John Smith nationality director",)
    assert 'look up "John Smith" next' in verdict.missing
    director = hit(2, "John Smith was a British film director and screenwriter.", "John Smith")
    final, _ = await ExtractiveEngine().assess(question, [film, director], [question, *verdict.queries])
    assert final.sufficient


async def test_bridge_entity_is_taken_from_the_best_matching_paragraph() -> None:
    """Among equally matching paragraphs the newest names the bridge; the query pairs it with the lacking words."""
    question = "负责 VPN 运维的团队的办公楼层是几层？"
    evidence = [
        hit(1, "食堂位于一楼，午餐时间为 11:30 至 13:30。", "后勤.md"),
        hit(2, "2019 年以前，VPN 运维交给「网络组」。", "历史沿革.md"),
        hit(3, "访客需要在前台登记。", "行政.md"),
        hit(4, "目前 VPN 的运维交给「基础设施组」。", "IT账号与设备.md"),
    ]
    verdict, _ = await ExtractiveEngine().assess(question, evidence, [question])
    assert not verdict.sufficient
    assert verdict.queries[0] == "基础设施组 负责团队办公楼"
    assert "基础设施组" in verdict.missing


async def test_terms_found_everywhere_bridge_nothing() -> None:
    """A part matched only through a term in every passage (the company name) gets a plain gap query."""
    question = "星河科技 2026 年的团建预算是多少？"
    evidence = [
        hit(1, "星河科技的正式员工享有带薪年假，申请通过「星河人事」系统提交。", "年假制度.md"),
        hit(2, "星河科技的后端服务统一使用 G1 垃圾回收器。", "Java虚拟机垃圾回收.md"),
    ]
    verdict, _ = await ExtractiveEngine().assess(question, evidence, [question])
    assert not verdict.sufficient
    assert verdict.missing == "缺少关于「星河科技 2026 年的团建预算是多少」的资料"
    assert "星河人事" not in " ".join(verdict.queries)


async def test_coverage_threshold_is_configurable() -> None:
    """The same half-covered question is covered at threshold 0.5 and uncovered at the default 0.6."""
    question = "年假结转的证明材料"  # terms 年假 结转 证明 材料: two of four occur below
    evidence = [hit(1, "当年未休完的年假最多结转 5 天。")]
    strict, _ = await ExtractiveEngine().assess(question, evidence, [])
    lenient, _ = await ExtractiveEngine(coverage_threshold=0.5).assess(question, evidence, [])
    assert not strict.sufficient
    assert lenient.sufficient


AWARDS = hit(
    1,
    "The Tagus Chamber Orchestra won the Gramophone Award in 2004 for its album of sea songs.",
    "Tagus Chamber Orchestra.md",
)
PARAPHRASED = "Which award did the Tagus Chamber Orchestra receive for its recording of sea shanties?"


async def test_support_short_only_in_degree_is_partial_and_still_searched() -> None:
    """Every entity present and more than half the part's weight in one paragraph, but under the coverage
    threshold (paraphrased words): not sufficient, so the loop searches on, yet partial, so no notice."""
    verdict, _ = await ExtractiveEngine().assess(PARAPHRASED, [AWARDS], [PARAPHRASED])
    assert not verdict.sufficient and verdict.partial
    assert verdict.queries and verdict.missing


async def test_a_part_lacking_an_asked_quantity_or_most_of_its_words_is_not_partial() -> None:
    """An asked number nobody states, or a paragraph holding under half of the part, is something missing."""
    engine = ExtractiveEngine()
    counted = "How many albums of sea shanties did the Tagus Chamber Orchestra record?"
    quantity, _ = await engine.assess(counted, [AWARDS], [counted])
    assert not quantity.sufficient and not quantity.partial
    other = "What instrument does Ana Ribeiro play in the Tagus Chamber Orchestra?"
    cello = hit(2, "Bruno Costa plays the cello.", "Bruno Costa.md")
    unrelated, _ = await engine.assess(other, [cello], [other])
    assert not unrelated.sufficient and not unrelated.partial
    nothing, _ = await engine.assess(PARAPHRASED, [], [PARAPHRASED])
    assert not nothing.partial


async def test_what_was_done_to_a_law_on_a_date_is_no_name_the_evidence_must_hold() -> None:
    """ "2018年修正的公司法": jieba's dictionary tags 修正 as a person's name; it is the act that made the
    version, so the article of the 2018 version stating the number of promoters is sufficient."""
    article = hit(
        1,
        "第七十八条 设立股份有限公司，应当有二人以上二百人以下为发起人。",
        "公司法(2018-10-26).md",
        "第四章 股份有限公司的设立和组织机构",
    )
    question = "按照2018年修正的公司法，设立股份有限公司需要几个发起人？"
    verdict, _ = await ExtractiveEngine().assess(question, [article], [question])
    assert verdict.sufficient


def test_a_name_between_a_date_and_its_possessive_stays_a_name() -> None:
    """Only an act dated before a law's title is no name: "2018年王小明的案子" still names 王小明."""
    assert "王小明" in chinese_names("2018年王小明的案子")
    assert chinese_names("按照2018年修正的公司法") == []


def test_an_everyday_word_jieba_tags_as_a_place_is_no_name_the_evidence_must_hold() -> None:
    """ "扔东西": jieba's dictionary tags 东西 as a place; it stays a word of the part, not an entity."""
    terms = part_terms("楼上有人往下扔东西把人砸伤了，谁来赔")
    assert "东西" not in terms.entities and "东西" in terms.generic
    assert chinese_names("长江大桥在武汉") != []


async def test_a_measure_word_after_a_number_is_no_name_the_evidence_must_hold() -> None:
    """ "多少颗大犬齿": jieba glues the measure word 颗 to 大 and guesses a name (颗大); it is a count, and the
    paragraph stating "大犬齿2颗" about the fish covers the part without a notice."""
    question = "银纹笛鲷有多少颗大犬齿？"
    assert "颗大" not in part_terms(question).entities
    evidence = [
        hit(1, "银纹笛鲷，又称紫红笛鲷，俗名红槽，为辐鳍鱼纲鲈形目鲈亚目笛鲷科的其中一个种。", "银纹笛鲷"),
        hit(2, "上颌两侧具细尖齿，多埋于上唇内，前端具大犬齿2颗；下颌为疏松圆锥齿，前端无犬齿。", "银纹笛鲷"),
    ]
    verdict, _ = await ExtractiveEngine().assess(question, evidence, [question])
    assert verdict.sufficient


async def test_what_people_call_someone_is_no_name_the_evidence_must_hold() -> None:
    """jieba tags 老公 and 老东家 as person names; 老 before a common noun is how people call someone, so
    "老公经常动手打我…" is judged by its words and the article granting a protection order answers it
    without a notice; 老王 (老 before a surname) is still a name."""
    question = "老公经常动手打我，我可以向法院申请什么保护？"
    assert part_terms(question).entities == ()
    assert part_terms("从公司离职后，老东家最多能限制我多久？").entities == ()
    assert chinese_names("老王借钱不还") == ["老王"]
    article = hit(1, "第二十三条 当事人因遭受家庭暴力，向人民法院申请人身安全保护令的，人民法院应当受理。")
    verdict, _ = await ExtractiveEngine().assess(question, [article], [question])
    assert verdict.sufficient or verdict.partial


async def test_a_quantity_part_is_supported_by_a_paragraph_stating_it_beyond_the_best_covering_ones() -> None:
    """Five paragraphs repeat the part's words (法律, 规定, 赔偿) without a multiple; the one stating "十倍",
    found later with a lower score, covers the part's words too and answers it: no notice."""
    question = "那部法律规定最多能要几倍赔偿？"
    repeating = [
        hit(i, f"第{n}条 造成损害的，应当依照法律规定承担赔偿责任。", "食品安全法.md")
        for i, n in enumerate(
            ["一百四十条", "一百四十一条", "一百四十二条", "一百四十三条", "一百四十四条"], 1
        )
    ]
    stating = replace(
        hit(6, "第一百四十八条 违反法律规定的，消费者还可以要求支付价款十倍的赔偿金。", "食品安全法.md"),
        score=0.5,
    )
    verdict, _ = await ExtractiveEngine().assess(question, [*repeating, stating], [question])
    assert verdict.sufficient
    without, _ = await ExtractiveEngine().assess(question, repeating, [question])
    assert not without.sufficient


async def test_a_paragraph_about_minors_does_not_answer_a_question_about_adults() -> None:
    """成年人 inside 未成年人 is another word (core.text.negated_word): the minors' article stating 十六周岁 does
    not cover "满多少岁才算成年人"; the article on adults does."""
    question = "满多少岁才算成年人？"
    minors = hit(1, "第六十一条 任何组织或者个人不得招用未满十六周岁未成年人。", "未成年人保护法.md")
    adults = hit(2, "第十七条 十八周岁以上的自然人为成年人。", "民法典.md")
    verdict, _ = await ExtractiveEngine().assess(question, [minors], [question])
    assert not verdict.sufficient
    verdict, _ = await ExtractiveEngine().assess(question, [minors, adults], [question])
    assert verdict.sufficient


async def test_an_acronym_with_digits_before_chinese_text_is_one_name() -> None:
    """ "MP3" directly followed by Chinese is the name the part asks about, not the number 3 (CJK characters
    are word characters, so no word boundary ends "MP3" there); the paragraph that explains it covers it."""
    question = "MP3在编码过程中会对音频产生怎样的影响？"
    assert part_terms(question).entities == ("MP3",)
    evidence = [
        hit(
            1, "MP3是一种有损音频编码格式，编码过程中会舍弃人耳不易察觉的部分音频，产生一定的失真，影响音质。"
        )
    ]
    verdict, _ = await ExtractiveEngine().assess(question, evidence, [question])
    assert verdict.sufficient


async def test_a_gap_note_names_the_words_the_closest_paragraph_lacks_not_a_name_it_happens_to_hold() -> None:
    """A part half found ("房子离婚时怎么分" beside an article on dividing joint property that names 人民法院) is
    noted by the part's word the paragraph does not mention, not by the court it names; a part hardly found
    is noted as lacking evidence."""
    article = hit(
        1,
        "第一千零八十七条 离婚时，夫妻的共同财产由双方协议处理；协议不成的，由人民法院根据财产的具体情况判决。",
    )
    half, _ = await ExtractiveEngine().assess("房子离婚时怎么分？", [article], ["房子离婚时怎么分？"])
    assert half.missing == "「房子离婚时怎么分」只找到部分资料，最接近的资料未提及「房子」"
    assert "人民法院" not in half.missing
    question = "结婚前自己全款买的房子，离婚的时候要分给对方一半吗？"
    little, _ = await ExtractiveEngine().assess(question, [article], [question])
    assert little.missing == "缺少关于「结婚前自己全款买的房子，离婚的时候要分给对方一半吗」的资料"


async def test_a_telephone_number_is_missing_until_a_paragraph_writes_one() -> None:
    """ "投诉的电话是多少" is not answered by a paragraph that mentions the complaint line and a deadline: the
    part lacks its number (a notice, not a partial answer) until a paragraph gives the number in digits."""
    question = "我们市旅游投诉的电话是多少？"
    rules = hit(
        1,
        "市旅游主管部门应当向社会公开受理旅游投诉的电话，自收到投诉之日起七个工作日内作出处理。",
        "旅游法.md",
    )
    verdict, _ = await ExtractiveEngine().assess(question, [rules], [question])
    assert not verdict.sufficient and not verdict.partial
    listed = hit(2, "本市旅游投诉电话为 12345，全天受理。", "本市旅游服务指南.md")
    answered, _ = await ExtractiveEngine().assess(question, [rules, listed], [question])
    assert answered.sufficient
