"""Settings from the environment and the optional TOML file."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.settings import Settings


def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    """A KB_CONFIG file with this text."""
    config = tmp_path / "kb.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("KB_CONFIG", str(config))
    return config


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warning lines the settings logged."""
    return [
        r.getMessage() for r in caplog.records if r.name == "bot.settings" and r.levelno == logging.WARNING
    ]


def test_defaults_match_the_design() -> None:
    """With nothing configured the documented defaults apply and the extractive engine is selected."""
    settings = Settings()
    assert (settings.agent.max_rounds, settings.agent.evidence_tokens) == (3, 16000)
    assert (settings.context.recent_tokens, settings.context.dialogue_number) == (6000, 5)
    assert settings.context.question_max_tokens == 4000
    assert settings.agent.retrieval_mode == "auto"
    assert settings.model.uses_extractive_engine


def test_out_of_range_clamps_and_garbage_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_AGENT_MAX_ROUNDS=9 clamps to 6; KB_DIALOGUE_NUMBER=abc falls back to 5; a bad mode to auto."""
    monkeypatch.setenv("KB_AGENT_MAX_ROUNDS", "9")
    monkeypatch.setenv("KB_DIALOGUE_NUMBER", "abc")
    monkeypatch.setenv("KB_CONTEXT_RECENT_TOKENS", "100")
    monkeypatch.setenv("KB_RETRIEVAL_MODE", "sometimes")
    settings = Settings()
    assert settings.agent.max_rounds == 6
    assert settings.context.dialogue_number == 5
    assert settings.context.recent_tokens == 512
    assert settings.agent.retrieval_mode == "auto"


def test_an_out_of_range_number_clamps_with_one_warning_naming_the_range(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Too high and too low clamp to the bound, each with one line: variable, value given, range, result."""
    monkeypatch.setenv("KB_AGENT_MAX_ROUNDS", "9")
    monkeypatch.setenv("KB_CLASSIFIER_TIMEOUT", "0.01")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        settings = Settings()
    assert (settings.agent.max_rounds, settings.classifier.timeout) == (6, 0.1)
    assert warnings(caplog) == [
        "setting KB_AGENT_MAX_ROUNDS=9 is outside 1..6; using 6",
        "setting KB_CLASSIFIER_TIMEOUT=0.01 is outside 0.1..60; using 0.1",
    ]


def test_an_unparsable_number_falls_back_to_the_default_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A word or NaN where a number belongs: the default, and a line saying what was expected."""
    monkeypatch.setenv("KB_DIALOGUE_NUMBER", "abc")
    monkeypatch.setenv("KB_MODEL_TIMEOUT", "nan")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        settings = Settings()
    assert (settings.context.dialogue_number, settings.model.timeout) == (5, 60.0)
    assert sorted(warnings(caplog)) == [
        "setting KB_DIALOGUE_NUMBER='abc' is not an integer in 0..20; using the default 5",
        "setting KB_MODEL_TIMEOUT='nan' is not a number in 1..600; using the default 60",
    ]


def test_a_bad_mode_falls_back_with_the_choices_and_modes_match_any_case(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """KB_SEARCH_MODE=Sometimes is not a mode: blend, and a line listing the choices; KEYWORDS is keywords."""
    monkeypatch.setenv("KB_SEARCH_MODE", "Sometimes")
    monkeypatch.setenv("KB_RETRIEVAL_MODE", " MULTI ")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        settings = Settings()
    assert (settings.search.mode, settings.agent.retrieval_mode) == ("blend", "multi")
    assert warnings(caplog) == [
        "setting KB_SEARCH_MODE='Sometimes' is not one of embedding, keywords, blend; using the default blend"
    ]


def test_a_bad_boolean_falls_back_to_the_default_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """KB_ANSWER_FALLBACK=perhaps keeps the default true; yes/no, on/off and 1/0 are booleans too."""
    monkeypatch.setenv("KB_ANSWER_FALLBACK", "perhaps")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        assert Settings().answer.fallback is True
    assert warnings(caplog) == [
        "setting KB_ANSWER_FALLBACK='perhaps' is not a boolean (true/false, yes/no, on/off, 1/0); "
        "using the default true"
    ]
    for word, value in [("no", False), ("ON", True), ("0", False), ("Yes", True)]:
        monkeypatch.setenv("KB_ANSWER_FALLBACK", word)
        assert Settings().answer.fallback is value, word


def test_toml_file_is_read_and_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_CONFIG supplies values and per-channel scopes; the environment overrides the file."""
    write_config(
        tmp_path,
        monkeypatch,
        'kb_agent_max_rounds = 4\nkb_search_mode = "keywords"\n'
        '[channels.C1]\ndatasets = ["laws"]\nretrieval_mode = "multi"\n'
        '[channels.default]\ndatasets = ["handbook"]\n',
    )
    monkeypatch.setenv("KB_SEARCH_MODE", "embedding")
    settings = Settings()
    assert settings.agent.max_rounds == 4
    assert settings.search.mode == "embedding"
    assert settings.channel("C1").datasets == ["laws"]
    assert settings.channel("C1").retrieval_mode == "multi"
    assert settings.channel("C999").datasets == ["handbook"]


