"""The Slack bot's parts, built and wired in one place: Bolt app, intake, answerer, delivery, surfaces."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.embedders.local import LocalEmbedder
from adapters.slack.answering import Answerer, ReplyOptions
from adapters.slack.app import SlackBot, SlackOptions, SlackParts, delivery_client
from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.slack.delivery.outbox import Outbox
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.intake import EngagedThreads, Intake
from adapters.slack.inbound.private_scopes import PrivateScopes
from adapters.slack.inbound.user_names import UserNames
from adapters.slack.listeners import register_listeners
from adapters.slack.pipeline_port import AnswerPipeline, SlackReads
from adapters.slack.reply.streaming_support import StreamingSupport
from adapters.slack.surfaces.assistant_pane import AssistantPane
from adapters.slack.surfaces.catalogue import Catalogue, KnowledgeCatalogue
from adapters.slack.surfaces.home_publisher import HomeTab
from adapters.slack.surfaces.thread_actions import ThreadActions
from bot.compose.sources import private_datasets
from core.insights.finder import RecentGaps
from core.sources.models import SourceState


def build_slack_bot(
    *,
    client: AsyncWebClient,
    pipeline: AnswerPipeline,
    reads: SlackReads,
    ledger: DeliveryLedger,
    channel_config: Callable[[str], ChannelConfig],
    signing_secret: str | None = None,
    socket_mode: bool = False,
    options: SlackOptions | None = None,
    all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
    catalogue: KnowledgeCatalogue | None = None,
    channel_scopes: Mapping[str, ChannelConfig] | None = None,
    sources: Callable[[], Awaitable[Sequence[SourceState]]] | None = None,
) -> SlackBot:
    """The bot with its listeners registered on a Bolt AsyncApp (started by SlackBot.start)."""
    options = options or SlackOptions()
    known = Catalogue(catalogue)
    private = None if sources is None else PrivateScopes(client, functools.partial(private_datasets, sources))
    pane = AssistantPane(client, channel_config=channel_config, catalogue=known, private_scopes=private)
    engaged = EngagedThreads(reads)
    intake = Intake(
        reads=reads,
        ledger=ledger,
        names=UserNames(client),
        engaged=engaged,
        channel_config=channel_config,
        all_datasets=all_datasets,
        private_scopes=private,
    )
    outbox = Outbox(
        delivery_client(client),
        ledger,
        budget=UpdateBudget(limit=options.updates_per_minute),
        options=options.delivery,
    )
    answerer = Answerer(
        client,
        pipeline,
        reads=reads,
        ledger=ledger,
        intake=intake,
        outbox=outbox,
        engaged=engaged,
        channel_config=channel_config,
        all_datasets=all_datasets,
        options=ReplyOptions(
            min_edit_interval=options.min_edit_interval,
            resume_interrupted=options.resume_interrupted,
            stream_interval=options.stream_interval,
        ),
        streaming=StreamingSupport(options.streaming),
        stream_budget=UpdateBudget(limit=options.appends_per_minute, reserve=0),
        on_first_in_dm_thread=pane.set_title,
    )
    app = AsyncApp(
        name="kb",  # without a name Bolt inspects the call stack (~0.15 s)
        client=client,
        signing_secret=signing_secret or "",
        request_verification_enabled=not socket_mode,
        url_verification_enabled=not socket_mode,
        process_before_response=False,
    )
    parts = SlackParts(
        app=app,
        client=client,
        pipeline=pipeline,
        reads=reads,
        ledger=ledger,
        channel_config=channel_config,
        intake=intake,
        answerer=answerer,
        engaged=engaged,
        thread_actions=ThreadActions(client, pipeline, reads, ledger),
        pane=pane,
        home=HomeTab(
            client,
            reads,
            catalogue=known,
            scopes=dict(channel_scopes or {}),
            channel_config=channel_config,
            sources=sources,
            gaps=RecentGaps(reads, LocalEmbedder()),
        ),
        options=options,
    )
    bot = SlackBot(parts)
    register_listeners(app, bot)
    return bot
