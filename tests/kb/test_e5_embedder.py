"""The optional multilingual-e5-small embedder: vectors, meaning, and a real ingest and search through `kb`."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from adapters.embedders.e5 import E5_MODEL_NAME, E5Embedder
from bot.cli import main
from tests.kb.kb_support import Ticker


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def top_source(capsys: pytest.CaptureFixture[str], query: str) -> str:
    """The source of the best embedding-mode hit for query in dataset "team"."""
    code, out, err = kb(capsys, "search", query, "--dataset", "team", "--mode", "embedding", "--json")
    assert code == 0, err
    return str(json.loads(out)["hits"][0]["source"])


async def test_vectors_are_384_dimensional_unit_length_and_queries_differ_from_passages() -> None:
    """Unit 384-d vectors; the same text as a query and as a passage gets e5's two different embeddings."""
    embedder = E5Embedder()
    assert (embedder.name, embedder.dimension) == (E5_MODEL_NAME, 384)
    passages = await embedder.embed_documents(["劳动合同的试用期", "probation period of a labour contract"])
    query = await embedder.embed_query("劳动合同的试用期")
    for vector in [*passages, query]:
        assert len(vector) == 384
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, abs_tol=1e-3)
    assert cosine(query, passages[0]) < 0.9999
    assert await embedder.embed_documents([]) == []


async def test_paraphrases_and_translations_beat_unrelated_text() -> None:
    """A question is closer to the passage that answers it, in either language, than to an unrelated one."""
    embedder = E5Embedder()
    question = await embedder.embed_query("试用期最长可以约定多久?")
    answer, english, weather = await embedder.embed_documents(
        [
            "劳动合同期限三年以上的,试用期不得超过六个月。",
            "The probation period may not exceed six months for a contract of three years or more.",
            "今天北京的天气很好,适合去公园散步。",
        ]
    )
    assert cosine(question, answer) > cosine(question, weather) + 0.05
    assert cosine(question, english) > cosine(question, weather)


async def test_embedding_runs_off_the_event_loop() -> None:
    """A ticker keeps ticking while passages are embedded in a worker thread."""
    embedder = E5Embedder()
    await embedder.embed_query("warm up")
    texts = [
        f"第{i}条 公民、法人或者其他组织认为行政行为侵犯其合法权益的,可以申请行政复议。" for i in range(80)
    ]
    async with Ticker() as ticker:
        started = time.perf_counter()
        await embedder.embed_documents(texts)
        elapsed = time.perf_counter() - started
    assert ticker.ticks >= 5
    # on the loop the ticker would stop for the whole call (about a second here); the relative bound leaves
    # room for this process going unscheduled while other test workers hold both cores
    assert ticker.max_gap < max(0.25, elapsed / 3)


def test_a_dataset_built_with_e5_is_searched_with_it_and_refuses_the_other_model(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingest with KB_EMBEDDING_MODEL=multilingual-e5-small records the model, finds by meaning, another
    model is refused with the dataset's model named, and a later ingest without the setting keeps e5."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "leave.md").write_text(
        "# 年休假\n\n职工连续工作一年以上的,享受带薪年休假。\n", encoding="utf-8"
    )
    (folder / "parking.md").write_text(
        "# Parking\n\nCars park in lot B behind the office.\n", encoding="utf-8"
    )
    monkeypatch.setenv("KB_EMBEDDING_MODEL", E5_MODEL_NAME)
    code, _, err = kb(capsys, "ingest", str(folder), "--dataset", "team")
    assert code == 0, err

    code, out, err = kb(capsys, "datasets", "list", "--json")
    assert code == 0, err
    assert E5_MODEL_NAME in out

    assert top_source(capsys, "员工一年能休几天带薪假").endswith("leave.md")

    monkeypatch.delenv("KB_EMBEDDING_MODEL")
    (folder / "lunch.md").write_text("# 午餐\n\n食堂中午十二点开始供应午饭。\n", encoding="utf-8")
    code, out, err = kb(
        capsys, "ingest", str(folder), "--dataset", "team", "--embedding", "use-multilingual-v3"
    )
    assert code != 0
    assert E5_MODEL_NAME in out + err

    code, _, err = kb(capsys, "ingest", str(folder), "--dataset", "team")
    assert code == 0, err
    assert top_source(capsys, "几点可以吃午饭").endswith("lunch.md")