def test_nested_toml_tables_apply_to_their_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """[model], [agent], [search] and [slack] tables set their groups' fields; bounds apply there too."""
    write_config(
        tmp_path,
        monkeypatch,
        '[model]\nbase_url = "http://127.0.0.1:9/v1"\nchat = "qwen"\ntimeout = 30\n'
        '[agent]\nmax_rounds = 2\nretrieval_mode = "Single"\n'
        '[search]\ndatasets = ["handbook", "ops"]\ntopk_short = 99\n'
        '[slack]\nstreaming = "edit"\nresume_interrupted = false\n',
    )
    settings = Settings()
    assert (settings.model.base_url, settings.model.chat_model, settings.model.timeout) == (
        "http://127.0.0.1:9/v1",
        "qwen",
        30.0,
    )
    assert not settings.model.uses_extractive_engine
    assert (settings.agent.max_rounds, settings.agent.retrieval_mode) == (2, "single")
    assert (settings.search.datasets, settings.search.topk_short) == (["handbook", "ops"], 50)
    assert (settings.slack.streaming, settings.slack.resume_interrupted) == ("edit", False)


def test_flat_kb_keys_of_older_files_still_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written before the groups (`kb_answer_max_tokens = 800`, `OPENAI_BASE_URL = ...`) still
    applies, each key to its group; beside a nested table the nested value wins."""
    write_config(
        tmp_path,
        monkeypatch,
        'kb_answer_max_tokens = 800\nOPENAI_BASE_URL = "http://127.0.0.1:9/v1"\nkb_chat_model = "qwen"\n'
        'kb_datasets = ["laws"]\nkb_model_retries = 1\nkb_chroma_url = "http://127.0.0.1:8000"\n'
        "[model]\nretries = 5\n",
    )
    settings = Settings()
    assert settings.answer.max_tokens == 800
    assert (settings.model.base_url, settings.model.chat) == ("http://127.0.0.1:9/v1", "qwen")
    assert settings.search.datasets == ["laws"]
    assert settings.storage.chroma_url == "http://127.0.0.1:8000"
    assert settings.model.retries == 5


def test_env_beats_the_nested_toml_value_and_init_beats_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KB_AGENT_MAX_ROUNDS beats `[agent] max_rounds`; an init argument beats the variable; the rest of
    the group still comes from the file."""
    write_config(tmp_path, monkeypatch, "[agent]\nmax_rounds = 2\nmax_paragraphs = 30\n")
    monkeypatch.setenv("KB_AGENT_MAX_ROUNDS", "5")
    assert (Settings().agent.max_rounds, Settings().agent.max_paragraphs) == (5, 30)
    given = Settings(agent={"max_rounds": 1})
    assert (given.agent.max_rounds, given.agent.max_paragraphs) == (1, 30)


def test_an_unknown_key_or_an_unreadable_file_is_logged_and_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A misspelt key is named in a warning and skipped; a file that is not TOML is skipped as a whole."""
    config = write_config(tmp_path, monkeypatch, "[agent]\nmax_round = 2\n[agnet]\nmax_rounds = 2\n")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        assert Settings().agent.max_rounds == 3
    assert warnings(caplog) == [
        f"KB_CONFIG {config}: unknown setting 'agent.max_round'; ignoring it",
        f"KB_CONFIG {config}: unknown setting 'agnet'; ignoring it",
    ]
    caplog.clear()
    config.write_text("max_rounds = [unclosed\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="bot.settings"):
        assert Settings().agent.max_rounds == 3
    assert len(warnings(caplog)) == 1 and "could not be read" in warnings(caplog)[0]


def test_replace_changes_some_fields_of_a_group_and_validates_them() -> None:
    """replace() returns a copy with the given fields changed; an unknown field is an error, not ignored."""
    settings = Settings()
    demo = settings.replace(context={"recent_tokens": 512}, search={"topk_short": 3})
    assert (demo.context.recent_tokens, demo.search.topk_short, demo.search.topk_long) == (512, 3, 8)
    assert settings.context.recent_tokens == 6000
    with pytest.raises(ValueError, match="recent_tokenz"):
        settings.replace(context={"recent_tokenz": 512})


def test_model_endpoint_selects_the_model_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint plus a chat model selects the model; KB_MODEL=extractive forces the extractive engine."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("KB_CHAT_MODEL", "qwen")
    assert not Settings().model.uses_extractive_engine
    assert Settings().model.aux_model == "qwen"
    monkeypatch.setenv("KB_MODEL", "extractive")
    assert Settings().model.uses_extractive_engine


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
    write_config(
        tmp_path,
        monkeypatch,
        '[channels.default]\ndatasets = []\n[channels.C1]\ndatasets = ["laws"]\n'
        "[channels.CQUIET]\nmention_only = true\n",
    )
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
    """KB_RESUME_INTERRUPTED is a boolean (default true); KB_PENDING_GRACE clamps to 5..3600 s."""
    assert Settings().slack.resume_interrupted is True and Settings().slack.pending_grace == 60.0
    monkeypatch.setenv("KB_RESUME_INTERRUPTED", "false")
    monkeypatch.setenv("KB_PENDING_GRACE", "1")
    assert Settings().slack.resume_interrupted is False and Settings().slack.pending_grace == 5.0
    monkeypatch.setenv("KB_RESUME_INTERRUPTED", "maybe")
    assert Settings().slack.resume_interrupted is True


def test_slack_streaming_is_auto_native_or_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """KB_SLACK_STREAMING defaults to auto, takes native or edit (any case), and falls back to auto on garbage;
    kb serve hands it to the Slack bot."""
    from bot.cli.operations.serve import slack_options

    assert Settings().slack.streaming == "auto"
    monkeypatch.setenv("KB_SLACK_STREAMING", "EDIT")
    assert slack_options(Settings()).streaming == "edit"
    monkeypatch.setenv("KB_SLACK_STREAMING", "native")
    assert slack_options(Settings()).streaming == "native"
    monkeypatch.setenv("KB_SLACK_STREAMING", "sometimes")
    assert Settings().slack.streaming == "auto"
