"""Getting messages to Slack: the delivery ledger, the outbox, per-channel pacing, the chat.update budget, API failures."""
