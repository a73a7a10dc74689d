"""What kind of quantity a question part asks for, and whether a text states one of that kind (pure).

"几天" is answered by a number of days, "扣几分" by a number of points, "多少钱" by an amount of money, "多久"
by any duration, "比例" by a share, "how many years" by a number of years, "how long" by a duration or a
length, "when" / "什么时候" by a year, date, century or decade ("12世纪", "the 1990s"), "what year" by a
year, "电话是多少" / "what is the phone number" by a number written in digits ("12345", not "七个工作日");
a bare "多少" / "how many" by any number. A paragraph that only shares the topic ("列入本级预算",
"具体办法由国务院规定") does not answer such a part, and neither does one stating a number of another kind
("连续工作一年以上" for "每年休几天"). Article labels (第二十条) are not numbers of anything. A part asking
for a limit ("最长", "至少", "at most") is answered by a text stating a limit of that direction
("不得超过六个月", "not less than"): asked_bound and states_bound.
"""

from __future__ import annotations

import re

_CN_NUMBER = r"[零〇一二两三四五六七八九十百千万亿半几数]+"
_NUMBER = rf"(?:\d+(?:[.,]\d+)*|{_CN_NUMBER})"
_EN_NUMBER = (
    r"(?:\d+(?:[.,]\d+)*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    r"hundred|thousand|million|billion|dozen|a|an|several)"
)
DURATION_ZH = ("日", "天", "周", "星期", "月", "年", "小时", "分钟", "秒")
DURATION_EN = ("second", "minute", "hour", "day", "week", "month", "year", "decade", "century")
# "how long is the bridge" asks a length, "how long did the siege last" a duration: either answers "how long"
LENGTH_EN = (
    "metre",
    "meter",
    "kilometre",
    "kilometer",
    "mile",
    "foot",
    "feet",
    "yard",
    "km",
    "mi",
    "m",
    "ft",
)
_UNIT_SYMBOLS = frozenset(unit for unit in LENGTH_EN if len(unit) <= 2)  # written right after digits ("16km")
MONEY_ZH = ("元", "万元", "亿元", "倍")
_NOT_POINTS = "(?![钟之])"  # 分 of points, not of 三十分钟 or 五分之一
SHARE_ZH = ("%", "％", "百分之", "分之", "成")

# A telephone number is answered by one written in digits ("12345", "010-6512 3456"), not by "七个工作日"
_PHONE_ASKED_ZH = re.compile(r"(?:电话|号码|热线|手机号)(?:号码)?(?:是|为)?(?:多少|几号|什么|哪个)")
_PHONE_ASKED_EN = re.compile(r"\b(?:what|which)\b.*\b(?:(?:phone|telephone|fax) number|hotline)\b", re.I)
_PHONE_STATED = re.compile(
    r"(?<![\d.,])\+?\d{3,}(?:[-\s]\d{2,})*"
    r"(?![\d.,]|\s*(?:年|月|日|号|元|%|％|人|个|名|次|件|条|项|天|小时|分|米|公里|吨|克|平方|万|亿|[a-zA-Z]))"
)

# (pattern of the asking words, units a stated number must carry; () = any number)
_ASKS_ZH: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"(?:几|多少)个?(?:工作日|日|天)"), ("日", "天")),
    (re.compile(r"(?:几|多少)个?(?:星期|周)"), ("周", "星期", "日", "天")),
    (re.compile(r"(?:几|多少)个?月"), ("月",)),
    (re.compile(r"(?:几|多少)年|哪一?年"), ("年",)),
    (re.compile(r"(?:几|多少)(?:个)?小时"), ("小时",)),
    (re.compile(r"(?:几|多少)分钟"), ("分钟",)),
    (re.compile(rf"(?:几|多少)分{_NOT_POINTS}"), ("分",)),  # points or marks ("扣几分", "考多少分")
    (re.compile(r"(?:几|多少)(?:周)?岁|多大年龄|多大年纪|年龄"), ("岁",)),
    (
        re.compile(r"多少钱|多少元|多少万|多少[\u4e00-\u9fff]{0,2}费|金额|数额"),
        MONEY_ZH,
    ),  # 多少官费, 多少手续费
    (re.compile(r"(?:几|多少)倍"), ("倍",)),
    (re.compile(r"比例|百分之几|百分比|几成"), SHARE_ZH),
    (re.compile(r"何时|什么时候|几时"), (*DURATION_ZH, "世纪")),  # a point in time: a date, a year, a century
    (re.compile(r"多久|多长时间|多长期限|期限是"), DURATION_ZH),
    (_PHONE_ASKED_ZH, ("@phone",)),
    (re.compile(r"(?:几|多少)(?:个|名|位|人|次|项|条|种|家|本)|多少"), ()),
)
# "哪几种" asks for a list; "赔多少" / "罚多少" are often answered by a standard (按…的二倍), not a number.
_NOT_ASKING_ZH = re.compile(r"哪几|(?:赔|罚|补偿|支付|付|扣)(?:偿)?多少(?!钱|元|万|天|日|年|月|分)")
_ASKS_EN: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\bhow many (?:days|weeks|months|years|hours|minutes|decades)\b", re.I), DURATION_EN),
    (re.compile(r"\bhow long\b", re.I), (*DURATION_EN, *LENGTH_EN)),
    (re.compile(r"\bhow often\b", re.I), DURATION_EN),
    (re.compile(r"\bhow old\b|\bwhat age\b|\bat what age\b", re.I), ("year", "age")),
    (_PHONE_ASKED_EN, ("@phone",)),
    (re.compile(r"\bwhen\b", re.I), ("@when",)),
    (re.compile(r"\bwhat year\b|\bin which year\b|\bwhat date\b", re.I), ("@year",)),
    (re.compile(r"\bhow (?:many|much|far|big|large|tall|high)\b", re.I), ()),
)
_ARTICLE_LABEL = re.compile(rf"第{_CN_NUMBER}条(?:之{_CN_NUMBER})?|第{_CN_NUMBER}[章节款项编]|第\d+条")
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]\d\d|20\d\d)(?!\d)")
# "when" is also answered by an earlier year, an era-marked year, a century or a decade
_WHEN = re.compile(
    r"\bin (?:the )?1[0-4]\d\d\b|\b\d{1,4}\s*(?:BC|BCE|AD|CE)\b|\b(?:AD|CE)\s*\d{1,4}\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)[\s-]+(?:century|centuries)\b|\b(?:first|second|third|fourth|fifth|sixth|seventh|"
    r"eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
    r"nineteenth|twentieth|twenty-first)[\s-]+century\b|\b(?:1[0-9]|20)\d0s\b"
)


