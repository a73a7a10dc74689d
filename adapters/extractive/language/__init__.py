"""Text primitives of the extractive engine: jieba terms, sentences, entities, quantities and meaning."""
