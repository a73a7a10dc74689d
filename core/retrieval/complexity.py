"""Multi-hop complexity features of a rewritten question and their weighted rule score.

Five numeric features (the classifier service takes them in this order, see ``as_vector``):

* ``comparison_markers``: comparison markers (相比, 更, 区别, 差异, 哪个, 比较, versus, vs, compared, difference,
  same, than, comparatives such as older/earlier, "which ... or ...").
* ``logical_connectors``: logical and coordinating connectors (首先/然后, 之前/之后, 如果/则, 因为/所以, 分别, 以及,
  before/after, then, if, because, respectively ...).
* ``entities``: distinct named entities: jieba POS nr*/ns/nt/nz runs, English proper-noun runs
  (capitalised words, the sentence-initial question word excluded), quoted terms (「」“”"" 《》) and
  domain terms (names ending in 法/条例/办法/中心/委员会 ..., plus any terms the caller supplies).
* ``bridge_entities``: bridge-entity links, i.e. places where one entity is reached through another: English
  relative pronouns after the first word (the woman *who* portrayed X), ``'s`` after a proper noun;
  Chinese relative clauses (a verb directly before 的: 出演X的女演员) and 所在/所属/其.
* ``tokens``: cl100k token length of the question.

Rule score (documented weights, each signal saturating in [0, 1]; the sum of the weights is 1)::

    0.30 * min(1, comparison_markers / 2)
  + 0.25 * min(1, logical_connectors / 2)
  + 0.20 * min(1, bridge_entities / 2)
  + 0.15 * min(1, max(0, entities - 1) / 3)
  + 0.10 * min(1, max(0, tokens - 10) / 40)

Comparison weighs most because a comparison always needs one lookup per compared side; logic and
bridges mark sequenced or nested lookups; entity count and length are weak, supporting signals (a single
entity adds nothing). The score is only a fast path: the router trusts it at >= 0.75 or <= 0.15.
Extraction is CPU-bound (jieba): call :func:`extract_features` from a worker thread on the event loop.
See docs/design.md#rule-features-and-the-rule-score.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection
from typing import Any

from core.budget import count_tokens
from core.trace import FEATURE_NAMES, ComplexityFeatures

# The features record lives with the trace that stores it; the classifier service imports it from here.
__all__ = ["FEATURE_NAMES", "WEIGHTS", "ComplexityFeatures", "extract_features", "rule_score"]

WEIGHTS: dict[str, float] = {
    "comparison": 0.30,
    "logic": 0.25,
    "bridge": 0.20,
    "entities": 0.15,
    "tokens": 0.10,
}
COMPARISON_ZH = frozenset(
    "相比 比较 更 更加 区别 差异 不同 异同 哪个 哪一个 哪些 哪家 孰 对比 相同 一样 还是 较".split()
)
COMPARISON_EN = frozenset(
    (
        "versus vs compared compare comparison difference differences differ different same similar "
        "than older younger earlier later larger smaller bigger longer shorter higher lower more less "
        "first"
    ).split()
)
COMPARISON_EN_PHRASES = (
    ("which…or", re.compile(r"\bwhich\b.*\bor\b")),
    ("both/either", re.compile(r"\b(both|either|neither)\b")),
)
LOGIC_ZH = frozenset(
    (
        "首先 然后 其次 接着 最后 之前 之后 以前 以后 如果 假如 若 则 那么 因为 由于 所以 因此 导致 并且 而且 "
        "同时 以及 分别 另外 此外 进而"
    ).split()
)
LOGIC_EN = frozenset(
    "before after then if because therefore since until while respectively additionally also whereas".split()
)
BRIDGE_EN = frozenset("who whom whose which that where".split())
BRIDGE_ZH = frozenset("所在 所属 其".split())
RELATIONAL_VERBS_ZH = frozenset(
    (
        "出演 主演 饰演 扮演 执导 导演 创作 创办 创立 成立 编写 撰写 写 发明 发现 位于 出生 毕业 担任 领导 拥有 "
        "设计 建造 演唱 收购 隶属 制定 颁布 发布 负责 管辖 获得"
    ).split()
)
QUESTION_WORDS_EN = frozenset(
    (
        "what which who whom whose when where why how is are was were do does did can could should would "
        "will the a an in on at of for please tell name list"
    ).split()
)
ENTITY_FLAGS = ("nr", "ns", "nt", "nz")
DOMAIN_SUFFIXES = (
    "法",
    "条例",
    "办法",
    "规定",
    "细则",
    "中心",
    "委员会",
    "管理局",
    "公司",
    "大学",
    "医院",
    "法院",
)
_QUOTED = re.compile(r"「([^」]+)」|“([^”]+)”|\"([^\"]+)\"|《([^》]+)》|『([^』]+)』")
_PROPER_RUN = re.compile(r"\b[A-Z][\w'\-]*(?:\s+(?:of|the|de|von|van)?\s*[A-Z][\w'\-]*)*")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_POSSESSIVE = re.compile(r"\b[A-Z][\w\-]*'s\s+[a-z]")
_CLAUSE_BREAK = re.compile(r"[,，;；。?？!！:：、]")


@functools.cache
def _posseg() -> Any:
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def _entity_key(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


def _english_entities(text: str) -> list[str]:
    entities: list[str] = []
    for match in _PROPER_RUN.finditer(text):
        words = match.group(0).split()
        starts_sentence = not text[: match.start()].strip() or text[: match.start()].rstrip()[-1] in '.?!:"“'
        while starts_sentence and words and words[0].lower() in QUESTION_WORDS_EN:
            words = words[1:]
        while words and words[-1].lower() in {"of", "the", "de", "von", "van"}:
            words = words[:-1]
        if words and (len(words) > 1 or len(words[0]) > 1):
            entities.append(" ".join(words))
    return entities


def _chinese_entities(pairs: list[tuple[str, str]]) -> list[str]:
    """jieba nr/ns/nt/nz runs, and domain names: a word ending in a domain suffix, or a noun + suffix (行政复议 + 法)."""
    entities: list[str] = []
    run = ""
    previous = ("", "")
    for word, flag in pairs:
        if flag.startswith(ENTITY_FLAGS) or (run and word == "·"):
            run += word
            previous = (word, flag)
            continue
        if run:
            entities.append(run.strip("·"))
            run = ""
        if len(word) >= 3 and not word.isascii() and word.endswith(DOMAIN_SUFFIXES):
            entities.append(word)
        elif word in DOMAIN_SUFFIXES and previous[1].startswith("n") and not previous[0].isascii():
            entities.append(previous[0] + word)
        previous = (word, flag)
    if run:
        entities.append(run.strip("·"))
    return entities


def _chinese_bridges(pairs: list[tuple[str, str]]) -> list[str]:
    """Relational verbs that a 的 later in the same clause turns into a described entity (出演X的女演员)."""
    bridges: list[str] = []
    pending: str | None = None
    for index, (word, _) in enumerate(pairs):
        if _CLAUSE_BREAK.fullmatch(word):
            pending = None
        elif word in RELATIONAL_VERBS_ZH:
            pending = word
        elif word == "的" and index + 1 < len(pairs) and pairs[index + 1][0] in {"那个", "那位"}:
            bridges.append("的" + pairs[index + 1][0])
        elif word == "的" and pending is not None:
            bridges.append(pending + "…的")
            pending = None
        elif word in BRIDGE_ZH:
            bridges.append(word)
    return bridges


def _count_markers(
    pairs: list[tuple[str, str]], lowered_words: list[str], zh: frozenset[str], en: frozenset[str]
) -> list[str]:
    found = [word for word, _ in pairs if word in zh]
    found.extend(word for word in lowered_words if word in en)
    return found


def extract_features(question: str, *, domain_terms: Collection[str] = ()) -> ComplexityFeatures:
    """The complexity features of a (rewritten) question. CPU-bound: run it in a worker thread."""
    text = unicodedata.normalize("NFKC", question or "").strip()
    pairs = [(word, flag) for word, flag in _posseg().lcut(text) if word.strip()]
    lowered = text.lower()
    words = [w.lower() for w in _EN_WORD.findall(text)]

    comparison = _count_markers(pairs, words, COMPARISON_ZH, COMPARISON_EN)
    comparison.extend(label for label, pattern in COMPARISON_EN_PHRASES if pattern.search(lowered))
    logic = _count_markers(pairs, words, LOGIC_ZH, LOGIC_EN)

    bridges = [word for word in words[1:] if word in BRIDGE_EN]
    bridges.extend(m.group(0)[:-1].strip() for m in _POSSESSIVE.finditer(text))
    bridges.extend(_chinese_bridges(pairs))

    found: dict[str, str] = {}
    quoted = [next(group for group in m.groups() if group) for m in _QUOTED.finditer(text)]
    supplied = [term for term in domain_terms if term.strip() and term.lower() in lowered]
    for name in (*quoted, *supplied, *_chinese_entities(pairs), *_english_entities(text)):
        key = _entity_key(name)
        if key and not any(key in other or other in key for other in found):
            found[key] = name.strip()

    return ComplexityFeatures(
        comparison_markers=len(comparison),
        logical_connectors=len(logic),
        entities=len(found),
        bridge_entities=len(bridges),
        tokens=count_tokens(text),
        markers=tuple(dict.fromkeys([*comparison, *logic, *bridges])),
        entity_names=tuple(found.values()),
    )


def _saturate(value: float, scale: float) -> float:
    return min(1.0, max(0.0, value) / scale)


def rule_score(features: ComplexityFeatures) -> float:
    """The weighted rule score in [0, 1] (weights and saturation documented in the module docstring)."""
    score = (
        WEIGHTS["comparison"] * _saturate(features.comparison_markers, 2)
        + WEIGHTS["logic"] * _saturate(features.logical_connectors, 2)
        + WEIGHTS["bridge"] * _saturate(features.bridge_entities, 2)
        + WEIGHTS["entities"] * _saturate(features.entities - 1, 3)
        + WEIGHTS["tokens"] * _saturate(features.tokens - 10, 40)
    )
    return round(min(1.0, max(0.0, score)), 4)
