"""Getting messages to Slack: the outbox, per-channel pacing, the chat.update budget, API failures."""
