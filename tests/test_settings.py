"""Settings from the environment and the optional TOML file."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import Settings


def test_defaults_match_the_design() -> None:
    """With nothing configured the documented defaults apply and the extractive engine is selected."""
    settings = Settings()
    assert (settings.kb_agent_max_rounds, settings.kb_agent_evidence_tokens) == (3, 16000)
    assert (settings.kb_context_recent_tokens, settings.kb_dialogue_number) == (6000, 5)
    assert settings.kb_question_max_tokens == 4000
    assert settings.kb_retrieval_mode == "auto"
    assert settings.uses_extractive_engine


def test_out_of_range_clamps_and_garbage_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_AGENT_MAX_ROUNDS=9 clamps to 6; KB_DIALOGUE_NUMBER=abc falls back to 5; a bad mode to auto."""
    monkeypatch.setenv("KB_AGENT_MAX_ROUNDS", "9")
    monkeypatch.setenv("KB_DIALOGUE_NUMBER", "abc")
    monkeypatch.setenv("KB_CONTEXT_RECENT_TOKENS", "100")
    monkeypatch.setenv("KB_RETRIEVAL_MODE", "sometimes")
    settings = Settings()
    assert settings.kb_agent_max_rounds == 6
    assert settings.kb_dialogue_number == 5
    assert settings.kb_context_recent_tokens == 512
    assert settings.kb_retrieval_mode == "auto"


def test_toml_file_is_read_and_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_CONFIG supplies values and per-channel scopes; the environment overrides the file."""
    config = tmp_path / "kb.toml"
    config.write_text(
        'kb_agent_max_rounds = 4\nkb_search_mode = "keywords"\n'
        '[channels.C1]\ndatasets = ["laws"]\nretrieval_mode = "multi"\n'
        '[channels.default]\ndatasets = ["handbook"]\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("KB_CONFIG", str(config))
    monkeypatch.setenv("KB_SEARCH_MODE", "embedding")
    settings = Settings()
    assert settings.kb_agent_max_rounds == 4
    assert settings.kb_search_mode == "embedding"
    assert settings.channel("C1").datasets == ["laws"]
    assert settings.channel("C1").retrieval_mode == "multi"
    assert settings.channel("C999").datasets == ["handbook"]


def test_model_endpoint_selects_the_model_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint plus a chat model selects the model; KB_MODEL=extractive forces the extractive engine."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KB_CHAT_MODEL", "qwen")
    assert not Settings().uses_extractive_engine
    assert Settings().aux_model == "qwen"
    monkeypatch.setenv("KB_MODEL", "extractive")
    assert Settings().uses_extractive_engine
