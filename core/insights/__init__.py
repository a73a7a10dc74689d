"""What the answered questions say about the knowledge base: the gaps its users ran into."""
