"""The extractive engine: every model role by plain text processing (jieba for Chinese), no LLM.

Modules, one role each: ``terms`` (jieba POS terms and evidence matching), ``parts`` (compound
question split), ``rewrite``, ``assess``, ``summary``, ``answer``, and ``engine`` (the Engine port).
"""

from adapters.extractive.engine import ExtractiveEngine
from adapters.extractive.parts import split_question

__all__ = ["ExtractiveEngine", "split_question"]
