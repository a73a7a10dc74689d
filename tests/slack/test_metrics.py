"""`kb serve`'s /metrics: a question through the mock Slack API moves the counters (prometheus_client)."""

from __future__ import annotations

import asyncio

from prometheus_client.parser import text_string_to_metric_families

from adapters.observability.measured_engine import MeasuredEngine
from adapters.observability.metrics import exposition, observe_answered, observe_sync
from adapters.slack.delivery.ledger import Delivery, DeliveryState
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.measured import MeasuredLedger
from bot.settings import Settings
from core.errors import ModelUnavailable
from core.models import AnswerRequest, ConversationKey, RecordOpening, RecordStatus
from core.record import PhaseTimings, Record, RecordDetails, UsageTally
from core.sources.models import SyncReport
from core.trace import RetrievalTrace, RoundStep
from tests.fakes import FakeEngine, InMemoryConversationStore, InMemoryDeliveryLedger
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import SECRET
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.serve_support import http_mode, signed_mention


def _value(text: str, name: str, **labels: str) -> float:
    """A sample's value in a Prometheus text exposition (0 when absent)."""
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


async def test_a_question_through_slack_moves_the_counters_scraped_at_metrics() -> None:
    """HTTP mode: after a mention answered with a notice, GET /metrics shows one more question (route and
    engine as labels), one more notice, a delivered reply, and the 429 auth.test met at start."""
    before = exposition().decode()
    mock = await MockSlackApi().start()
    mock.throttle("auth.test", times=1, retry_after=1)
    pipeline = FakePipeline()
    pipeline.script("counted?", notice="注意：缺少关于「停车费」的资料，以上结论仅供参考。")
    settings = Settings(
        slack={"bot_token": "xoxb-test", "signing_secret": SECRET, "api_url": mock.url},
        channels={"default": ChannelConfig(datasets=["docs"])},
    )
    try:
        async with http_mode(settings, pipeline) as (http, base):
            body, headers = signed_mention("counted?", ts="1700.000100", channel="C7")
            async with http.post(f"{base}/slack/events", data=body, headers=headers) as response:
                assert response.status == 200
            await mock.wait_for(
                lambda: "停车费" in "".join(m.block_text() for m in mock.thread("C7", "1700.000100"))
            )
            for _ in range(100):  # the delivered state is saved just after the final message
                async with http.get(f"{base}/metrics") as response:
                    assert response.status == 200 and response.content_type == "text/plain"
                    after = await response.text()
                if _value(after, "kb_deliveries_total", state="delivered") > _value(
                    before, "kb_deliveries_total", state="delivered"
                ):
                    break
                await asyncio.sleep(0.05)
    finally:
        await mock.close()
    labels = {"route": "single", "engine": "fake", "outcome": "answered"}
    assert _value(after, "kb_questions_total", **labels) == _value(before, "kb_questions_total", **labels) + 1
    assert _value(after, "kb_uncertainty_notices_total") == _value(before, "kb_uncertainty_notices_total") + 1
    delivered = _value(after, "kb_deliveries_total", state="delivered")
    assert delivered > _value(before, "kb_deliveries_total", state="delivered")
    for phase in ("first_token", "delivery"):  # the streamed answer's first words, the reply delivered
        moved = _value(after, "kb_question_phase_seconds_count", phase=phase)
        assert moved == _value(before, "kb_question_phase_seconds_count", phase=phase) + 1
    limited = _value(after, "kb_slack_rate_limited_total", method="auth.test")
    assert limited == _value(before, "kb_slack_rate_limited_total", method="auth.test") + 1


