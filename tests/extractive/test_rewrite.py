"""The extractive rewrite: elliptical follow-ups get the previous turn's subject; others stay as they are."""

from __future__ import annotations

from adapters.extractive import ExtractiveEngine
from core.models import Turn, Usage


def turns(*questions: str) -> list[Turn]:
    """History turns with the given questions (answers do not matter to the rewrite)."""
    return [Turn(record_id=i, question=q, answer="……") for i, q in enumerate(questions, start=1)]


async def test_pronoun_follow_up_carries_the_previous_subject() -> None:
    """ "那它们各自占用多少内存" after "Java 有哪些基本数据类型" asks about Java's primitive types."""
    rewritten, usage = await ExtractiveEngine().rewrite(
        turns("Java 有哪些基本数据类型"), "那它们各自占用多少内存?"
    )
    assert "Java 基本数据类型" in rewritten
    assert "内存" in rewritten
    assert "它们" not in rewritten
    assert usage == Usage()


async def test_demonstrative_follow_up_keeps_the_topic() -> None:
    """ "这个期限" after a question on 行政复议 keeps both 行政复议 and 期限."""
    rewritten, _ = await ExtractiveEngine().rewrite(
        turns("行政复议的一般申请期限是多久?"), "如果因不可抗力耽误了这个期限,应当如何计算?"
    )
    assert "行政复议" in rewritten
    assert "期限" in rewritten
    assert "不可抗力" in rewritten
    assert "这个" not in rewritten


async def test_english_possessive_follow_up() -> None:
    """ "What about their sizes?" after a question on Java's basic data types names those types."""
    rewritten, _ = await ExtractiveEngine().rewrite(
        turns("What are the basic data types in Java?"), "What about their sizes?"
    )
    assert "sizes" in rewritten
    assert "basic data types in Java" in rewritten
    assert "their" not in rewritten.lower()


async def test_self_contained_questions_are_unchanged() -> None:
    """A question with its own subject is returned exactly as asked, in both languages."""
    engine = ExtractiveEngine()
    history = turns("年假有几天？")
    for question in (
        "报销的截止期限是多久？",
        "JVM 默认使用哪个垃圾回收器？",
        "其他假期有哪些？",
        "What are the core hours?",
        "What are the core hours that apply to remote days?",  # a relative "that"
    ):
        rewritten, _ = await engine.rewrite(history, question)
        assert rewritten == question


async def test_it_after_the_questions_own_noun_refers_to_that_noun() -> None:
    """ "公司…劳动部门让它限期付了它还不付" in a thread about something else: 它 is 公司, not the last topic."""
    question = "公司拖着工资一直不发，劳动部门让它限期付了它还不付，要多赔我多少？"
    rewritten, _ = await ExtractiveEngine().rewrite(turns("离婚后孩子一般由谁抚养？"), question)
    assert rewritten == question
    follow_up, _ = await ExtractiveEngine().rewrite(turns("劳动合同的试用期最长多久？"), "那它可以延长吗？")
    assert (
        follow_up == "劳动合同的试用期可以延长吗?"
    )  # with no noun of its own before it, 它 is the last topic


async def test_a_follow_up_that_drops_its_subject_gets_the_previous_topic() -> None:
    """ "那违反了要赔多少?" has no noun of its own: the previous question's topic terms go in front of it."""
    engine = ExtractiveEngine()
    rewritten, _ = await engine.rewrite(turns("劳动合同试用期最长多久？"), "那违反了要赔多少？")
    assert rewritten == "劳动合同试用期 违反了要赔多少？"
    modal, _ = await engine.rewrite(turns("年假有几天？"), "我该找谁审批？")
    assert modal == "年假 我该找谁审批？"  # 该 is the modal "should": kept, not replaced by the subject


async def test_a_changed_condition_carries_the_previous_question() -> None:
    """ "那如果…呢?" keeps the new condition and asks the previous question under it."""
    rewritten, _ = await ExtractiveEngine().rewrite(
        turns("醉酒驾驶机动车会受到什么处罚？"), "那如果只是喝了点酒开车，第一次被查到呢？"
    )
    assert rewritten == "只是喝了点酒开车，第一次被查到，醉酒驾驶机动车会受到什么处罚？"


