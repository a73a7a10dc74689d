"""manifest.yml is a manifest Slack accepts: known keys, right types, schema limits, and what the bot uses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from adapters.slack.listeners import COMPACT_SHORTCUT, TRACE_SHORTCUT
from adapters.slack.manifest_scopes import BOT_SCOPES

MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"
TOP_LEVEL = {
    "_metadata",
    "display_information",
    "features",
    "oauth_config",
    "settings",
    "functions",
    "workflows",
    "datastores",
    "outgoing_domains",
    "types",
    "external_auth_providers",
    "mcp_servers",
    "app_directory",
}
FEATURES = {
    "app_home",
    "bot_user",
    "slash_commands",
    "shortcuts",
    "unfurl_domains",
    "workflow_steps",
    "assistant_view",
    "agent_view",
    "rich_previews",
}
SETTINGS = {
    "event_subscriptions",
    "interactivity",
    "socket_mode_enabled",
    "token_rotation_enabled",
    "org_deploy_enabled",
    "incoming_webhooks",
    "allowed_ip_address_ranges",
    "is_hosted",
    "is_mcp_enabled",
    "siws_links",
    "hermes_app_type",
    "function_runtime",
}


def _load() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _length(value: Any, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def test_keys_are_the_schemas_and_the_required_ones_are_present() -> None:
    """Only keys of manifest schema 2.0 appear; name and bot display name are present."""
    data = _load()
    assert set(data) <= TOP_LEVEL
    assert set(data["features"]) <= FEATURES
    assert set(data["settings"]) <= SETTINGS
    assert set(data["display_information"]) <= {"name", "description", "background_color", "long_description"}
    assert set(data["features"]["app_home"]) <= {
        "home_tab_enabled",
        "messages_tab_enabled",
        "messages_tab_read_only_enabled",
    }
    assert set(data["features"]["bot_user"]) <= {"display_name", "always_online"}


def test_values_respect_the_schema_limits() -> None:
    """Lengths, patterns and item counts are within the schema's bounds."""
    data = _load()
    info = data["display_information"]
    assert _length(info["name"], 1, 35) and _length(info["description"], 1, 140)
    assert _length(info["long_description"], 175, 4000)
    assert re.fullmatch(r"#[0-9a-fA-F]{3,6}", info["background_color"])
    assert _length(data["features"]["bot_user"]["display_name"], 1, 80)
    commands = data["features"]["slash_commands"]
    assert 1 <= len(commands) <= 50
    for command in commands:
        assert re.fullmatch(r"/\S{1,31}", command["command"])
        assert _length(command["description"], 1, 2000) and _length(command.get("usage_hint", "x"), 1, 1000)
        assert isinstance(command.get("should_escape", False), bool) and "url" not in command
    shortcuts = data["features"]["shortcuts"]
    assert 1 <= len(shortcuts) <= 10
    for shortcut in shortcuts:
        assert _length(shortcut["name"], 1, 24) and _length(shortcut["description"], 1, 150)
        assert _length(shortcut["callback_id"], 1, 255) and shortcut["type"] in ("message", "global")
    scopes = data["oauth_config"]["scopes"]["bot"]
    assert len(scopes) == len(set(scopes)) <= 255
    assert all(re.fullmatch(r"[a-z_.]+(:[a-z_.]+)?", scope) for scope in scopes)
    assert len(data["settings"]["event_subscriptions"]["bot_events"]) <= 100
    for key in ("socket_mode_enabled", "token_rotation_enabled", "org_deploy_enabled"):
        assert isinstance(data["settings"][key], bool)
    assert isinstance(data["settings"]["interactivity"]["is_enabled"], bool)


def test_the_manifest_declares_everything_the_bot_uses() -> None:
    """Messages and Home tabs, the assistant pane, /kb, both shortcuts (with the ids the listeners use),
    scopes, events, interactivity, Socket Mode."""
    data = _load()
    assert data["features"]["app_home"]["messages_tab_enabled"] is True
    assert data["features"]["app_home"]["home_tab_enabled"] is True
    pane = data["features"]["assistant_view"]
    assert _length(pane["assistant_description"], 1, 300)
    assert 1 <= len(pane["suggested_prompts"]) <= 4
    assert all(
        _length(p["title"], 1, 75) and _length(p["message"], 1, 300) for p in pane["suggested_prompts"]
    )
    assert [c["command"] for c in data["features"]["slash_commands"]] == ["/kb"]
    shortcuts = {s["name"]: s for s in data["features"]["shortcuts"]}
    assert shortcuts["Compact this thread"]["callback_id"] == COMPACT_SHORTCUT
    assert shortcuts["Show retrieval trace"]["callback_id"] == TRACE_SHORTCUT
    assert all(s["type"] == "message" for s in shortcuts.values())
    assert set(BOT_SCOPES) <= set(data["oauth_config"]["scopes"]["bot"])  # what the bot needs
    assert set(data["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "app_home_opened",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.channels",
        "message.groups",
        "message.im",
        "message.mpim",
    }
    assert data["settings"]["interactivity"]["is_enabled"] is True
    assert data["settings"]["socket_mode_enabled"] is True


def test_the_scopes_kb_doctor_expects_are_the_manifests() -> None:
    """adapters.slack.manifest_scopes.BOT_SCOPES (what `kb doctor` checks a token for) is manifest.yml's list."""
    assert list(BOT_SCOPES) == _load()["oauth_config"]["scopes"]["bot"]
