"""A part that points back at the part before it, and the words of that part's answer it carries.

"VPN 由哪个部门负责运维？这个部门的负责人是谁？": the second part asks about whatever answers the first, so
its sentence is the one naming that department (基础设施组), not any department's head. The first part's
answer is the clause of its quoted sentences that matches the first part most ("VPN 由基础设施组负责运维"),
when it restates most of it; its words the first part does not hold (基础设施) are what "这个部门" stands
for, and they join the second part's words when its sentences are chosen
(docs/design.md#the-extractive-answer). Pure; jieba (CPU-bound).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from adapters.extractive.language.sentences import Sentence
from adapters.extractive.language.terms import Haystack, terms

# a demonstrative or pronoun standing for what the previous part asked about
_BACK_ZH = re.compile(
    r"这个|这些|这家|这位|这项|这种|那个|那些|那家|那位|那项|(?<!应)该(?=[\u4e00-\u9fff])|它"
)
_BACK_EN = re.compile(
    r"\b(?:its|their|his|her|(?:this|that|these|those)(?!\s+(?:is|was|are|were|has|had|can|will|would)\b)"
    r"\s+[a-z]+)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"[，,；;：:。！？!?]|\.(?=\s|$)")
CARRIED_WORDS = 4  # at most this many words of the earlier answer are carried
CLAUSE_SHARE = 0.6  # the earlier answer's clause holds this share of the earlier part's words, or none is
PREVIOUS_WORDS = 2  # an earlier part of fewer words ("Which year") says too little to find its answer clause


def points_back(part: str) -> bool:
    """Whether the part names its subject only by pointing back ("这个部门…", "…that group…")."""
    return bool(_BACK_ZH.search(part) or _BACK_EN.search(part))


def answer_words(previous: str, answer: Sequence[Sentence], part: str) -> tuple[str, ...]:
    """The words of the clause of the ``answer`` sentences that matches ``previous`` best, which neither part
    holds; () unless that clause holds ``CLAUSE_SHARE`` of the earlier part's words, at least
    ``PREVIOUS_WORDS`` of them (a clause restating the earlier part with its answer in it, not a sentence
    that only shares a word with it)."""
    wanted = terms(previous)
    clauses = [clause for sentence in answer for clause in _CLAUSE.split(sentence.text) if clause.strip()]
    if len(wanted) < PREVIOUS_WORDS or not clauses:
        return ()
    best = max(clauses, key=lambda clause: len(Haystack.of(clause).matched(wanted)))
    if len(Haystack.of(best).matched(wanted)) < CLAUSE_SHARE * len(wanted):
        return ()
    held = {*wanted, *terms(part)}
    return tuple(word for word in terms(best) if word not in held)[:CARRIED_WORDS]


def carried_words(part: str, previous: str, previous_answer: Sequence[Sentence]) -> tuple[str, ...]:
    """The earlier part's answer words a part pointing back at it carries; () for any other part."""
    if not previous or not previous_answer or not points_back(part):
        return ()
    return answer_words(previous, previous_answer, part)
