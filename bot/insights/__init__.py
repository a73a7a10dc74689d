"""What the bot's own records say about the knowledge base (the `kb gaps` report)."""
