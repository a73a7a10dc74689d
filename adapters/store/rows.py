"""Values in and out of SQL rows: storable text, JSON details, and Record / ContextSnapshot from rows."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from adapters.store.errors import unstorable_text
from core.errors import InvalidInput
from core.messages import phrase
from core.models import ContextSnapshot, RecordStatus
from core.record import NO_DETAILS, Record, RecordDetails

RECORD_COLUMNS = (
    "id, conversation_id, question, rewritten, answer, status, details, event_key, "
    "created_at, updated_at, asked_by, reply_to"
)
DELIVERY_PENDING = "pending"  # the delivery column of a record a front end will deliver
CONTEXT_COLUMNS = "summary, through_record_id, compacted_rounds, revision, updated_at"

# PostgreSQL text cannot hold NUL, and no UTF-8 database can hold an unpaired surrogate.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def checked_text(text: str) -> str:
    """Input text exactly as given, or InvalidInput when a database could not store it faithfully."""
    if _UNSTORABLE.search(text):
        raise unstorable_text("NUL or unpaired surrogate in input text")
    return text


def storable_text(text: str) -> str:
    """Generated text (answers, summaries) with unstorable characters replaced by U+FFFD, never rejected."""
    return _UNSTORABLE.sub("\ufffd", text)


def _storable_value(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/Infinity and both databases reject them
    if isinstance(value, Mapping):
        return {storable_text(str(key)): _storable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable_value(item) for item in value]
    return value


def dump_json(value: Any) -> str:
    """JSON text for a details value (Chinese kept as is); InvalidInput for values JSON cannot express."""
    try:
        return json.dumps(_storable_value(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(phrase("error.details_not_json"), detail=str(exc)) from exc


def details_patch(patch: Mapping[str, Any]) -> dict[str, str]:
    """Top-level keys of a details patch (RecordDetails.to_json()) mapped to their JSON text."""
    encoded: dict[str, str] = {}
    for key, value in patch.items():
        if not isinstance(key, str) or '"' in key or not key:
            raise InvalidInput(phrase("error.bad_details_key", key=key))
        encoded[storable_text(key)] = dump_json(value)
    return encoded


def details_from_column(value: str | None) -> RecordDetails:
    """The typed details of a stored details column (JSON text, any version; empty when NULL or blank)."""
    stored = json.loads(value) if value else {}
    return RecordDetails.from_json(stored) if isinstance(stored, Mapping) else NO_DETAILS


def record_from_row(row: Mapping[str, Any]) -> Record:
    details = row["details"]
    return Record(
        id=int(row["id"]),
        conversation_id=row["conversation_id"],
        question=row["question"],
        status=RecordStatus(row["status"]),
        rewritten=row["rewritten"],
        answer=row["answer"],
        details=details_from_column(details),
        event_key=row["event_key"],
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        asked_by=row["asked_by"],
        reply_to=row["reply_to"],
    )


def context_from_row(row: Mapping[str, Any] | None) -> ContextSnapshot:
    if row is None:
        return ContextSnapshot()
    return ContextSnapshot(
        summary=row["summary"],
        through_record_id=int(row["through_record_id"]),
        compacted_rounds=int(row["compacted_rounds"]),
        revision=int(row["revision"]),
        updated_at=float(row["updated_at"]),
    )
