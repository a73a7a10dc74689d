"""`kb trace`'s text for a record whose citations the attribution changed and whose claims no source holds."""

from __future__ import annotations

from bot.cli.conversation.render import format_trace
from core.models import RecordStatus
from core.record import Attribution, Record, RecordDetails, UnsupportedClaim


def test_the_trace_lists_changed_citations_and_unsupported_claims_but_not_kept_ones() -> None:
    """A corrected, a removed and a citation added by meaning, and an unsupported figure, each get a line in
    the record's language; a model's own right marker gets none."""
    details = RecordDetails(
        lang="zh",
        engine="fake",
        attributions=(
            Attribution("病假期间工资照常发放。", 1, "kept", 1.0),
            Attribution("员工每年有 12 天带薪病假。", 1, "corrected", 0.9),
            Attribution("审批由安全委员会负责。", 0, "removed", 0.1),
            Attribution("病假的时候薪水不会被扣。", 1, "added", 0.14, 0.72),
        ),
        unsupported=(UnsupportedClaim("45 天", "number", "报销须在 45 天内提交。"),),
    )
    record = Record(1, "cli::a", "病假有几天?", RecordStatus.ANSWERED, answer="…", details=details)
    lines = format_trace(record).splitlines()
    assert "引用已更正为 [1]：「员工每年有 12 天带薪病假。」" in lines
    assert "已删去引用，没有资料支持：「审批由安全委员会负责。」" in lines
    assert "资料中找不到数字 45 天 — 出自「报销须在 45 天内提交。」" in lines
    assert "已补上引用 [1]（按语义，相似度 0.72）：「病假的时候薪水不会被扣。」" in lines
    assert not any("病假期间工资照常发放" in line for line in lines)
