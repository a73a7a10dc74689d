"""Named things in text: proper-noun spans, quoted titles, numbers, jieba names; and what a document is about.

An English proper-noun span is a run of capitalised words, optionally joined by lower-case connectors
(``of``, ``the``, ``for``, ``de`` ...) and initials (``Roger O. Egeberg``); a possessive ending and a
leading article are dropped. A single capitalised word at the start of a sentence is only a name when
it is not an ordinary sentence opener. Chinese names come from jieba's nr/ns/nt/nz tags.
A paragraph is *about* an entity when its document title (extension and trailing "(...)" removed)
names that entity. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from adapters.extractive.language.terms import CJK, Token, dictionary_tag, fold, is_stop, pos_tokens, squeeze
from core.models import Hit
from core.retrieval.rerank import document_title
from core.text import STOP_WORDS_EN

_QUOTED = re.compile(r"[「『“《\"]([^」』”》\"]{2,60})[」』”》\"]")
_WORD = re.compile(r"[^\W_][\w'’.&/-]*")
_SENTENCE_BREAK = re.compile(r"[.!?:;。！？；|]\s*$|^\s*$|\n\s*(?:[-*+•]|\d+[.)])?\s*$")
_NEVER_A_NAME = frozenset(
    "other others another each every all some any both either neither several many most few such no none".split()
)  # capitalised only because they open a line, a list item or a table cell
# A question opening with a command ("Name three novels…") or a participle clause ("Considered the strongest…,
# which…", "Located in…"): that first word is no name.
_COMMANDS = frozenset("name list give identify tell describe explain mention".split())
_PARTICIPLES = frozenset(
    (
        "considered located situated founded established based named nicknamed called known regarded described "
        "released published directed produced written created developed designed built born formed held set "
        "titled entitled introduced launched opened composed recorded made started originated"
    ).split()
)
_CLAUSE_OPENING = re.compile(
    r"\s+(?:the|a|an|in|on|at|by|as|to|for|from|with|during|after|before|one|two|three|four|five)\b"
)
_CONNECTORS = frozenset("of the for de da del der di du la le van von y &".split())
_LOOSE_CONNECTORS = _CONNECTORS | frozenset("in on at to a an with from".split())
_ARTICLES = ("the ", "a ", "an ")
_CALENDAR = frozenset(
    (
        "january february march april may june july august september october november december "
        "monday tuesday wednesday thursday friday saturday sunday"
    ).split()
)
_OPENERS = frozenset(
    (
        "he she it they his her its their this that these those there after before during following "
        "although however while since when then later in on at as by for from with despite other "
        "several many some most each both all one two three first between among under over"
    ).split()
)
_ENTITY_FLAGS = ("nr", "ns", "nt", "nz")
TITLED_KINDS = ("法", "条例", "细则", "手册", "章程", "中心", "委员会", "管理局", "大学", "医院", "法院")
_NOT_IN_NAMES = frozenset("是的在和与被把对为有说将于向从给让叫也都就")
_NOT_GIVEN_NAME = ("v", "u", "p", "c", "d", "r", "m", "q", "f")  # 吴 + 灭亡 is a state and a verb, not a name
# Ordinary words jieba's dictionary tags as names (nr/ns/nz): read off its 150 most frequent name-tagged
# words, these are everyday nouns and adjectives ("扔东西", "城市的", "我不明白"), never a name to look for.
_ORDINARY_ZH = frozenset(
    "东西 城市 明白 和平 普通 文明 外国 平原 英雄 太阳 小姐 哥哥 海洋 湖泊 阳光 大桥 高原 道德 上市 美丽 "
    "卫星 雷达 荣誉 山区 武功 爱国 建国 陆军".split()
)
# Measure words: after a number ("多少", "几", "三") jieba's new-word guessing glues one to the next character
# ("多少/颗大/犬齿", tagged nz), which is a count, not a name.
_MEASURE_WORDS = frozenset("个颗粒条只张件本位名次座头匹辆架台部家所间套双对把枚块片根支首篇层米岁年天")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)?")
_ABBREVIATED = re.compile(r"[A-Z]\.|(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|Sgt|Capt|Rev|Mt|Ft)\.")
_UNITS = frozenset("kb mb gb tb cny usd rmb eur am pm utc cst".split())
_DASHES = str.maketrans({"–": "-", "—": "-", "‐": "-", "’": "'", "‘": "'", "“": '"', "”": '"'})


def normal(text: str) -> str:
    """fold() with typographic dashes and quotes made plain and whitespace collapsed."""
    return " ".join(fold(text).translate(_DASHES).split())


def title_of(hit: Hit) -> str:
    """The document's title: its name without file extension or a trailing "(...)" qualifier."""
    return document_title(hit.document_name)


def subject_of(hit: Hit) -> str:
    """What the paragraph's document is about, by name: its own first heading when its file name is that
    heading with something added ("Kate Millett-133a23" under "# Kate Millett"), else its title."""
    title, heading = title_of(hit), top_heading(hit)
    if heading and len(heading) < len(title) and normal(title).startswith(normal(heading)):
        return heading
    return title