async def test_he_and_she_point_back_at_a_person_the_previous_question_names() -> None:
    """他/她 are a name the previous question gives; after one naming nobody, or asking who, they are left alone
    ("她不让我见孩子" after "离婚后孩子归谁?" is not about 孩子); after another party of the question's own
    ("对方说他不管") they are that party."""
    engine = ExtractiveEngine()
    named = turns("李明被公司辞退了，能要赔偿吗？")
    assert (await engine.rewrite(named, "他还能申请仲裁吗？"))[0] == "李明还能申请仲裁吗?"
    nobody = "她不让我见孩子怎么办？"
    assert (await engine.rewrite(turns("离婚后孩子归谁？"), nobody))[0] == nobody
    asked = "他现在在哪？"
    assert (await engine.rewrite(turns("张三的律师是谁？"), asked))[0] == asked
    party, _ = await engine.rewrite(turns("租的房子漏水，房东不修怎么办？"), "对方说他不管怎么办？")
    assert party.endswith("对方说他不管怎么办？")


async def test_a_follow_up_naming_only_a_party_takes_the_previous_topic() -> None:
    """ "对方一直不给怎么办?" after a question on child support is about child support: 对方 names a party of the
    topic, not a topic; one with a content word of its own ("对方不同意离婚怎么办?") is left alone."""
    history = turns("离婚后孩子的抚养费一般怎么定？")
    rewritten, _ = await ExtractiveEngine().rewrite(history, "对方一直不给怎么办？")
    assert "抚养费" in rewritten and rewritten.endswith("对方一直不给怎么办？")
    own, _ = await ExtractiveEngine().rewrite(history, "对方不同意离婚怎么办？")
    assert own == "对方不同意离婚怎么办？"


async def test_a_condition_that_starts_with_its_predicate_takes_the_previous_topic() -> None:
    """ "如果辞退了要给补偿吗?" after questions on 试用期 is about 试用期 (who is dismissed was dropped); a
    condition with its own subject ("如果公司不同意…") or a new event ("如果出车祸了…") is left alone."""
    history = turns("试用期最长可以约定多久？", "那公司在试用期里能随便辞退我吗？")
    engine = ExtractiveEngine()
    rewritten, _ = await engine.rewrite(history, "如果辞退了要给补偿吗？")
    assert rewritten.startswith("公司 试用期") and rewritten.endswith("如果辞退了要给补偿吗？")
    passive, _ = await engine.rewrite(history, "要是被辞退了呢？")
    assert "试用期" in passive
    for own in ("如果公司不同意，还能辞退吗？", "如果出车祸了保险公司赔吗？"):
        unchanged, _ = await engine.rewrite(history, own)
        assert unchanged == own


async def test_a_clause_after_na_ending_in_ne_is_a_changed_condition() -> None:
    """ "那孩子已经九岁了呢？" and "那保了价的呢？" (a clause, not a bare topic) ask the previous question under the
    new condition, as "那如果…呢" does; a bare topic still replaces the previous subject."""
    engine = ExtractiveEngine()
    older, _ = await engine.rewrite(turns("离婚后不满两岁的孩子一般由谁抚养？"), "那孩子已经九岁了呢？")
    assert older == "孩子已经九岁了，离婚后不满两岁的孩子一般由谁抚养？"
    insured, _ = await engine.rewrite(turns("在邮局寄的包裹没保价丢了怎么赔？"), "那保了价的呢？")
    assert insured == "保了价的，在邮局寄的包裹没保价丢了怎么赔？"
    topic, _ = await engine.rewrite(turns("年假有几天？"), "那病假呢？")
    assert topic == "病假有几天？"


async def test_no_history_means_no_rewrite() -> None:
    """Without history even a pronoun question is left alone."""
    rewritten, _ = await ExtractiveEngine().rewrite([], "那它们各自占用多少内存？")
    assert rewritten == "那它们各自占用多少内存？"


async def test_question_without_content_words_gets_the_subject() -> None:
    """ "为什么？" / "Why?" have no content of their own, so the previous subject is attached."""
    engine = ExtractiveEngine()
    zh, _ = await engine.rewrite(turns("年假最多可以结转几天？"), "为什么？")
    en, _ = await engine.rewrite(turns("What is the password rotation period?"), "Why?")
    assert "年假" in zh and "为什么" in zh
    assert "password rotation period" in en and "Why" in en


