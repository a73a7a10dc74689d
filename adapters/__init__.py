"""Implementations of core's ports, one package per port family: knowledge (Chroma), embedders, models,
store (SQL), slack, extractive (the offline engine)."""
