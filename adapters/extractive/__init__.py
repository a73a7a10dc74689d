"""The extractive engine: every model role by plain text processing (jieba for Chinese), no LLM.

At the top: ``engine`` (the Engine port) and the roles that write text, ``rewrite``, ``summary`` and
``answer``. Beneath them: ``language`` (jieba POS terms, sentences, entities, quantities, meaning),
``question`` (compound question split, compared entities, weighted part terms) and ``judging`` (which
paragraphs support each part, bridge hops, the evidence assessment and its follow-up queries).
"""

from adapters.extractive.engine import ExtractiveEngine
from adapters.extractive.question.parts import split_question

__all__ = ["ExtractiveEngine", "split_question"]
