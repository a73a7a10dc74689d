"""Model clients: the OpenAI-compatible chat model with retries, error mapping and the think filter, the HTTP
reranker and the multi-hop classifier client."""
