"""The grounded answer: prompt messages with a delimited evidence block, citations, sources and notices.

Evidence, document names, headings, the question, the gaps and the history are data to the prompt
builder (core.prompt_markup): escaped and neutralised, so no document or stored answer can close the
evidence block, forge a question or open a chat turn.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from core.answering.prompts import ANSWER_SYSTEM_EN, ANSWER_SYSTEM_ZH, HISTORY_ESCAPES
from core.budget import message_tokens, server_prompt_estimate
from core.messages import per_language, text
from core.models import AnswerRequest, Hit, Message
from core.prompt_markup import Markup, Part, element, holds_escapes, prompt
from core.record import CitedSource
from core.text import ARTICLE_NUMBER, shortened

SYSTEM_BUDGET = 4000
USER_BUDGET = 28000
# [3], and the forms small models write: [编号3] (the prompt says "用 [编号] 标注"), [来源3], [source 3]
CITATION = re.compile(r"\[(?:编号|来源|出处|source\s*|ref\s*)?(\d{1,3})\]", re.IGNORECASE)
# what carries no words of an answer: bracketed markers ([1], [编号]), tags copied from the prompt, escapes
_SCAFFOLD = re.compile(r"\[[^\]\n]{0,12}\]|</?[A-Za-z_][^>\n]*>|&[a-z]+;")
_WORD = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]|\d+")


# a line holding only one of the answer prompt's own element tags, which a small model copies into its
# answer ("…（六）属于本机关的管辖范围；\n</paragraph>\n\n资料中没有答案。"); a tag inside a line may be the
# documents' own text (a page about markup) and is left alone
_PROMPT_TAG_LINE = re.compile(
    r'^[ \t]*</?(?:evidence|paragraph|question|gaps|history)(?:\s+[\w-]+="[^"\n]*")*\s*>[ \t]*(?:\n|$)',
    re.MULTILINE,
)
_EMPTY_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+\n")


def without_prompt_tags(body: str) -> str:
    """A model's answer without the lines that hold only a prompt element's tag (</paragraph>, <evidence>),
    the blank lines they leave closed up; everything else is left as written."""
    if not _PROMPT_TAG_LINE.search(body):
        return body
    return _EMPTY_LINES.sub("\n\n", _PROMPT_TAG_LINE.sub("", body)).strip()


def says_nothing(body: str) -> bool:
    """Whether an answer holds fewer than two words of its own: "[1]", "[1] [2]", "<evidence>1</evidence>"."""
    return len(_WORD.findall(_SCAFFOLD.sub(" ", body))) < 2


def evidence_block(evidence: Sequence[Hit]) -> Markup:
    """Evidence as numbered, delimited paragraphs (the only source of facts for the answer), each named by
    its document, place, the article it continues (Location.within) and heading; names, headings and
    contents escaped so that they cannot end a paragraph or the block."""
    paragraphs = []
    for index, hit in enumerate(evidence, start=1):
        where = "".join(f" {label}" for label in (hit.location.label(), hit.location.within) if label)
        heading = f" | {hit.heading}" if hit.heading else ""
        document = f"{hit.document_name}{where}{heading}"
        paragraphs.append(element("paragraph", hit.content, block=True, n=str(index), document=document))
    return Markup("\n".join(["<evidence>", *(paragraph.text for paragraph in paragraphs), "</evidence>"]))


def answer_messages(request: AnswerRequest, *, stop_label: str) -> list[Message]:
    """System rules (evidence boundaries), history for understanding, then evidence and the question; the
    rules say how to read escapes in the history when it holds any."""
    template = per_language(request.lang, zh=ANSWER_SYSTEM_ZH, en=ANSWER_SYSTEM_EN)
    system = template.format(sufficient=str(request.sufficient).lower(), stop_label=stop_label)
    if holds_escapes(request.history):
        system += per_language(request.lang, **HISTORY_ESCAPES)
    question, gaps = element("question", request.question), element("gaps", request.missing)
    lang = request.lang
    user: list[Part] = [
        evidence_block(request.evidence),
        Markup("\n\n" + text("prompt.question", lang, question=question.text)),
    ]
    if request.missing:
        user.append(Markup("\n" + text("prompt.gaps", lang, gaps=gaps.text)))
    if not request.evidence:
        user.append(Markup("\n" + text("prompt.no_evidence", lang)))
    return prompt(
        Markup(system),
        *user,
        history=request.history,
        rules_budget=SYSTEM_BUDGET,
        user_budget=USER_BUDGET,
    )


def cited_numbers(answer: str, evidence_count: int) -> list[int]:
    """Evidence numbers the answer cites, in first-mention order, ignoring out-of-range ones."""
    seen: dict[int, None] = {}
    for match in CITATION.finditer(answer):
        number = int(match.group(1))
        if 1 <= number <= evidence_count:
            seen.setdefault(number, None)
    return list(seen)


def most_cited_first(answer: str, numbered: Sequence[tuple[int, str]]) -> tuple[str, ...]:
    """The cited documents, the one most of the answer's citations point at first (then by first mention):
    what the answer was mostly about, not whichever paragraph happened to rank first in its evidence."""
    document = dict(numbered)
    mentions = [document[int(m.group(1))] for m in CITATION.finditer(answer) if int(m.group(1)) in document]
    counts = {name: mentions.count(name) for name in dict.fromkeys(mentions)}
    ranked = sorted(counts, key=lambda name: -counts[name])  # stable: ties keep their first-mention order
    return tuple(dict.fromkeys([*ranked, *document.values()]))


def citations(answer: str, evidence: Sequence[Hit]) -> tuple[CitedSource, ...]:
    """Structured citations: the cited paragraphs, or every evidence document when none is cited."""
    numbers = cited_numbers(answer, len(evidence))
    if not numbers:
        first_per_document: dict[str, int] = {}
        for index, hit in enumerate(evidence, start=1):
            first_per_document.setdefault(hit.document_id, index)
        numbers = sorted(first_per_document.values())
    chosen = [evidence[n - 1] for n in sorted(numbers)]
    quoted = [
        quoted_part(answer, n, hit.content, within=hit.location.within)
        for n, hit in zip(sorted(numbers), chosen, strict=True)
    ]
    parts = distinguishing_parts(chosen, quoted)
    return tuple(
        CitedSource.of(n, hit, part=part) for n, hit, part in zip(sorted(numbers), chosen, parts, strict=True)
    )


_PART_LABEL = re.compile(
    r"(第[0-9零〇一二两三四五六七八九十百千]+[条章节款])|\b((?:Article|Section|Rule|§)\s*[0-9][0-9.]*)",
    re.IGNORECASE,
)


def part_label(content: str) -> str:
    """The numbered part a paragraph opens or names first: 第二十一条, Article 5, Section 3.2 ("" when none)."""
    match = _PART_LABEL.search(content[:200])
    return (match.group(1) or match.group(2) or "") if match else ""


# An article or section opening a paragraph of a chunk ("第十七条 十八周岁…", "Article 5"), not one a sentence
# refers to ("依照本法第三十九条规定")
_PART_HEAD = re.compile(
    rf"(?:^|(?<=\s))({ARTICLE_NUMBER})(?=\s)"
    r"|(?:^|(?<=\n))[#*\s]*((?:Article|Section|Rule|§)\s*[0-9][0-9.]*)",
    re.IGNORECASE,
)
QUOTE_PROBE = 12  # characters of a quoted line looked up in its paragraph


def quoted_part(answer: str, number: int, content: str, *, within: str = "") -> str:
    """The articles or sections of the paragraph that the answer's lines citing [number] quote, in order
    ("第十七条" when a chunk of 第十三条…第十九条 is cited for 第十七条's sentence); text before the paragraph's
    first article is under ``within``, the article a continuation chunk begins inside (core.models.Location);
    "" when no line quotes the paragraph word for word or the quoted text is under no numbered part."""
    labels: list[str] = []
    for line in answer.splitlines():
        if not any(int(m.group(1)) == number for m in CITATION.finditer(line)):
            continue
        probe = CITATION.sub("", line).strip().lstrip("-*•·").strip()[:QUOTE_PROBE]
        at = content.find(probe) if len(probe) >= QUOTE_PROBE // 2 else -1
        heads = [m for m in _PART_HEAD.finditer(content) if m.start() <= at]
        if heads:
            labels.append(heads[-1].group(1) or heads[-1].group(2))
        elif at >= 0 and within:
            labels.append(within)
    return "、".join(dict.fromkeys(labels))


def distinguishing_parts(hits: Sequence[Hit], quoted: Sequence[str] = ()) -> list[str]:
    """For each cited paragraph, what tells it from another of the same document, heading and location: the
    numbered parts the answer quotes from it (quoted_part), else the part it begins inside (a continued
    article, Location.within) or opens with (part_label), else its place in the document ("¶ 3"); "" when
    nothing is shared."""
    shared: dict[tuple[str, str, str], int] = {}
    for hit in hits:
        key = (hit.document_id, hit.heading, hit.location.label())
        shared[key] = shared.get(key, 0) + 1
    labels = list(quoted) or [""] * len(hits)
    return [
        (label or hit.location.within or part_label(hit.content) or f"¶ {hit.position + 1}")
        if shared[(hit.document_id, hit.heading, hit.location.label())] > 1
        else ""
        for hit, label in zip(hits, labels, strict=True)
    ]


def contiguous_citations(answer: str, items: Sequence[CitedSource]) -> tuple[str, list[CitedSource]]:
    """Sources renumbered 1..k in their order, and the answer's [n] markers rewritten to match.

    Citations keep the evidence numbers they were made with ([1] [2] [3] [6]); readers should see
    [1] [2] [3] [4]. Every listed marker is written as [n] (also [编号2]); markers that name no listed source
    are left as they are.
    """
    mapping = {item.n: index for index, item in enumerate(items, start=1)}

    def renumber(match: re.Match[str]) -> str:
        number = mapping.get(int(match.group(1)))
        return match.group(0) if number is None else f"[{number}]"

    return CITATION.sub(renumber, answer), [dataclasses.replace(item, n=mapping[item.n]) for item in items]


def render_sources(items: Sequence[CitedSource], lang: str) -> str:
    """Numbered references under an answer: "[2] 员工手册.pdf p. 12 — 第三章 考勤"."""
    if not items:
        return ""
    lines = [text("answer.sources", lang)]
    for item in items:
        label = item.where()
        where = f" {label}" if label else ""
        heading = f" — {item.heading}" if item.heading else ""
        link = f" ({item.source})" if item.is_web() else ""
        lines.append(f"[{item.n}] {item.document}{where}{heading}{link}")
    return "\n".join(lines)


MISSING_IN_NOTICE = 160  # characters of the named gap a notice quotes


def uncertainty_notice(lang: str, *, missing: str = "", multi_step: bool = True) -> str:
    """The notice appended when the evidence was not sufficient, worded by what is missing: the gap the
    assessment named, else (with no gap named) the multi-step or the one-search wording
    (docs/design.md#the-uncertainty-notice)."""
    gap = " ".join(missing.split()).rstrip("。.;；,，")
    if gap:
        return text("answer.uncertain_missing", lang, missing=shortened(gap, MISSING_IN_NOTICE))
    return text("answer.uncertain" if multi_step else "answer.uncertain_single", lang)


def prompt_tokens(messages: Sequence[Message]) -> int:
    """The estimated prompt size of messages on a server (cl100k count with a margin). CPU-bound."""
    return server_prompt_estimate(message_tokens(m.content for m in messages))


def fit_evidence(
    request: AnswerRequest, *, stop_label: str, window: int | None, reply_tokens: int
) -> AnswerRequest:
    """The request with its lowest-ranked paragraphs dropped until prompt and reply fit the window (a small
    local server's 4,096 tokens hold a few paragraphs, not the 16,000-token evidence budget); at least one
    paragraph stays. Unchanged when the window is unknown or everything fits. CPU-bound (tiktoken)."""
    if window is None:
        return request
    room = window - reply_tokens
    evidence = request.evidence
    while len(evidence) > 1:
        trial = dataclasses.replace(request, evidence=evidence)
        if prompt_tokens(answer_messages(trial, stop_label=stop_label)) <= room:
            break
        evidence = evidence[:-1]
    return request if evidence == request.evidence else dataclasses.replace(request, evidence=evidence)
