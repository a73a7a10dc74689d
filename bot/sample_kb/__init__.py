"""The sample knowledge base: a fictional company's handbook, written for this project, used by `kb demo`.

The company is 星河科技 (Nebula Tech), headquartered at a made-up address in Hangzhou. Every fact in
the documents is invented. The documents live in ``docs/`` (this description is kept here, not in a
Markdown file, because ingestion reads every ``.md`` and ``.txt`` file under the folder; ``docs`` has an
``__init__.py`` only so that a regular, non-editable install ships the ``.md`` files as package data):

==========================  =====================================================================
document                    content
==========================  =====================================================================
年假制度.md                 annual leave by seniority (10 / 15 / 20 days), carry-over (at most 5
                            days, used by 31 March), how to apply
病假与其他假期.md           sick leave (12 paid days, certificate from 3 days), marriage,
                            maternity, paternity and personal leave
费用报销.md                 claim deadline (30 days; 30-90 days with approval; never after 90),
                            hotel limits per city tier (600 / 450 / 350 元), approval chain
差旅管理.md                 travel requests (3 / 15 working days ahead), classes of travel,
                            daily allowance
IT账号与设备.md             「星河通」VPN run by the 基础设施组, passwords (12 characters, changed
                            every 90 days), laptops (replaced every 3 years)
信息安全守则.md             data classification, daily rules, reporting incidents within 2 hours
新员工入职指南.md           first day, mentors (「领航员」), 3-month probation
组织架构与联系方式.md       departments, floors and heads (e.g. 基础设施组 -> 林远航)
Java基本数据类型.md         the 8 primitive types and the bytes each occupies (byte 1, short 2,
                            int 4, long 8, float 4, double 8, char 2, boolean: VM-dependent)
Java虚拟机垃圾回收.md       generations and collectors; written only as "Java 虚拟机", never with
                            the abbreviation, so a query for the abbreviation must rely on meaning
remote-work-policy.md       (English) remote days, core hours, home-office stipend
on-call-handbook.md         (English) rotation, P1/P2 response times, compensation
==========================  =====================================================================

Questions that exercise the features (the demo script uses these):

* Compound question whose parts live in three documents (年假制度, 病假与其他假期, 费用报销):
  ``年假和病假分别有几天，以及报销的截止期限是多久？``. With a search limit of 3 it takes two rounds
  in every search mode (measured: the first search returns 费用报销 and 年假制度 chunks, the gap query
  "病假有几天" finds 病假与其他假期). The shorter ``年假有几天，以及报销的截止期限是多久？`` is usually
  answered in one round, because this knowledge base is small.
* Pronoun follow-up, rewritten with the previous turn's subject: ``Java 有哪些基本数据类型？`` then
  ``那它们各自占用多少内存？`` (-> "Java 基本数据类型各自占用多少内存？").
* Synonym pair: ``JVM 默认使用哪个垃圾回收器？`` — no document contains "JVM"; the answer is in
  Java虚拟机垃圾回收.md, found by embedding similarity (keyword search alone cannot find it).
* An absent answer: ``星河科技 2026 年的团建预算是多少？`` — no document mentions a team-building
  budget or the year 2026; as part of a compound question
  (``报销的截止期限是多久？另外公司 2026 年的团建预算是多少？``) one part is answered and the other
  cannot be verified, which triggers the uncertainty notice.
* English: ``How many remote days per week are allowed, and how fast must a P1 incident be
  acknowledged?`` (two English documents).
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_KB_DIR = Path(__file__).parent / "docs"
SAMPLE_DATASET = "sample"

DEMO_QUESTIONS: tuple[str, ...] = (
    "年假和病假分别有几天，以及报销的截止期限是多久？",
    "Java 有哪些基本数据类型？",
    "那它们各自占用多少内存？",
    "JVM 默认使用哪个垃圾回收器？",
    "报销的截止期限是多久？另外公司 2026 年的团建预算是多少？",
)
