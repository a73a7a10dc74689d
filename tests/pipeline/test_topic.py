"""A follow-up keeps the topic its previous answer cited: the document's name joins the search, traced by origin."""

from __future__ import annotations

from core.answering.trace_view import render_trace_text
from core.events import Done
from core.models import Turn
from core.retrieval.topic import document_topic, refers_back, topic_query
from tests.pipeline.conftest import Harness


async def test_a_follow_up_searches_within_the_document_the_previous_answer_cited(harness: Harness) -> None:
    """The rewrite lost the statute; the search adds the name of the law the previous answer cited, and the
    trace says where each added term came from. The question the answer is written for stays the rewrite."""
    harness.kb.add("p1", "行政复议申请期限为六十日。", document="行政复议法(2023-09-01)")
    first = await harness.ask("行政复议的申请期限是多久?")
    assert isinstance(first[-1], Done)
    harness.engine.rewrites.append("因不可抗力耽误了申请期限怎么办")
    done = (await harness.ask("那如果因为不可抗力耽误了呢?"))[-1]
    assert isinstance(done, Done)
    assert harness.kb.queries[-1] == "因不可抗力耽误了申请期限怎么办 行政复议法"
    trace = done.record.details.trace
    assert trace is not None and trace.rewritten == "因不可抗力耽误了申请期限怎么办"
    origins = {term.term: term.origin for term in trace.carried}
    assert origins["行政复议法"] == "citation" and origins["申请"] == origins["期限"] == "question"
    assert all(term.record_id == first[-1].record.id for term in trace.carried)
    shown = render_trace_text(trace, "zh")
    assert f"「行政复议法」 (来自记录 {first[-1].record.id} 的回答所引用的文档)" in shown
    assert done.record.rewritten == "因不可抗力耽误了申请期限怎么办"


def test_a_standalone_question_or_one_naming_the_document_is_searched_as_it_is() -> None:
    """No history, an unchanged question, or a rewrite already in the cited document's words: nothing added."""
    history = [Turn(1, "行政复议的申请期限是多久?", "六十日 [1]", cited=("行政复议法(2023-09-01)",))]
    assert topic_query("年假有几天?", "年假有几天?", history) == ("年假有几天?", ())
    assert topic_query("那逾期呢?", "那逾期呢?", []) == ("那逾期呢?", ())
    query, _ = topic_query("那逾期呢?", "行政复议逾期申请怎么办", history)
    assert query == "行政复议逾期申请怎么办"
    assert document_topic("行政复议法(2023-09-01).md") == "行政复议法"


def test_a_follow_up_the_rewrite_left_as_it_is_still_searches_the_cited_document_when_it_refers_back() -> (
    None
):
    """ "那退货的运费由谁出？" came back from the rewrite unchanged: it opens with 那, so it depends on the
    conversation, and the law the previous answer cited joins the search, traced as a citation. A question
    that refers to nothing is still searched as it is."""
    history = [
        Turn(7, "网上买的商品可以七天无理由退货吗?", "可以 [1]", cited=("消费者权益保护法(2013-10-25)",))
    ]
    query, carried = topic_query("那退货的运费由谁出?", "那退货的运费由谁出?", history)
    assert query == "那退货的运费由谁出? 消费者权益保护法"
    assert [(term.term, term.origin, term.record_id) for term in carried] == [
        ("消费者权益保护法", "citation", 7)
    ]
    assert topic_query("运费由谁出?", "运费由谁出?", history) == ("运费由谁出?", ())
    assert refers_back("What about its side effects?") and not refers_back("What are aspirin's side effects?")


def test_he_after_a_question_asking_who_searches_the_person_the_answer_cited() -> None:
    """ "What else did he direct?" after "Who directed the film Doctor Strange?" is about the director the answer
    cited, not the film the question named; after a question that asks no "who", the most cited document
    stays the topic, and 他/她 refer back like "he"."""
    history = [
        Turn(
            3,
            "Who directed the film Doctor Strange?",
            "Scott Derrickson [2]",
            cited=("Doctor Strange.md", "Scott Derrickson.md"),
        )
    ]
    query, carried = topic_query("What else did he direct?", "What else did he direct?", history)
    assert query == "What else did he direct? Scott Derrickson"
    assert [(term.term, term.origin) for term in carried] == [("Scott Derrickson", "citation")]
    about = [
        Turn(4, "What is Doctor Strange about?", "… [1]", cited=("Doctor Strange.md", "Scott Derrickson.md"))
    ]
    assert topic_query("Who played him?", "Who played him?", about)[0] == "Who played him? Doctor Strange"
    assert refers_back("她后来还写过什么？") and refers_back("When was she born?")


def test_a_question_sharing_a_word_with_the_previous_one_searches_its_cited_document() -> None:
    """ "哪些商品不能退？" after "网购的商品多少天内可以无理由退货？" goes on with it (商品): the law the answer cited
    joins the search; a question sharing no word with it is searched as it is."""
    history = [
        Turn(5, "网购的商品多少天内可以无理由退货？", "七日 [1]", cited=("消费者权益保护法(2013-10-25).md",))
    ]
    query, carried = topic_query("哪些商品不能退？", "哪些商品不能退？", history)
    assert query == "哪些商品不能退？ 消费者权益保护法"
    assert [(term.term, term.origin) for term in carried] == [("消费者权益保护法", "citation")]
    assert topic_query("年假有几天?", "年假有几天?", history) == ("年假有几天?", ())
