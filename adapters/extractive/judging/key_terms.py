"""The deterministic check a model's "sufficient" must pass: every part's key terms are in the evidence.

A part's key terms are its entities (names, numbers, quoted titles: what it is about) and, when it asks
for a quantity, a stated number of the asked kind (language/quantities.py). A part whose entity appears in
no evidence paragraph, or whose asked quantity is stated nowhere, is not covered, whatever a model judged:
small models call half-covered questions sufficient. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.extractive.judging.support import hit_text
from adapters.extractive.language.quantities import asked_units, states_quantity
from adapters.extractive.language.sentences import split_sentences
from adapters.extractive.question.parts import question_parts
from adapters.extractive.question.salience import Stack, part_terms
from core.models import Hit


def parts_missing_key_terms(question: str, evidence: Sequence[Hit]) -> list[str]:
    """The parts of the question whose key terms the evidence lacks, in question order."""
    stacks = [Stack.of(hit_text(hit)) for hit in evidence]
    sentences = split_sentences(evidence)
    missing: list[str] = []
    for part in question_parts(question):
        entities = part_terms(part).entities
        absent = [entity for entity in entities if not any(stack.has_entity(entity) for stack in stacks)]
        units = asked_units(part)
        unstated = units is not None and not any(states_quantity(s.text, units) for s in sentences)
        if absent or unstated:
            missing.append(part)
    return missing