def is_qualified(hit: Hit) -> bool:
    """Whether the document name carries a trailing "(...)" qualifier (another document may share the title)."""
    name = re.sub(
        r"\.(?:md|markdown|txt|html?|pdf|docx?)$", "", hit.document_name.strip(), flags=re.IGNORECASE
    )
    return name.rstrip().endswith((")", "）"))


def _strip_article(text: str) -> str:
    low = text.lower()
    for article in _ARTICLES:
        if low.startswith(article) and len(text) > len(article) + 1:
            return text[len(article) :]
    return text


def same_entity(entity: str, title: str) -> bool:
    """Whether a document title names the entity: equal (ignoring case, articles, hyphens in file names
    and a ", qualifier"), or one a word-prefix or word-suffix of the other when the shorter has at least
    two words ("Indianapolis Motor Speedway" / "... Speedway on Thursday", "George V" / "King George V")."""
    a, b = (normal(_strip_article(text)).replace("_", " ") for text in (entity, title))
    a, b = (re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text) for text in (a, b))
    if not a or not b:
        return False
    if CJK.search(a) or CJK.search(b):
        return squeeze(a) == squeeze(b)
    if a == b or a == b.split(",")[0].strip() or b == a.split(",")[0].strip():
        return True
    short, long = sorted((a, b), key=len)
    return len(short.split()) >= 2 and (long.startswith(short + " ") or long.endswith(" " + short))


def top_heading(hit: Hit) -> str:
    """The first heading of the paragraph's path: a document's own title (its ``# `` line) when it has one."""
    return hit.heading.split(" > ", 1)[0].strip()


def own_heading(hit: Hit) -> str:
    """The last heading of the paragraph's path: the section the paragraph itself belongs to ('' when none)."""
    return hit.heading.rsplit(" > ", 1)[-1].strip()


def is_about(hit: Hit, entity: str) -> bool:
    """Whether the paragraph's document is about the entity: its title (document name, or the document's
    own first heading, since file names often carry suffixes such as "-2b1e0c") names it."""
    heading = top_heading(hit)
    return same_entity(entity, title_of(hit)) or (
        bool(heading) and same_entity(entity, document_title(heading))
    )


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (any(c.isupper() for c in word) and any(c.isdigit() for c in word))


def _numbered_name(words: list[re.Match[str]], i: int, text: str) -> bool:
    """A number opening or continuing a name in a question: numbers or ordinals followed by a capitalised
    word (888 7th Avenue). Passages use numbers before names as modifiers ("1945 American comedy")."""
    k = i
    while k < len(words) and _ORDINAL.fullmatch(words[k].group(0)):
        if k > i and text[words[k - 1].end() : words[k].start()] != " ":
            return False
        k += 1
    return (
        k > i
        and k < len(words)
        and text[words[k - 1].end() : words[k].start()] == " "
        and (words[k].group(0)[:1].isupper())
    )


def english_spans(text: str, *, question: bool = False) -> list[str]:
    """Proper-noun spans of English text, in order (see the module docstring).

    In a question (question=True) spans also run over in/on/at/to/with ("Armageddon in Retrospect"),
    and a capitalised first word is a name unless it is an ordinary opener: questions are short and
    name their subjects, while passages use those words between separate names ("TCS in Kochi").
    """
    connectors = _LOOSE_CONNECTORS if question else _CONNECTORS
    spans: list[str] = []
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        word = words[i].group(0)
        if not (_is_capitalised(word) or (question and _numbered_name(words, i, text))):
            i += 1
            continue
        at_start = bool(_SENTENCE_BREAK.search(text[: words[i].start()]))
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1].end() : words[j].start()]
            if gap.strip(" ") not in ("", "-"):
                break
            following = words[j].group(0)
            previous = words[j - 1].group(0)
            if _is_capitalised(following) and (
                not previous.endswith(".") or _ABBREVIATED.fullmatch(previous)
            ):
                j += 1
            elif question and following[:1].isdigit() and _numbered_name(words, j, text):
                j += 1
            elif (
                following.lower() in connectors
                and j + 1 < len(words)
                and _is_capitalised(words[j + 1].group(0))
            ):
                j += 2
            else:
                break
        chosen = [w.group(0) for w in words[i:j]]
        if question and at_start and _opens_a_clause(chosen[0].lower(), text[words[i].end() :]):
            chosen.pop(0)  # "Located in Paris" names Paris
        i = j
        while chosen and (chosen[0].lower() in connectors or chosen[0].lower() in STOP_WORDS_EN):
            chosen.pop(0)
            at_start = False
        if not chosen or not any(_is_capitalised(w) for w in chosen):
            continue
        span = " ".join(chosen)
        span = re.sub(r"['’]s$", "", span).rstrip(".,'’")
        first = chosen[0].lower().rstrip(".")
        if len(chosen) == 1 and (
            (at_start and (first in _OPENERS or (chosen[0].istitle() and not question)))
            or first in _CALENDAR
            or first in _NEVER_A_NAME
            or is_stop(first)
            or len(span) < 2
        ):
            continue
        if span and span not in spans:
            spans.append(span)
    return spans


