"""The Slack face of the bot: Bolt wiring, pure Block Kit rendering, and a throttled message editor."""
