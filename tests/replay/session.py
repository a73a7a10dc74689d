"""The question set through the real bot: the composition `kb ask` / `kb chat` use (bot.compose), the
bundled sample handbook ingested with the offline embedder, a model at `base_url`.

The recorder runs it against the recording proxy, the replay tests against a cassette; the settings are
the same fixed values in both (SESSION_SETTINGS, written into the cassette's header), so the same question
set gives byte-identical requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.compose import build_services
from bot.sample_data import ensure_sample_dataset
from bot.sample_kb import SAMPLE_DATASET
from bot.settings import Settings, nest_flat_keys
from core.commands import Ask
from core.events import Failed
from core.models import ConversationKey, ConversationScope
from core.record import Record
from tests.replay.question_set import QUESTION_SET, ReplayConversation

# Everything that shapes a request, fixed here rather than read from the environment; written into each
# cassette's header by these (environment-variable) names, so it stays flat.
SESSION_SETTINGS: dict[str, Any] = {
    "kb_datasets": [SAMPLE_DATASET],
    "kb_answer_max_tokens": 400,  # a small CPU model: short answers keep recording quick and cassettes small
    "kb_retrieval_mode": "auto",
    "kb_search_mode": "blend",
    "kb_answer_fallback": True,
}


def session_settings(*, base_url: str, model: str, home: Path, timeout: float = 60.0) -> Settings:
    """Settings for one run: the fixed SESSION_SETTINGS, the model endpoint and a private KB_HOME."""
    return Settings(
        **nest_flat_keys(
            Settings,
            {
                "kb_home": home,
                "kb_database_url": None,
                "kb_chroma_url": None,
                "openai_base_url": base_url,
                "openai_api_key": "local",
                "kb_model": None,
                "kb_chat_model": model,
                "kb_aux_model": model,
                "kb_model_timeout": timeout,
                "kb_embedding_model": "use-multilingual-v3",
                "kb_classifier_url": None,
                "kb_rerank_url": None,
                **SESSION_SETTINGS,
            },
        )
    )


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """One asked turn: the record, or the Failed event (which the tests treat as a crash)."""

    conversation: ReplayConversation
    turn: int
    question: str
    record: Record | None
    failed: Failed | None = None

    @property
    def is_last(self) -> bool:
        return self.turn == len(self.conversation.turns) - 1


async def run_question_set(
    settings: Settings,
    conversations: Sequence[ReplayConversation] = QUESTION_SET,
    *,
    progress: Callable[[TurnOutcome], None] | None = None,
) -> list[TurnOutcome]:
    """Ingest the sample handbook and ask every conversation's turns in order, one conversation each."""
    outcomes: list[TurnOutcome] = []
    async with build_services(settings) as services:
        await ensure_sample_dataset(services.kb, settings)
        scope = ConversationScope(datasets=(SAMPLE_DATASET,))
        for conversation in conversations:
            key = ConversationKey(source="replay", channel_id=conversation.id)
            for turn, text in enumerate(conversation.turns):
                question = Ask(key, text, scope)
                answered = await services.pipeline.answer(question)
                outcome = (
                    TurnOutcome(conversation, turn, text, None, answered)
                    if isinstance(answered, Failed)
                    else TurnOutcome(conversation, turn, text, answered)
                )
                outcomes.append(outcome)
                if progress is not None:
                    progress(outcome)
    return outcomes
