"""A role-aware responder for the test model server: rewrite, assess, vote, summary and answer calls."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from core.answering.prompts import ASSESS_SYSTEM, REWRITE_SYSTEM, VOTE_SYSTEM
from tests.model_script import RecordedRequest, Reply


def role_of(request: RecordedRequest) -> str:
    """Which model role a request is for, recognised from its system prompt."""
    system = request.system_prompt
    if system.startswith(REWRITE_SYSTEM[:20]):
        return "rewrite"
    if system.startswith(ASSESS_SYSTEM[:20]):
        return "assess"
    if system.startswith(VOTE_SYSTEM[:20]):
        return "vote"
    if "<evidence>" in request.last_user_message:
        return "answer"
    return "summary"


@dataclass
class RoleResponder:
    """Scripted replies per role; rewrites are looked up by a fragment of the last question."""

    rewrites: dict[str, str] = field(default_factory=dict)
    assessments: list[dict[str, object]] = field(default_factory=list)
    vote: str = "no"
    calls: list[str] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply | str:
        role = role_of(request)
        self.calls.append(role)
        if role == "rewrite":
            found = re.search(r"<question>(.*)</question>", request.last_user_message, re.DOTALL)
            last = html.unescape(found.group(1)) if found else request.last_user_message
            for fragment, rewrite in self.rewrites.items():
                if fragment in last:
                    return rewrite
            return last.strip()
        if role == "assess":
            verdict = (
                self.assessments.pop(0)
                if self.assessments
                else {"sufficient": True, "missing": "", "queries": []}
            )
            return json.dumps(verdict, ensure_ascii=False)
        if role == "vote":
            return self.vote
        if role == "answer":
            documents = re.findall(r'document="([^"|]+)', request.last_user_message)
            cited = documents[0].strip() if documents else "无"
            return Reply.text(f"根据《{cited}》的资料作答[1]。", chunks=3)
        return "摘要:用户询问了若干问题。"
