"""The fixed question set the cassettes are recorded from: conversations over the bundled sample handbook.

Chinese and English; single questions, compound questions with a part no document answers, follow-ups in
the same conversation (they need the rewrite role) and multi-hop questions. Changing anything here changes
the prompts: the cassettes must be recorded again (see tests/replay/cassette.py RECORD_COMMAND).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

Kind = Literal["single", "compound", "compound_absent", "followup", "multihop", "absent"]
QUESTION_SET_NAME = "sample-handbook-v1"


@dataclass(frozen=True, slots=True)
class ReplayConversation:
    """One conversation: its turns in order; the expectations are about the last turn."""

    id: str
    kind: Kind
    turns: tuple[str, ...]
    documents: tuple[str, ...] = ()  # documents that answer the last turn (file names)
    absent: bool = False  # a part of the last turn is answered by no document: the notice is expected
    topic: str = ""  # follow-ups: a term the rewritten last turn keeps from the earlier turns

    @property
    def last(self) -> str:
        return self.turns[-1]


QUESTION_SET: tuple[ReplayConversation, ...] = (
    ReplayConversation("single-zh-sick", "single", ("病假每年有几天？",), ("病假与其他假期.md",)),
    ReplayConversation(
        "single-en-remote",
        "single",
        ("How many days per week can an employee work remotely?",),
        ("remote-work-policy.md",),
    ),
    ReplayConversation(
        "single-zh-synonym", "single", ("JVM 默认使用哪个垃圾回收器？",), ("Java虚拟机垃圾回收.md",)
    ),
    ReplayConversation(
        "compound-zh",
        "compound",
        ("年假和病假分别有几天？",),
        ("年假制度.md", "病假与其他假期.md"),
    ),
    ReplayConversation(
        "compound-absent-zh",
        "compound_absent",
        ("报销的截止期限是多久？另外公司 2026 年的团建预算是多少？",),
        ("费用报销.md",),
        absent=True,
    ),
    ReplayConversation(
        "compound-absent-en",
        "compound_absent",
        ("How much is the home office stipend, and how much is the yearly gym allowance?",),
        ("remote-work-policy.md",),
        absent=True,
    ),
    ReplayConversation("absent-zh", "absent", ("星河科技 2026 年的团建预算是多少？",), absent=True),
    ReplayConversation(
        "followup-zh-leave",
        "followup",
        ("年假最多可以结转几天？", "那需要提前几天申请？"),
        ("年假制度.md",),
        topic="年假",
    ),
    ReplayConversation(
        "followup-zh-java",
        "followup",
        ("Java 有哪些基本数据类型？", "那它们各自占用多少内存？"),
        ("Java基本数据类型.md",),
        topic="Java",
    ),
    ReplayConversation(
        "followup-en-oncall",
        "followup",
        ("How fast must a P1 incident be acknowledged?", "And a P2 incident?"),
        ("on-call-handbook.md",),
        topic="acknowledg",
    ),
    ReplayConversation(
        "multihop-zh-vpn",
        "multihop",
        ("VPN 由哪个部门负责运维？这个部门的负责人是谁？",),
        ("IT账号与设备.md", "组织架构与联系方式.md"),
    ),
    ReplayConversation(
        "multihop-en-escalation",
        "multihop",
        (
            "A P1 incident that is not mitigated within an hour is escalated to which group's lead, and on which floor does that group sit?",
        ),
        ("on-call-handbook.md", "组织架构与联系方式.md"),
    ),
)


def question_set_digest(conversations: tuple[ReplayConversation, ...] = QUESTION_SET) -> str:
    """sha256 of what is asked (ids and turns; not the expectations), recorded in a cassette's header."""
    text = json.dumps([[c.id, list(c.turns)] for c in conversations], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
