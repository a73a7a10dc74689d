"""`kb eval --from-feedback`: the answers a team rated, as an eval question file (their own regression set).

A thumbs-up becomes a question whose gold is what its answer cited (the opening words of each cited
paragraph, in its document), asked after the same conversation's earlier questions as in Slack; a
thumbs-down becomes a question with no gold yet, expected to end with an uncertainty notice until someone
adds the paragraphs that answer it. The written lines are in the format `kb eval` reads
(bot.evaluation.questions).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from bot.evaluation.questions import EvalQuestion, Gold
from core.models import RecordStatus
from core.ports import RecordReader
from core.record import Record

PASSAGE_CHARS = 40  # opening characters of a cited paragraph kept as its gold
EARLIER_TURNS = 4  # earlier questions of the conversation asked first
_SPACE = re.compile(r"\s+")
_TRAILING_NUMERAL = re.compile(r"[\d零〇一二两三四五六七八九十百千万亿.,，、]+$")


class ParagraphTexts(Protocol):
    """The stored text of paragraphs by id (the knowledge base)."""

    async def paragraph_texts(self, dataset: str, ids: Sequence[str]) -> dict[str, str]: ...


def verdict_of(record: Record) -> str | None:
    """ "down" when anyone's latest verdict is 👎, "up" when someone's is 👍, else None."""
    values = {verdict.value for verdict in record.details.feedback}
    return "down" if "down" in values else "up" if "up" in values else None


def gold_passage(text: str) -> str:
    """The opening words of a paragraph, whitespace collapsed, never ending inside a number (matching reads
    "第二十" and "第二十一条" as different numbers)."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    passage = _SPACE.sub(" ", line).strip()[:PASSAGE_CHARS]
    if len(passage) == PASSAGE_CHARS:
        passage = _TRAILING_NUMERAL.sub("", passage).strip()
    return passage


def feedback_question(record: Record, earlier: Sequence[str], texts: Mapping[str, str]) -> EvalQuestion:
    """The eval question of a rated record (its verdict decides the kind), earlier questions as its turns."""
    verdict = verdict_of(record)
    raters = len(record.details.feedback)
    asked = EvalQuestion(
        f"feedback-{record.id}", f"feedback_{verdict}", record.question, turns=tuple(earlier)
    )
    if verdict != "up":
        notes = f"👎 ({raters} rating(s)): add the paragraphs that answer it as gold"
        return replace(asked, expect_notice=True, notes=notes)
    gold: list[Gold] = []
    for citation in record.details.citations:
        passage = gold_passage(texts.get(citation.paragraph_id, ""))
        item = Gold(must_contain=passage, file=citation.document)
        if passage and item not in gold:
            gold.append(item)
    notes = f"👍 ({raters} rating(s)); gold: what its answer cited"
    return replace(asked, gold=tuple(gold), expect_notice=False, notes=notes)


async def feedback_questions(
    records: RecordReader, paragraphs: ParagraphTexts, *, since: float, datasets: Sequence[str] = ()
) -> list[EvalQuestion]:
    """Every rated answered record since `since` (searched in one of `datasets`, all when empty), oldest
    first, as eval questions."""
    wanted = set(datasets)
    questions = []
    for record in reversed(await records.answered_since(since)):
        searched = tuple(record.details.trace.datasets or ()) if record.details.trace is not None else ()
        if verdict_of(record) is None or (wanted and not wanted & set(searched)):
            continue
        history = await records.list_records(record.conversation_id)
        earlier = [r.question for r in history if r.id < record.id and r.status == RecordStatus.ANSWERED][
            -EARLIER_TURNS:
        ]
        ids = [c.paragraph_id for c in record.details.citations if c.paragraph_id]
        texts: dict[str, str] = {}
        for dataset in searched:
            missing = [pid for pid in ids if pid not in texts]
            if missing:
                texts.update(await paragraphs.paragraph_texts(dataset, missing))
        questions.append(feedback_question(record, earlier, texts))
    return questions