def asked_units(part: str) -> tuple[str, ...] | None:
    """The units a number answering the part must carry: None when the part asks for no quantity, () for
    any number."""
    if re.search(r"[\u4e00-\u9fff]", part):
        if _NOT_ASKING_ZH.search(part):
            return None
        for pattern, units in _ASKS_ZH:
            if pattern.search(part):
                return units
        return None
    for pattern, units in _ASKS_EN:
        if pattern.search(part):
            return units
    return None


_CLAUSE = re.compile(r"[^，,；;：:]+")


def asking_clause(part: str) -> str:
    """The clause of the part that asks for the quantity ("多久之内可以去申请劳动仲裁" of "被单位辞退了，多久之内
    可以去申请劳动仲裁"): what the number must be about, apart from the asker's situation. The whole part when
    it asks for no quantity or has one clause."""
    if asked_units(part) is None:
        return part
    clauses = [c.group(0).strip() for c in _CLAUSE.finditer(part) if c.group(0).strip()]
    asking = [c for c in clauses if asked_units(c) is not None]
    return asking[-1] if len(clauses) > 1 and len(asking) == 1 else part


def states_quantity(text: str, units: tuple[str, ...] = ()) -> bool:
    """Whether the text states a number carrying one of the units (any number when units is empty)."""
    plain = _ARTICLE_LABEL.sub(" ", text)
    if "@phone" in units:
        return any(not _YEAR.fullmatch(found.group(0)) for found in _PHONE_STATED.finditer(plain))
    if "@year" in units:
        return bool(_YEAR.search(plain))
    if "@when" in units:
        return bool(_YEAR.search(plain) or _WHEN.search(plain))
    if not units:
        return bool(
            re.search(
                rf"\d|百分之|{_CN_NUMBER}(?:个|名|人|次|项|条|种|日|天|月|年|元|倍|岁|小时|分之|以上|以下|以内)",
                plain,
            )
            or (
                re.search(rf"\b{_EN_NUMBER}\b", plain, re.I)
                and re.search(
                    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|hundred|thousand|million|billion)\b",
                    plain,
                    re.I,
                )
            )
        )
    for unit in units:
        if unit in SHARE_ZH[:2] and unit in plain:
            return True
        if unit in ("百分之", "分之") and re.search(rf"{_NUMBER}?{unit}{_NUMBER}", plain):
            return True
        if re.search(r"[a-z]", unit):
            if re.search(rf"\b{_EN_NUMBER}[\s-]+{unit}s?\b", plain, re.I):
                return True
            if unit in _UNIT_SYMBOLS and re.search(rf"\d{unit}\b", plain):
                return True
            continue
        after = _NOT_POINTS if unit == "分" else ""
        if re.search(rf"{_NUMBER}\s*(?:个|多|余)?\s*(?:工作|周)?{re.escape(unit)}{after}", plain):
            return True
    return False


def answers_asked_quantity(part: str, text: str) -> bool:
    """True unless the part asks for a quantity the text does not state (see the module docstring)."""
    units = asked_units(part)
    return units is None or states_quantity(text, units)


# A limit asked for, and a limit stated, by direction: "最长…多久" is answered by "不得超过六个月".
_BOUND_ASKED = {
    "upper": re.compile(
        r"最长|最多|最高|最大|最久|最晚|最迟|上限|至多|封顶|\b(?:at most|maximum|longest|latest)\b", re.I
    ),
    "lower": re.compile(
        r"最少|最低|最短|最早|至少|下限|起码|\b(?:at least|minimum|shortest|earliest|fewest)\b", re.I
    ),
}
_BOUND_STATED = {
    "upper": re.compile(
        r"不得超过|不超过|不能超过|不应超过|不得多于|不得长于|不得晚于|最长|最多|最高|最大|最迟|以内|以下|至多|上限|"
        r"\b(?:not (?:to )?exceed|no more than|at most|maximum|up to|no later than)\b",
        re.I,
    ),
    "lower": re.compile(
        r"不得少于|不少于|不得低于|不低于|不得短于|不得早于|最少|最低|最短|至少|下限|"
        r"\b(?:at least|no less than|not less than|minimum|no earlier than)\b",
        re.I,
    ),
}


def asked_bound(part: str) -> str | None:
    """ "upper" or "lower" when the part asks for a quantity and for a limit of it ("最长可以约定多久"), else None."""
    if asked_units(part) is None:
        return None
    found = [direction for direction, pattern in _BOUND_ASKED.items() if pattern.search(part)]
    return found[0] if len(found) == 1 else None


def states_bound(text: str, direction: str) -> bool:
    """Whether the text states a limit of that direction ("不得超过", "至少", "no more than")."""
    return bool(_BOUND_STATED[direction].search(text))
