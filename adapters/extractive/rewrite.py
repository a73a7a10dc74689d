"""Follow-up rewrite without a model: attach the previous turn's subject to an elliptical question.

A question is elliptical when it refers back (它/它们/这个/那个/这些/那些/这类/其/其中/该/上述/此/这; 他/她
when the previous question names a person; it/they/them/its/their/this/that/these/those), asks "X 呢?" / "what
about X?", varies the previous question's condition ("那如果只是喝了点酒开车呢?", "那孩子已经九岁了呢?": the
condition, then the previous question), has no content word of its own ("为什么?", "具体怎么算?"), drops its
subject (no noun phrase or name of its own, a party such as 对方 being none: "那违反了要赔多少?",
"对方一直不给怎么办?", "交了申请以后多久之内可以撤回?": the previous topic's terms are put in front), or opens
with a modal verb or a condition that starts with its predicate ("要付经济补偿吗?", "如果辞退了要给补偿吗?":
the previous topic's terms it lacks are put in front). The subject is the latest turn's noun phrases (jieba
POS; a title of a document its answer cited, or a phrase its quotes continue with the verb after it, stays
whole), taken from that turn's own rewrite, so a chain of follow-ups keeps its topic; after a question
asking who or which one, a pronoun means the answer (core.retrieval.topic.answered_entity). Self-contained
questions are returned unchanged; 它/它们/其 after a noun of the question's own refer to that noun
("公司拖着工资不发，劳动部门让它限期付" is about 公司), 他/她 after a name or another party of its own to that
one ("对方说他不管"). CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from adapters.extractive.language.entities import chinese_names, entities_in
from adapters.extractive.language.terms import (
    Token,
    is_content,
    is_nounish,
    noun_phrases,
    pos_tokens,
    terms,
)
from adapters.extractive.question.parts import has_content
from adapters.extractive.rewrite_en import (
    condition_en,
    content_span_en,
    points_back_en,
    replace_pronouns_en,
    swap_same_kind,
)
from core.models import Turn
from core.retrieval.topic import answered_entity, asks_who, document_topic
from core.text import is_chinese

MAX_DEPTH = 3
MAX_SUBJECT_PHRASES = 3

PRONOUNS_ZH = frozenset(
    (
        "它 它们 其 其中 该 此 上述 这 这个 那个 这些 那些 这种 那种 这类 那类 此类 该类 这项 那项 该项 此项 "
        "前者 后者 他 她 他们 她们"
    ).split()
)
MAX_TOPIC_TERMS = 4
# the parties of what was being discussed: like a pronoun, "对方一直不给怎么办?" names no topic of its own
_PARTIES_ZH = frozenset("对方 双方 一方 另一方 他方 本人 他人 别人 自己".split())
_OTHER_PARTIES_ZH = _PARTIES_ZH - {"双方", "本人", "自己"}  # one 他/她 can mean ("对方说他不管")
_POSSESSIVE_ZH = frozenset({"其"})
_BOUND_BY_OWN_NOUN_ZH = frozenset({"它", "它们", "其"})  # after a noun of the question, they refer to it
# a person: after a name or another party of the question that one, else the previous question's person
_PERSONS_ZH = frozenset({"他", "她", "他们", "她们"})
# longest alternatives first (they make a pattern)
_CONDITIONALS_ZH = ("如果", "要是", "假如", "假设", "若是", "万一", "一旦", "若")
# "如果被辞退了": the condition has no subject
_PREDICATE_OPENERS_ZH = frozenset("被 把 没 没有 不 未".split())
# a modal opening a question needs a subject before it: "要付经济补偿吗?" asks about the thread's topic
_MODALS_ZH = frozenset(
    "要 能 可以 需要 应该 应当 该 得 必须 会 还要 还能 还可以 还需要 还会 是否 能否 可否 要不要 能不能 "
    "可不可以 会不会 需不需要 用不用".split()
)
_OPENING_ADVERBS_ZH = frozenset("那 那么 还 也 都".split())
_NEEDS_NOUN_ZH = frozenset({"该", "此"})  # "该如何申请" is the modal "should", "该期限" a reference
_WHAT_ABOUT_EN = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*[?.!]*\s*$", re.IGNORECASE)
_WHAT_ABOUT_ZH = re.compile(r"^\s*(?:那么|那|还有)?\s*(.+?)\s*呢\s*[？?。]*\s*$")
_IF_ZH = "|".join(_CONDITIONALS_ZH)
_VARIATION_ZH = re.compile(
    rf"^\s*(?:(?:那么|那)\s*(?:{_IF_ZH})?|{_IF_ZH})(.+?)\s*呢\s*[？?。]*\s*$"
)  # "那如果…呢", "要是…呢", and "那孩子已经九岁了呢" (a clause after 那 is a condition too)
_LEADING_THEN_ZH = re.compile(r"^\s*(?:那么|那)(?=\S)")
_SPACES = re.compile(r"\s{2,}")


def rewrite_question(history: Sequence[Turn], question: str) -> str:
    """The question made standalone using the latest turn's subject; unchanged when self-contained."""
    turns = list(history)[-MAX_DEPTH:]
    rewrites: list[str] = []  # each turn's own rewrite against the turns before it, computed once
    for index, turn in enumerate(turns):
        rewrites.append(_rewrite(turns[:index], rewrites, turn.question))
    return _rewrite(turns, rewrites, question)


