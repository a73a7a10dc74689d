"""Domain logic of the knowledge-base bot: pure decisions and async orchestration over ports."""
