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


def test_without_channel_scopes_every_channel_searches_every_dataset() -> None:
    """No KB_CONFIG and no KB_DATASETS: unlisted channels get datasets None (everything), as the CLI does."""
    settings = Settings()
    assert settings.channel("C1").datasets is None
    assert settings.unlisted_channels_search_everything


def test_a_default_entry_with_no_datasets_locks_unlisted_channels_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[channels.default] datasets = []` gives unlisted channels no dataset; listed ones keep theirs, and
    an entry without `datasets` inherits the default's."""
    config = tmp_path / "kb.toml"
    config.write_text(
        '[channels.default]\ndatasets = []\n[channels.C1]\ndatasets = ["laws"]\n'
        "[channels.CQUIET]\nmention_only = true\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("KB_CONFIG", str(config))
    settings = Settings()
    assert settings.channel("C999").datasets == []
    assert settings.channel("C1").datasets == ["laws"]
    assert settings.channel("CQUIET").datasets == [] and settings.channel("CQUIET").mention_only
    assert not settings.unlisted_channels_search_everything


def test_kb_datasets_scopes_channels_without_an_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_DATASETS is the scope of channels with no entry and of entries without `datasets`."""
    monkeypatch.setenv("KB_DATASETS", "handbook, ops")
    settings = Settings()
    assert settings.channel("C1").datasets == ["handbook", "ops"]
    assert not settings.unlisted_channels_search_everything


def test_resume_and_grace_settings_are_read_and_clamped(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_RESUME_INTERRUPTED is a boolean (default false); KB_PENDING_GRACE clamps to 5..3600 s."""
    assert Settings().kb_resume_interrupted is False and Settings().kb_pending_grace == 60.0
    monkeypatch.setenv("KB_RESUME_INTERRUPTED", "true")
    monkeypatch.setenv("KB_PENDING_GRACE", "1")
    assert Settings().kb_resume_interrupted is True and Settings().kb_pending_grace == 5.0
    monkeypatch.setenv("KB_RESUME_INTERRUPTED", "maybe")
    assert Settings().kb_resume_interrupted is False


def test_slack_streaming_is_auto_native_or_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_SLACK_STREAMING defaults to auto, takes native or edit (any case), and falls back to auto on garbage;
    kb serve hands it to the Slack bot."""
    from bot.cli.operations.serve import slack_options

    assert Settings().kb_slack_streaming == "auto"
    monkeypatch.setenv("KB_SLACK_STREAMING", "EDIT")
    assert slack_options(Settings()).streaming == "edit"
    monkeypatch.setenv("KB_SLACK_STREAMING", "native")
    assert slack_options(Settings()).streaming == "native"
    monkeypatch.setenv("KB_SLACK_STREAMING", "sometimes")
    assert Settings().kb_slack_streaming == "auto"