def _rewrite(history: list[Turn], rewrites: Sequence[str], question: str) -> str:
    """The question against the turns before it, whose own rewrites are rewrites[: len(history)]."""
    if not history or not question.strip():
        return question
    previous = rewrites[len(history) - 1]
    titles = tuple(document_topic(name) for name in history[-1].cited)
    compounds = quoted_compounds(previous, history[-1].answer) if is_chinese(previous) else ()
    subject = subject_of(previous, (*titles, *compounds))
    if not subject:
        return question
    english = not is_chinese(question)
    answered = answered_entity(previous, history[-1].cited)  # "Which university…?": "it" is the one cited
    if answered is not None:
        rewritten = (
            replace_pronouns_en(question, answered)
            if english
            else _replace_pronouns_zh(question, answered, person=answered)
        )
    elif english:
        source = _antecedent_question(history, rewrites) or previous
        rewritten = replace_pronouns_en(question, subject_of(source) or subject, source)
    else:
        rewritten = _replace_pronouns_zh(question, subject, person=_person_in(previous, titles))
    if rewritten is None:
        rewritten = _what_about(question, previous, english=english)
    if rewritten is None and not english:
        rewritten = _variation(question, previous)
    if rewritten is None and english:
        rewritten = condition_en(question, previous)
    if rewritten is None and not has_content(question):
        rewritten = f"{question.strip()} ({subject})" if english else f"{subject} {question.strip()}"
    if rewritten is None and not english:
        dropped = _dropped_topic(question, previous, (*titles, *compounds))
        rewritten = f"{dropped} {_LEADING_THEN_ZH.sub('', question.strip())}" if dropped else None
    return _SPACES.sub(" ", rewritten).strip() if rewritten else question


def _antecedent_question(history: list[Turn], rewrites: Sequence[str]) -> str:
    """The (rewritten) question an English pronoun in the next turn points back to: the latest turn asked
    without a pronoun of its own, since a turn with one took its referent from further back ("Who approves
    it?" after "Can I carry it over?" after "How many days of annual leave…?" is about annual leave, not about
    carrying it over); "" when every turn has one."""
    for index in range(len(history) - 1, -1, -1):
        if not points_back_en(history[index].question):
            return rewrites[index]
    return ""


def topic_terms(question: str, titles: Sequence[str] = ()) -> str:
    """The previous question's topic as search terms: its noun phrases (a cited title it names whole, _phrases),
    then its other content words."""
    phrases = _phrases(question, titles)
    inside = "".join(phrases)
    extra = [term for term in terms(question) if term not in inside]
    return " ".join([*phrases, *extra][:MAX_TOPIC_TERMS])