async def test_what_about_follow_up_reuses_the_previous_question() -> None:
    """ "那病假呢？" after "年假有几天？" asks the same thing about 病假."""
    rewritten, _ = await ExtractiveEngine().rewrite(turns("年假有几天？"), "那病假呢？")
    assert rewritten == "病假有几天？"


async def test_chained_follow_ups_keep_the_original_topic() -> None:
    """A third elliptical turn still resolves to the first turn's subject through the second turn."""
    rewritten, _ = await ExtractiveEngine().rewrite(
        turns("Java 有哪些基本数据类型", "那它们各自占用多少内存?"), "其中哪个最大?"
    )
    assert "Java 基本数据类型" in rewritten
    assert "其中" not in rewritten


async def test_english_condition_follow_ups_take_the_previous_question() -> None:
    """ "And for low-risk patients?" and "What about a P2 incident?" become the previous question with the
    phrase of the same kind swapped, or the condition added when it had none."""
    engine = ExtractiveEngine()
    cases = [
        (
            "What is the starting dose for high-risk patients?",
            "And for low-risk patients?",
            "What is the starting dose for low-risk patients?",
        ),
        (
            "How fast must a P1 incident be acknowledged?",
            "What about a P2 incident?",
            "How fast must a P2 incident be acknowledged?",
        ),
        (
            "How long is the probation period?",
            "And for part-time staff?",
            "How long is the probation period for part-time staff?",
        ),
    ]
    for previous, question, expected in cases:
        rewritten, _ = await engine.rewrite(turns(previous), question)
        assert rewritten == expected


async def test_an_english_possessive_takes_the_whole_noun_phrase_and_the_named_thing() -> None:
    """ "What are its side effects?" asks about the drug the previous question named, not "the side of …
    effects"; a self-contained question starting with a preposition is left alone."""
    engine = ExtractiveEngine()
    history = turns("What is the starting dose of aspirin for adults?", "And for children?")
    rewritten, _ = await engine.rewrite(history, "What are its side effects?")
    assert rewritten == "What are the side effects of aspirin?"
    rewritten, _ = await engine.rewrite(turns("Who founded Acme Corp?"), "When was it founded?")
    assert rewritten == "When was Acme Corp founded?"
    rewritten, _ = await engine.rewrite(turns("Who founded Acme Corp?"), "In which year did Acme open?")
    assert rewritten == "In which year did Acme open?"


async def test_he_and_his_point_at_the_person_the_previous_question_names() -> None:
    """ "When did he die?" / "When did his wife die?" after a question naming Albert Einstein are about him (his
    becomes "Albert Einstein's", so the verb stays after its noun); after a question naming nobody, "she" is left
    alone ("Can she take it with ibuprofen?" is not about aspirin taking aspirin)."""
    engine = ExtractiveEngine()
    history = turns("Where was Albert Einstein born?")
    assert (await engine.rewrite(history, "When did he die?"))[0] == "When did Albert Einstein die?"
    assert (await engine.rewrite(history, "When did his wife die?"))[
        0
    ] == "When did Albert Einstein's wife die?"
    asked = "When was he born?"  # after a question asking who, "he" is its answer, not the novel it names
    assert (await engine.rewrite(turns("Who wrote the novel Dune?"), asked))[0] == asked
    dose = turns("What is the starting dose of aspirin for adults?")
    assert (await engine.rewrite(dose, "Can she take it with ibuprofen?"))[
        0
    ] == "Can she take aspirin with ibuprofen?"


async def test_it_after_a_question_asking_which_one_is_the_answer_the_sources_gave() -> None:
    """ "Where is it located?" after "Which university did Ralph Hefferline teach at?" is about the university
    the answer cited, not the professor the question named; a statute answering "由谁抚养" is no person."""
    engine = ExtractiveEngine()
    asked = [
        Turn(
            1,
            "Which university did Ralph Hefferline teach at?",
            "… [2]",
            cited=("Ralph Hefferline.md", "Columbia University.md"),
        )
    ]
    assert (await engine.rewrite(asked, "Where is it located?"))[0] == "Where is Columbia University located?"
    who = [
        Turn(
            2,
            "Who directed the film Doctor Strange?",
            "… [2]",
            cited=("Doctor Strange (2016 film).md", "Scott Derrickson.md"),
        )
    ]
    assert (await engine.rewrite(who, "What else did he direct?"))[
        0
    ] == "What else did Scott Derrickson direct?"
    law = [Turn(3, "离婚后不满两岁的孩子一般由谁抚养？", "… [1]", cited=("婚姻家庭编.md",))]
    assert "婚姻家庭编" not in (await engine.rewrite(law, "他要付抚养费吗？"))[0]


