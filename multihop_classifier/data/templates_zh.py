"""Chinese rule templates and slot values for the seed-data generator (labels per the labelling guide)."""

from __future__ import annotations

SLOTS: dict[str, tuple[str, ...]] = {
    "person": tuple(
        (
            "鲁迅 老舍 巴金 莫言 钱学森 袁隆平 屠呦呦 李白 杜甫 苏轼 姚明 刘翔 郎平 梅兰芳 齐白石 华罗庚 钱钟书 杨振宁 林徽因 张艺谋 "
            "周杰伦 王菲"
        ).split()
    ),
    "org": tuple(
        (
            "华为公司 腾讯公司 阿里巴巴 清华大学 北京大学 复旦大学 浙江大学 中国科学院 国家统计局 中国人民银行 协和医院 故宫博物院 中央电视台 "
            "小米公司 比亚迪公司 南开大学 武汉大学 中山大学"
        ).split()
    ),
    "place": tuple(
        "北京 上海 广州 深圳 杭州 成都 西安 南京 武汉 重庆 苏州 天津 青岛 厦门 长沙 昆明 哈尔滨 拉萨".split()
    ),
    "work": tuple(
        (
            "《红楼梦》 《三体》 《活着》 《围城》 《流浪地球》 《霸王别姬》 《骆驼祥子》 《平凡的世界》 《边城》 《茶馆》 《家》 《红高粱》 "
            "《呐喊》 《白鹿原》"
        ).split()
    ),
    "law": tuple(
        (
            "行政复议法 行政诉讼法 劳动合同法 民法典 个人信息保护法 数据安全法 劳动法 网络安全法 行政处罚法 行政许可法 政府信息公开条例 "
            "社会保险法"
        ).split()
    ),
    "policy": tuple(
        "年假 病假 婚假 产假 陪产假 差旅报销 加班调休 远程办公 采购审批 入职培训 绩效考核 试用期转正 离职交接 办公用品申领 团建经费".split()
    ),
    "concept": tuple(
        "向量检索 BM25 多跳问答 知识图谱 增量备份 灰度发布 负载均衡 单点登录 数据脱敏 熔断机制 幂等性 最终一致性".split()
    ),
    "system": tuple("OA 系统|报销系统|考勤系统|VPN|邮箱|代码仓库|工单系统|知识库".split("|")),
    "city_attr": tuple("人口 面积 GDP 平均气温 地铁线路数量 海拔".split()),
    "org_attr": tuple("成立时间 员工人数 总部所在地 注册资本 现任负责人".split()),
    "person_attr": tuple("出生年份 出生地 毕业院校 代表作 去世时间".split()),
    "article": tuple("第三条 第九条 第二十条 第四十五条 第十条 第六十条".split()),
}