def _phrases(question: str, titles: Sequence[str]) -> list[str]:
    """The question's noun phrases, a title of a document the previous answer cited that the question names
    taking the place of the phrases jieba cut it into ("楼曾瑞毕业于哪个大学" -> 楼曾瑞, 大学; not 楼, 瑞毕业)."""
    named = _named_titles(question, titles)
    spans = [(question.index(title), question.index(title) + len(title)) for title in named]

    def inside_a_title(phrase: str) -> bool:
        at = question.find(phrase)
        return at >= 0 and any(at < end and start < at + len(phrase) for start, end in spans)

    return [*named, *(phrase for phrase in noun_phrases(question) if not inside_a_title(phrase))]


def quoted_compounds(question: str, answer: str) -> tuple[str, ...]:
    """The question's noun phrases that run on into the verb after them in the words its answer quotes: jieba
    tags 限制 a verb, so the noun phrase of "竞业限制最长能约定多久" is 竞业, while the sources it quoted speak of
    竞业限制; kept whole like a cited title."""
    tokens = pos_tokens(question)
    tagged = "".join(token.word for token in tokens)  # the question as tagged (NFKC: "，" is ",")
    starting: dict[int, Token] = {}  # the token starting at each offset of tagged
    at = 0
    for token in tokens:
        starting[at] = token
        at += len(token.word)
    compounds = []
    for phrase in noun_phrases(question, tokens=tokens):
        following = starting.get(tagged.find(phrase) + len(phrase))
        if following is not None and following.flag.startswith("v") and phrase + following.word in answer:
            compounds.append(phrase + following.word)
    return tuple(compounds)


def _named_titles(question: str, titles: Sequence[str]) -> list[str]:
    """The titles (of documents the previous answer cited) the question holds whole."""
    return [title for title in dict.fromkeys(titles) if len(title) >= 2 and title in question]


def _dropped_topic(question: str, previous: str, titles: Sequence[str] = ()) -> str:
    """The previous topic's terms a Chinese follow-up needs in front: all of them when it drops its subject,
    those it lacks when it opens with a modal or a condition without a subject; "" when it needs none."""
    if _drops_subject(question, previous):
        return topic_terms(previous, titles)
    if _subjectless(question):
        return " ".join(term for term in topic_terms(previous, titles).split() if term not in question)
    return ""


def _drops_subject(question: str, previous: str) -> bool:
    """A Chinese follow-up with no noun phrase or name of its own (a party, 对方 or 双方, is none), sharing no
    term with the previous topic."""
    if any(phrase not in _PARTIES_ZH for phrase in noun_phrases(question)) or entities_in(question):
        return False
    own = set(terms(question)) - _PARTIES_ZH
    return not own & set(terms(previous))


def _subjectless(question: str) -> bool:
    """A question opening with a modal verb ("要付经济补偿吗?", "还能要回来吗?") or with a condition that
    starts with its predicate ("如果辞退了要给补偿吗?", "要是被拖欠了呢"): who or what it is about was
    dropped, so it is the previous topic's."""
    tokens = [t for t in pos_tokens(question) if t.word.strip()]
    while tokens and tokens[0].word in _OPENING_ADVERBS_ZH:
        tokens = tokens[1:]
    if tokens and tokens[0].word in _MODALS_ZH:
        return True
    if len(tokens) < 2 or tokens[0].word not in _CONDITIONALS_ZH:
        return False
    opener = tokens[1]
    return opener.word in _PREDICATE_OPENERS_ZH or opener.flag in ("v", "d", "vd", "ad")


def _variation(question: str, previous: str) -> str | None:
    """ "那如果作品是公司的呢?" after "个人写的作品著作权保护期是多久?" -> the condition, then the previous question;
    so is "那孩子已经九岁了呢?" (a clause, not a bare topic, after 那: _what_about took the bare ones)."""
    match = _VARIATION_ZH.match(question)
    if not match or not has_content(match.group(1)):
        return None
    return f"{match.group(1).strip(' ，,')}，{previous.strip()}"