def test_an_answered_record_feeds_the_phase_histograms_rounds_model_calls_and_fallbacks() -> None:
    """Every phase a record reached is observed once; its rounds and the extractive fallback that answered
    after the answer model failed are counted."""
    record = Record(
        id=1,
        conversation_id="c",
        question="q",
        status=RecordStatus.ANSWERED,
        answer="a",
        details=RecordDetails(
            engine="extractive",
            answer_error="model_unavailable: down",
            usage=UsageTally(model_calls=3),
            timings=PhaseTimings(context=0.01, retrieval=0.4, generation=1.5, total=2.0),
            trace=RetrievalTrace(mode="multi", rounds=(RoundStep(1), RoundStep(2))),
        ),
    )
    before = exposition().decode()
    observe_answered(record)
    after = exposition().decode()

    def moved(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert [moved("kb_question_phase_seconds_count", phase=p) for p in ("context", "rewrite", "total")] == [
        1,
        0,
        1,
    ]
    assert moved("kb_question_phase_seconds_sum", phase="generation") == 1.5
    assert moved("kb_retrieval_rounds_count") == 1 and moved("kb_retrieval_rounds_sum") == 2
    assert moved("kb_fallbacks_total", role="answer") == 1
    assert moved("kb_questions_total", route="multi", engine="extractive", outcome="answered") == 1


def _moved(before: str, name: str, **labels: str) -> float:
    return _value(exposition().decode(), name, **labels) - _value(before, name, **labels)


async def test_model_calls_are_counted_by_role_and_status_and_the_answers_first_text_is_timed() -> None:
    """MeasuredEngine: a rewrite that works and one the model refused count as ok and model_unavailable;
    a streamed answer counts once and observes its first text."""
    inner = FakeEngine()
    inner.rewrites.extend(["standalone", ModelUnavailable("down")])
    engine = MeasuredEngine(inner)
    before = exposition().decode()
    assert (await engine.rewrite([], "q"))[0] == "standalone"
    try:
        await engine.rewrite([], "q")
    except ModelUnavailable:
        pass
    else:
        raise AssertionError("the refusal must reach the caller")
    pieces = [piece async for piece in engine.answer(AnswerRequest(question="q", evidence=()))]
    assert pieces[0] == "No evidence."
    assert _moved(before, "kb_model_calls_total", role="rewrite", status="ok") == 1
    assert _moved(before, "kb_model_calls_total", role="rewrite", status="model_unavailable") == 1
    assert _moved(before, "kb_model_calls_total", role="answer", status="ok") == 1
    assert _moved(before, "kb_model_first_token_seconds_count") == 1


async def test_a_delivery_is_counted_once_per_state_it_enters_and_timed_to_delivered() -> None:
    """MeasuredLedger: saving pending, another attempt still pending, placeholder, then delivered counts
    three state changes and one time to delivered, measured from the first save."""
    store = InMemoryConversationStore()
    record, _ = await store.open_record(RecordOpening(conversation=ConversationKey("cli"), question="q"))
    times = iter([10.0, 11.0, 12.0, 15.5])
    ledger = MeasuredLedger(InMemoryDeliveryLedger(store), clock=lambda: next(times))
    before = exposition().decode()
    for delivery in (
        Delivery(DeliveryState.PENDING),
        Delivery(DeliveryState.PENDING, attempts=1),
        Delivery(DeliveryState.PLACEHOLDER, attempts=1),
        Delivery(DeliveryState.DELIVERED, attempts=1),
    ):
        await ledger.save_delivery(record.id, delivery)
    assert [
        _moved(before, "kb_deliveries_total", state=state)
        for state in ("pending", "placeholder", "delivered")
    ] == [1, 1, 1]
    assert _moved(before, "kb_question_phase_seconds_count", phase="delivery") == 1
    assert _moved(before, "kb_question_phase_seconds_sum", phase="delivery") == 5.5


def test_a_syncs_documents_and_chunks_are_counted_by_change() -> None:
    """A scheduled sync's report moves the document and chunk counters by source and change."""
    before = exposition().decode()
    observe_sync(SyncReport("wiki", 0.0, added=2, changed=1, chunks_added=9, chunks_removed=3))
    assert _moved(before, "kb_synced_documents_total", source="wiki", change="added") == 2
    assert _moved(before, "kb_synced_chunks_total", source="wiki", change="added") == 9
    assert _moved(before, "kb_synced_chunks_total", source="wiki", change="removed") == 3


def test_kb_serve_measures_a_model_engine_and_leaves_the_offline_one_alone() -> None:
    """serve.measured (what kb serve hands build_services): a model engine is wrapped in MeasuredEngine,
    the offline extractive engine, which makes no model calls, is returned as it is."""
    from adapters.extractive import ExtractiveEngine
    from bot.cli.operations.serve import measured

    offline = ExtractiveEngine()
    assert measured(offline) is offline
    model = FakeEngine()
    wrapped = measured(model)
    assert isinstance(wrapped, MeasuredEngine) and wrapped.name == model.name