# (label, kind, template). Kinds marked hard in the labelling guide: short_comparison (multi),
# long_single, marker_single and two_entity_single (single).
TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("multi", "comparison", "{place}和{place2}相比，哪个城市的{city_attr}更高？"),
    ("multi", "comparison", "{org}与{org2}的{org_attr}有什么区别？"),
    ("multi", "comparison", "{person}和{person2}谁出生得更早？"),
    ("multi", "comparison", "{policy}和{policy2}在申请条件上有哪些差异？"),
    ("multi", "comparison", "{law}和{law2}规定的期限哪个更长？"),
    ("multi", "comparison", "{work}和{work2}的作者是同一个人吗？"),
    ("multi", "comparison", "{org}和{org2}哪一家成立的时间更早？"),
    ("multi", "short_comparison", "{place}和{place2}哪个大？"),
    ("multi", "short_comparison", "{person}比{person2}年长吗？"),
    ("multi", "short_comparison", "{place}还是{place2}人多？"),
    ("multi", "short_comparison", "{policy}跟{policy2}哪个长？"),
    ("multi", "short_comparison", "{org}、{org2}谁先成立？"),
    ("multi", "bridge", "{work}的作者毕业于哪所大学？"),
    ("multi", "bridge", "写出{work}的作家出生在哪个城市？"),
    ("multi", "bridge", "{person}任职过的机构总部位于哪里？"),
    ("multi", "bridge", "创办{org}的人后来担任过什么职务？"),
    ("multi", "bridge", "{person}的母校所在城市的{city_attr}是多少？"),
    ("multi", "bridge", "负责{policy}审批的部门的负责人是谁？"),
    ("multi", "bridge", "管理{system}的团队所在的办公室在几楼？"),
    ("multi", "sequential", "按照{law}申请复议后，对复议决定不服的，依据{law2}多少天内可以起诉？"),
    ("multi", "sequential", "如果{policy}申请被驳回，之后还能改为申请{policy2}吗？"),
    ("multi", "sequential", "{policy}审批通过后，还需要在{system}里完成哪些步骤才能{policy2}？"),
    ("multi", "sequential", "先在{system}提交{policy}申请，然后由谁审批，审批后多久到账？"),
    ("multi", "sequential", "因为{policy}超期导致的扣款，按照{law}可以申请复核吗？"),
    ("multi", "temporal", "{org}成立的那一年，{place}的{city_attr}是多少？"),
    ("multi", "temporal", "{person}去世之前，{work}已经出版了吗？"),
    ("multi", "temporal", "{law}施行以后，{policy}的天数有没有变化？"),
    ("multi", "aggregation", "{person}和{person2}都曾在哪所大学学习过？"),
    ("multi", "aggregation", "{policy}和{policy2}加起来一共可以休多少天？"),
    ("multi", "aggregation", "同时在{place}和{place2}设有分部的公司有哪些，它们分别成立于哪一年？"),
    ("single", "factoid", "{place}的{city_attr}是多少？"),
    ("single", "factoid", "{org}的{org_attr}是什么？"),
    ("single", "factoid", "{person}的{person_attr}是什么？"),
    ("single", "factoid", "{work}的作者是谁？"),
    ("single", "factoid", "{policy}一共有几天？"),
    ("single", "factoid", "{law}是哪一年开始施行的？"),
    ("single", "factoid", "{law}{article}规定了什么？"),
    ("single", "definition", "什么是{concept}？"),
    ("single", "definition", "{concept}是什么意思？"),
    ("single", "procedure", "如何申请{policy}？"),
    ("single", "procedure", "{policy}需要提交哪些材料？"),
    ("single", "procedure", "{system}的密码怎么重置？"),
    (
        "single",
        "long_single",
        "我是上个月刚入职的新同事，之前在别的公司从来没有申请过，想请问一下按照我们公司现在的规定，{policy}的完整申请流程具体是怎样的？",
    ),
    (
        "single",
        "long_single",
        "最近在准备一份内部培训材料，需要给大家解释清楚一个概念，能不能用通俗易懂的语言详细介绍一下{concept}到底是什么，有什么典型的应用场景？",
    ),
    (
        "single",
        "long_single",
        "我在整理关于{place}的城市资料，想从权威来源确认一下，根据最新一次公开发布的官方统计数据，{place}目前的{city_attr}大约是多少？",
    ),
    (
        "single",
        "long_single",
        "同事说{law}{article}的内容最近经常被引用，我自己没有仔细读过原文，请帮我完整地说明一下这一条具体是怎么规定的？",
    ),
    ("single", "marker_single", "{law}修订之后的施行日期是哪一天？"),
    ("single", "marker_single", "{org}的总部在哪个城市？"),
    ("single", "marker_single", "如果忘记在{system}打卡应该怎么办？"),
    ("single", "marker_single", "更新{system}的客户端需要管理员权限吗？"),
    ("single", "marker_single", "{policy}申请之前需要提前几天提交？"),
    ("single", "marker_single", "{person}的代表作有哪些？"),
    ("single", "two_entity_single", "{org}位于{place}的哪个区？"),
    ("single", "two_entity_single", "{person}在{org}担任什么职务？"),
    ("single", "two_entity_single", "{work}在{place}首演是在哪一年？"),
)