def subject_of(question: str, titles: Sequence[str] = ()) -> str:
    """The salient subject of a question: its first noun phrases (Chinese, a cited title it names whole) or
    content span (English)."""
    if not is_chinese(question):
        return content_span_en(question)
    phrases = _phrases(question, titles) or terms(question)
    return " ".join(phrases[:MAX_SUBJECT_PHRASES])


def _person_in(previous: str, titles: Sequence[str]) -> str:
    """Who 他/她 mean after the previous question: a name it gives ("张三借了我五万块钱…"), else a cited title it
    names; "" when it names none or asks who (谁, 哪位: the person is then its answer, not a word of it)."""
    if asks_who(previous):
        return ""
    named = [*chinese_names(previous), *_named_titles(previous, titles)]
    return named[0] if named else ""


def _replace_pronouns_zh(question: str, subject: str, *, person: str = "") -> str | None:
    """The question with each pronoun that refers back replaced: by the subject, 他/她 by the person (left as
    they are without one: "她不让我见孩子" after "离婚后孩子归谁?" is not about 孩子)."""
    tokens = pos_tokens(question)
    words = [t.word for t in tokens]
    out: list[str] = []
    replaced = False
    own_noun = False  # a noun of the question's own before this word ("公司…劳动部门让它限期付": 它 is 公司)
    own_person = False  # a name or a party of its own before this word ("对方说他不管": 他 is 对方)
    skip_until = -1
    for i, word in enumerate(words):
        if i <= skip_until:
            continue
        following = _next_word(tokens, i)
        noun_follows = following is not None and _is_noun_token(tokens[following])
        if (
            word not in PRONOUNS_ZH
            or (word in _NEEDS_NOUN_ZH and not noun_follows)
            or (word in _BOUND_BY_OWN_NOUN_ZH and own_noun)
            or (word in _PERSONS_ZH and (own_person or not person))
        ):
            own_noun = own_noun or _is_noun_token(tokens[i])
            own_person = own_person or tokens[i].flag == "nr" or word in _OTHER_PARTIES_ZH
            out.append(word)
            continue
        replaced = True
        meant = person if word in _PERSONS_ZH else subject
        if word == "其中":
            out.append(meant + "中")
        elif following is not None and noun_follows and word not in _PERSONS_ZH:
            noun = tokens[following].word
            out.append(meant if noun in meant else f"{meant}的{noun}")
            skip_until = following
        elif word in _POSSESSIVE_ZH:
            out.append(meant + "的")
        else:
            out.append(meant)
    if not replaced:
        return None
    if out and out[0] in ("那", "那么") and len(out) > 1:
        out = out[1:]  # "那它们…": a discourse "then", not a pronoun
    return "".join(out)


def _next_word(tokens: list[Token], index: int) -> int | None:
    for j in range(index + 1, len(tokens)):
        if tokens[j].word.strip():
            return j
    return None


def _is_noun_token(token: Token) -> bool:
    return is_content(token) and token.flag.startswith(("n", "eng", "vn", "j"))


def _what_about(question: str, previous: str, *, english: bool) -> str | None:
    """ "那病假呢?" after "年假有几天?" -> "病假有几天?" (the previous question with its subject replaced)."""
    match = (_WHAT_ABOUT_EN if english else _WHAT_ABOUT_ZH).match(question)
    if not match:
        return None
    topic = match.group(1).strip()
    bare = re.sub(r"^(?:a|an|the)\s+", "", topic, flags=re.IGNORECASE) if english else topic
    tokens = [t for t in pos_tokens(bare) if t.word.strip()]
    bare_topic = len(tokens) <= 8 and all(is_nounish(t) or t.word == "的" for t in tokens)
    if not bare_topic or not has_content(topic):
        return None
    phrases = noun_phrases(previous)
    if english:
        swapped = swap_same_kind(previous, topic)
        if swapped is not None:
            return swapped
        span = content_span_en(previous)
        if span and span in previous:
            return previous.replace(span, topic, 1)
    elif phrases and phrases[0] in previous:
        return previous.replace(phrases[0], topic, 1)
    return f"{topic} {previous}"
