"""The single composition root: every adapter built from Settings, the pipeline wired (services), and the Slack bot's parts (slack)."""

from bot.compose.services import (
    Services,
    build_engine,
    build_services,
    engine_notice,
    resolve_datasets,
    search_policy,
)

__all__ = ["Services", "build_engine", "build_services", "engine_notice", "resolve_datasets", "search_policy"]