def _opens_a_clause(first: str, rest: str) -> bool:
    """Whether a question's capitalised first word is a command or a participle opening a clause ("Name three
    …", "Considered the strongest …", "Located in …"), not a name ("Alfred directed …" keeps Alfred)."""
    return (first in _COMMANDS or first in _PARTICIPLES) and bool(_CLAUSE_OPENING.match(rest))


def quoted(text: str) -> list[str]:
    """Quoted titles and terms (「」, 《》, “”, "")."""
    return [m.group(1).strip() for m in _QUOTED.finditer(text) if m.group(1).strip()]


def numbers(text: str) -> list[str]:
    """Numbers and ranges such as 2026, 1,500 or 1992-93, as written (dashes made plain)."""
    plain = unicodedata.normalize("NFKC", text).translate(_DASHES)
    return [m.group(0) for m in re.finditer(r"\d+(?:[.,]\d+)*(?:-\d+)?", plain)]


def chinese_names(text: str) -> list[str]:
    """Person, place, organisation and other proper names jieba finds (surnames rejoined)."""
    found: list[str] = []
    tokens = [t for t in pos_tokens(text, hmm=True) if t.word.strip()]
    for i, token in enumerate(tokens):
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        following = after.word if after is not None and not after.flag.startswith(_NOT_GIVEN_NAME) else ""
        if token.flag == "nr" and len(token.word) == 1 and 1 <= len(following) <= 2 and CJK.match(following):
            if len(following) == 2 and following[-1] in _NOT_IN_NAMES:
                following = following[0]  # 潘 + 淑是: the verb after the given name is no part of it
            name = token.word + following  # a surname jieba cut off its given name (林 + 远航)
        elif _dated_act(tokens, i):
            continue
        elif token.word in _ORDINARY_ZH or _counted(tokens, i) or _familiar(token):
            continue
        elif token.flag.startswith(_ENTITY_FLAGS) and len(token.word) >= 2 and CJK.search(token.word):
            name = token.word
        else:
            continue
        if name not in found:
            found.append(name)
    return found


_FAMILIAR_PREFIXES = ("老", "小")


def _familiar(token: Token) -> bool:
    """Whether a word jieba tags as a person's name is 老/小 before a common noun (老公, 老东家, 老太太,
    小学生): how people call someone or something, not a name to look for; 老王 and 老李 (a surname) stay
    names."""
    word = token.word
    return (
        token.flag == "nr"
        and len(word) >= 2
        and word.startswith(_FAMILIAR_PREFIXES)
        and dictionary_tag(word[1:]) == "n"
    )


def _counted(tokens: Sequence[Token], i: int) -> bool:
    """Whether the token is a measure word glued to what follows it, right after a number ("多少颗大")."""
    return i > 0 and tokens[i - 1].flag == "m" and tokens[i].word[0] in _MEASURE_WORDS


def _dated_act(tokens: Sequence[Token], i: int) -> bool:
    """Whether the token is what was done to a document on a date ("2018年**修正**的公司法"): between a date
    and "的" + a document's title a word is an act, not a name, whatever jieba's dictionary tags it (it tags
    修正 as a person's name); "2018年王小明的案子" keeps its name."""
    before = tokens[i - 1].word if i > 0 else ""
    if not before.endswith(("年", "月", "日")) or i + 1 >= len(tokens) or tokens[i + 1].word != "的":
        return False
    title = ""
    for token in tokens[i + 2 :]:  # the noun phrase after 的 (中华人民共和国 + 公司法)
        if not token.flag.startswith("n"):
            break
        title += token.word
    return title.endswith(TITLED_KINDS)


def titled_terms(text: str) -> list[str]:
    """Names of documents and bodies by their kind: a word of three or more characters, or a noun plus the
    kind, ending in 法, 条例, 细则, 手册, 章程, 中心, 委员会, 管理局, 大学, 医院 or 法院 (行政复议法, 员工手册)."""
    found: list[str] = []
    tokens = [t for t in pos_tokens(text) if t.word.strip()]
    for i, token in enumerate(tokens):
        word = token.word
        if len(word) >= 3 and CJK.match(word) and word.endswith(TITLED_KINDS):
            name = word
        elif (
            word in TITLED_KINDS
            and i > 0
            and tokens[i - 1].flag.startswith("n")
            and CJK.match(tokens[i - 1].word)
        ):
            name = tokens[i - 1].word + word
        else:
            continue
        if name not in found:
            found.append(name)
    return found


def entities_in(text: str) -> list[str]:
    """Named things in a passage: quoted terms, proper-noun spans, and jieba person/place/organisation names."""
    found: list[str] = []
    for name in [*quoted(text), *english_spans(text), *(chinese_names(text) if CJK.search(text) else [])]:
        name = name.strip()
        key = squeeze(name)
        if len(key) >= 2 and key not in _UNITS and not is_stop(name) and name not in found:
            found.append(name)
    return found
