"""The Slack face of the bot: app, web, listeners and answering on top of five sub-packages."""
