"""The classifier model: encoders (USE by default, a local BERT), the numpy head, and a trained model on disk."""
