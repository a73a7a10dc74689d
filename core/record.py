"""One question's record and its details as typed values; JSON only where the store reads and writes them.

A record's details say how its answer came about (language, context, rewrite, trace, engine, citations,
usage, timings), how it failed, what people thought of it and which attempts came before. Every layer
reads them as attributes of :class:`RecordDetails`; the store writes ``to_json()`` and reads
``RecordDetails.from_json()``.

The stored form (docs/design.md#record-details) carries its version under ``"v"``: 2 since the details are
typed. A row without ``"v"`` was written before and holds the same keys; any key may be missing from an
older row, and a missing or malformed value reads as its default. Keys this version does not know are
ignored when read and left in the row (every write merges top-level keys, see :meth:`RecordDetails.to_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.models import NOWHERE, ContextStats, Hit, Location, RecordStatus
from core.trace import RetrievalTrace, record_trace

DETAILS_VERSION = 2
Phase = Literal["context", "rewrite", "retrieval", "generation", "claims", "total"]
PHASES: tuple[Phase, ...] = ("context", "rewrite", "retrieval", "generation", "claims", "total")


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _status(value: str) -> RecordStatus | str:
    try:
        return RecordStatus(value)
    except ValueError:
        return value


def _mapping(value: object) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _mappings(value: object) -> tuple[Mapping[str, Any], ...]:
    items = value if isinstance(value, list | tuple) else ()
    return tuple(item for item in items if isinstance(item, Mapping))


@dataclass(frozen=True, slots=True)
class UnsupportedClaim:
    """A number or name the answer states that none of its sources holds (core/answering/claims.py)."""

    text: str  # as written in the answer: "六十日", "1,500 CNY", "Adriana Trigiani"
    kind: str  # "number" or "name"
    sentence: str = ""  # the answer's sentence that states it

    def to_json(self) -> dict[str, str]:
        """text, kind, sentence."""
        return {"text": self.text, "kind": self.kind, "sentence": self.sentence}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnsupportedClaim:
        """A stored claim; missing fields read as empty."""
        return cls(_str(data.get("text")), _str(data.get("kind")), _str(data.get("sentence")))


@dataclass(frozen=True, slots=True)
class Attribution:
    """One answer sentence and the evidence paragraph it was tied to (core/answering/attribution.py)."""

    sentence: str  # without its markers
    source: int  # the paragraph's evidence number; 0 when none supports it
    how: str  # "kept" (the model's marker), "corrected", "added", "removed", "none"
    support: float = 0.0  # the weighted share of its key terms its paragraph(s) hold (else the best one's)
    meaning: float = 0.0  # tied by meaning: its similarity to the paragraph's closest sentence

    def to_json(self) -> dict[str, object]:
        """sentence, source, how, support, meaning."""
        return {
            "sentence": self.sentence,
            "source": self.source,
            "how": self.how,
            "support": self.support,
            "meaning": self.meaning,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Attribution:
        """A stored attribution; missing fields read as empty."""
        source = data.get("source")
        return cls(
            _str(data.get("sentence")),
            source if isinstance(source, int) else 0,
            _str(data.get("how")),
            _float(data.get("support")) or 0.0,
            _float(data.get("meaning")) or 0.0,
        )


@dataclass(frozen=True, slots=True)
class SuppliedQuote:
    """A sentence of the evidence quoted under a model's answer for a question part the answer left out
    (core/answering/left_out.py)."""

    part: str  # the question part the answer did not answer from its supporting paragraphs
    sentence: str  # as quoted, without its marker
    source: int  # the paragraph's evidence number

    def to_json(self) -> dict[str, object]:
        """part, sentence, source."""
        return {"part": self.part, "sentence": self.sentence, "source": self.source}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuppliedQuote:
        """A stored quote; missing fields read as empty."""
        return cls(_str(data.get("part")), _str(data.get("sentence")), _int(data.get("source")))


@dataclass(frozen=True, slots=True)
class CitedSource:
    """A numbered source under an answer: the evidence paragraph it cites (n is its evidence number)."""

    n: int
    document: str
    heading: str = ""
    source: str = ""
    paragraph_id: str = ""
    location: Location = NOWHERE
    part: str = ""  # what tells it from another cited paragraph of the same document and heading (第21条)

    @classmethod
    def of(cls, n: int, hit: Hit, *, part: str = "") -> CitedSource:
        """The citation of evidence paragraph n."""
        return cls(n, hit.document_name, hit.heading, hit.source, hit.id, hit.location, part)

    def where(self) -> str:
        """The place inside the document shown beside its name: the location, then the part ("" for none)."""
        return " ".join(label for label in (self.location.label(), self.part) if label)

    def is_web(self) -> bool:
        """Whether the source is a web address (shown as a link)."""
        return self.source.startswith(("http://", "https://"))

    def to_json(self) -> dict[str, object]:
        """n, document, heading, source, the location's set fields (page, slide, sheet, rows), paragraph_id."""
        return {
            "n": self.n,
            "document": self.document,
            "heading": self.heading,
            "source": self.source,
            **self.location.to_dict(),
            "paragraph_id": self.paragraph_id,
            **({"part": self.part} if self.part else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CitedSource:
        """A stored citation (n 0 when unnumbered)."""
        return cls(
            n=_int(data.get("n")),
            document=_str(data.get("document")),
            heading=_str(data.get("heading")),
            source=_str(data.get("source")),
            paragraph_id=_str(data.get("paragraph_id")),
            location=Location.from_dict(data),
            part=_str(data.get("part")),
        )


@dataclass(frozen=True, slots=True)
class UsageTally:
    """Tokens and model calls spent on one answer (rewrite, summaries, retrieval, generation)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_calls": self.model_calls,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UsageTally:
        return cls(
            prompt_tokens=_int(data.get("prompt_tokens")),
            completion_tokens=_int(data.get("completion_tokens")),
            model_calls=_int(data.get("model_calls")),
        )


@dataclass(frozen=True, slots=True)
class PhaseTimings:
    """Seconds spent in each phase of answering; None for a phase the question did not reach."""

    context: float | None = None
    rewrite: float | None = None
    retrieval: float | None = None
    generation: float | None = None
    claims: float | None = None  # attribution and claim check of the finished answer
    total: float | None = None

    def seconds(self, phase: Phase) -> float | None:
        """The time of one phase."""
        value: float | None = getattr(self, phase)
        return value

    def with_phase(self, phase: Phase, seconds: float) -> PhaseTimings:
        """These timings with one phase set."""
        return replace(self, **{phase: seconds})

    def to_json(self) -> dict[str, object]:
        """The phases reached, in order."""
        return {name: value for name in PHASES if (value := self.seconds(name)) is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PhaseTimings:
        return cls(**{name: _float(data.get(name)) for name in PHASES})


@dataclass(frozen=True, slots=True)
class Verdict:
    """One person's latest 👍/👎 on an answer ("up" or "down"), and when they gave it."""

    person: str
    value: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class RecordDetails:
    """How a record's answer came about, how it failed, its feedback and earlier attempts.

    engine is set once the record is answered, together with notice, citations, evidence_ids and usage
    (written as a group, notice null when there is none). failure and user_message are set when it failed
    (user_message: what the user was told, shown again on re-delivery). The *_error fields say what went
    wrong on the way without failing it ("code: message"); rewrite_engine names the fallback that
    rewrote the question.
    """

    lang: str = ""
    context: ContextStats | None = None
    rewrite_error: str = ""
    rewrite_engine: str = ""
    trace: RetrievalTrace | None = None
    answer_error: str = ""
    engine: str = ""
    notice: str | None = None
    citations: tuple[CitedSource, ...] = ()
    evidence_ids: tuple[str, ...] = ()
    unsupported: tuple[UnsupportedClaim, ...] = ()  # claims no source holds (answered group)
    attributions: tuple[Attribution, ...] = ()  # per model-written sentence, its paragraph (answered group)
    supplied: tuple[SuppliedQuote, ...] = ()  # quoted for parts a model's answer left out (answered group)
    usage: UsageTally | None = None
    timings: PhaseTimings | None = None
    failure: str = ""
    user_message: str = ""
    feedback: tuple[Verdict, ...] = ()  # one per person, by person
    previous_answers: tuple[ArchivedAttempt, ...] = ()  # oldest first

    def to_json(self) -> dict[str, Any]:  # JSON boundary: the records table's details column, `kb ask --json`
        """The stored form: "v", then every field that is set, key for key as readers of the JSON know it.

        Fields at their defaults are left out, so a store that merges the top-level keys into a row (as
        every write does) keeps what the row already holds there (another person's feedback, the earlier
        attempts). An answered record's group is written whole.
        """
        data: dict[str, object] = {"v": DETAILS_VERSION}
        if self.lang:
            data["lang"] = self.lang
        if self.context is not None:
            data["context"] = self.context.to_json()
        for key, text in (("rewrite_error", self.rewrite_error), ("rewrite_engine", self.rewrite_engine)):
            if text:
                data[key] = text
        if self.trace is not None:
            data["trace"] = self.trace.to_json()
        if self.answer_error:
            data["answer_error"] = self.answer_error
        if self.engine:
            data["engine"] = self.engine
        if self.engine or self.notice is not None:
            data["notice"] = self.notice
        if self.engine or self.citations:
            data["citations"] = [item.to_json() for item in self.citations]
        if self.engine or self.evidence_ids:
            data["evidence_ids"] = list(self.evidence_ids)
        if self.engine or self.unsupported:
            data["unsupported"] = [claim.to_json() for claim in self.unsupported]
        if self.engine or self.attributions:
            data["attributions"] = [item.to_json() for item in self.attributions]
        if self.engine or self.supplied:
            data["supplied"] = [item.to_json() for item in self.supplied]
        if self.usage is not None:
            data["usage"] = self.usage.to_json()
        if self.timings is not None:
            data["timings"] = self.timings.to_json()
        for key, text in (("failure", self.failure), ("user_message", self.user_message)):
            if text:
                data[key] = text
        if self.feedback:
            data["feedback"] = {item.person: {"value": item.value, "at": item.at} for item in self.feedback}
        if self.previous_answers:
            data["previous_answers"] = [attempt.to_json() for attempt in self.previous_answers]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecordDetails:
        """Stored details of any version (see the module docstring); anything malformed reads as unset."""
        context, usage, timings = (_mapping(data.get(key)) for key in ("context", "usage", "timings"))
        notice = data.get("notice")
        feedback = _mapping(data.get("feedback")) or {}
        evidence = data.get("evidence_ids")
        return cls(
            lang=_str(data.get("lang")),
            context=ContextStats.from_json(context) if context is not None else None,
            rewrite_error=_str(data.get("rewrite_error")),
            rewrite_engine=_str(data.get("rewrite_engine")),
            trace=record_trace(data),
            answer_error=_str(data.get("answer_error")),
            engine=_str(data.get("engine")),
            notice=notice if isinstance(notice, str) else None,
            citations=tuple(CitedSource.from_json(item) for item in _mappings(data.get("citations"))),
            evidence_ids=tuple(str(item) for item in evidence) if isinstance(evidence, list | tuple) else (),
            unsupported=tuple(
                UnsupportedClaim.from_json(item) for item in _mappings(data.get("unsupported"))
            ),
            attributions=tuple(Attribution.from_json(item) for item in _mappings(data.get("attributions"))),
            supplied=tuple(SuppliedQuote.from_json(item) for item in _mappings(data.get("supplied"))),
            usage=UsageTally.from_json(usage) if usage is not None else None,
            timings=PhaseTimings.from_json(timings) if timings is not None else None,
            failure=_str(data.get("failure")),
            user_message=_str(data.get("user_message")),
            feedback=tuple(
                Verdict(str(person), _str(entry.get("value")), _float(entry.get("at")) or 0.0)
                for person, entry in sorted(feedback.items())
                if isinstance(entry, Mapping)
            ),
            previous_answers=tuple(
                ArchivedAttempt.from_json(item) for item in _mappings(data.get("previous_answers"))
            ),
        )


NO_DETAILS = RecordDetails()


@dataclass(frozen=True, slots=True)
class ArchivedAttempt:
    """An earlier answer to the same record, kept when it was asked again (its details as they were)."""

    status: RecordStatus | str
    answer: str | None = None
    rewritten: str | None = None
    updated_at: float = 0.0
    details: RecordDetails = NO_DETAILS

    def to_json(self) -> dict[str, object]:
        return {
            "status": str(self.status),
            "answer": self.answer,
            "rewritten": self.rewritten,
            "updated_at": self.updated_at,
            "details": self.details.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ArchivedAttempt:
        """A stored attempt (a status this version does not know is kept as its string)."""
        status = _str(data.get("status"))
        answer, rewritten = data.get("answer"), data.get("rewritten")
        details = _mapping(data.get("details"))
        return cls(
            status=_status(status),
            answer=answer if isinstance(answer, str) else None,
            rewritten=rewritten if isinstance(rewritten, str) else None,
            updated_at=_float(data.get("updated_at")) or 0.0,
            details=RecordDetails.from_json(details) if details is not None else NO_DETAILS,
        )


@dataclass(frozen=True, slots=True)
class Record:
    """One question asked in a conversation, and what became of it."""

    id: int
    conversation_id: str
    question: str
    status: RecordStatus
    rewritten: str | None = None
    answer: str | None = None
    details: RecordDetails = NO_DETAILS
    event_key: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    asked_by: str | None = None  # who asked, as the front end names them ("slack:T1:U1"); None from the CLI
    reply_to: str | None = (
        None  # where a front end delivers the answer ("channel:thread_ts"); None: shown by it
    )