async def test_a_question_opening_with_a_modal_takes_the_topic_it_lacks() -> None:
    """ "要付经济补偿吗?" and "还能要回来吗?" after a question on dismissal are about dismissal (who pays, for
    what, was dropped); a question with a subject of its own is left alone."""
    engine = ExtractiveEngine()
    history = turns("哪些情况下用人单位可以解除劳动合同？")
    for question in ("要付经济补偿吗？", "还能要回来吗？"):
        rewritten, _ = await engine.rewrite(history, question)
        assert rewritten == f"用人单位 解除劳动合同 {question}"
    own = "申请行政复议的期限是多久？"
    assert (await engine.rewrite(history, own))[0] == own


async def test_a_chain_of_english_pronouns_keeps_the_first_referent() -> None:
    """ "Who approves it?" after "Can I carry it over to next year?" after a question on annual leave is about
    annual leave (the thing the earlier "it" meant, not "carry … over"), and "What about sick leave?" then
    swaps leave for leave: "Who approves sick leave?"."""
    engine = ExtractiveEngine()
    history = turns("How many days of annual leave do I get?", "Can I carry it over to next year?")
    approves, _ = await engine.rewrite(history, "Who approves it?")
    assert approves == "Who approves annual leave?"
    three = turns(
        "How many days of annual leave do I get?", "Can I carry it over to next year?", "Who approves it?"
    )
    swapped, _ = await engine.rewrite(three, "What about sick leave?")
    assert swapped == "Who approves sick leave?"


async def test_a_cited_title_the_question_names_stays_whole_in_the_subject() -> None:
    """jieba cuts 楼曾瑞 into 楼 / 曾 / 瑞…; when the previous answer cited the page 楼曾瑞, the follow-ups carry the
    name whole ("它在哪个城市?" -> "楼曾瑞 大学在哪个城市?"), and 他 is that person."""
    engine = ExtractiveEngine()
    history = [Turn(1, "楼曾瑞毕业于哪个大学？", "… [1]", cited=("楼曾瑞.md",))]
    assert (await engine.rewrite(history, "它在哪个城市？"))[0] == "楼曾瑞 大学在哪个城市?"
    assert (await engine.rewrite(history, "他后来做什么工作？"))[0] == "楼曾瑞后来做什么工作?"


async def test_a_noun_phrase_the_quoted_sources_continue_with_a_verb_stays_whole() -> None:
    """jieba tags 限制 a verb, so the noun phrase of "竞业限制最长能约定多久?" is 竞业; the answer quoted sources
    speaking of 竞业限制, so "这个" and a dropped subject are 竞业限制. Without that quote the phrase stays 竞业."""
    engine = ExtractiveEngine()
    quoted = "- 竞业限制的人员限于用人单位的高级管理人员、高级技术人员和其他负有保密义务的人员。 [1]"
    history = [Turn(1, "竞业限制最长能约定多久？", quoted, cited=("劳动合同法(2012-12-28).md",))]
    assert (await engine.rewrite(history, "哪些员工才会被公司要求签这个？"))[
        0
    ] == "哪些员工才会被公司要求签竞业限制?"
    assert (await engine.rewrite(history, "违反了要赔多少？"))[0].startswith("竞业限制 ")
    unquoted = [
        Turn(1, "竞业限制最长能约定多久？", "- 期限不得超过二年。 [1]", cited=("劳动合同法(2012-12-28).md",))
    ]
    assert (await engine.rewrite(unquoted, "哪些员工才会被公司要求签这个？"))[
        0
    ] == "哪些员工才会被公司要求签竞业?"


async def test_he_means_the_name_the_previous_question_gives() -> None:
    """ "他说没钱还呢?" after "张三借了我五万块钱一直不还…" is about 张三 (jieba cuts the name 张 / 三借, so the
    noun phrases alone would give "三借 钱")."""
    engine = ExtractiveEngine()
    history = turns("张三借了我五万块钱一直不还，怎么办？")
    assert (await engine.rewrite(history, "他说没钱还呢？"))[0] == "张三说没钱还呢?"
    assert (await engine.rewrite(history, "能起诉他吗？"))[0] == "能起诉张三吗?"
