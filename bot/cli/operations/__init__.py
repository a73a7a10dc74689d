"""Operating commands: `kb serve` (the Slack bot), `kb demo`, `kb eval` and `kb classifier`."""
