"""Tests of complexity routing, the multi-hop retrieval loop, reranking and their HTTP adapters."""
