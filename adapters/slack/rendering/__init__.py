"""How the bot's Slack messages look: Block Kit, mrkdwn, safe Markdown, strings, progress, answers (pure)."""
