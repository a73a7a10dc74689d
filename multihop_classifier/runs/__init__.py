"""A training run and what follows it: train, evaluate (metrics and plot), export."""
