"""The classification head: a one-hidden-layer MLP (or logistic regression) in numpy, trained with Adam.

Written by hand because it is small (one forward and one backward pass, ~100 lines) and keeps the
service free of scikit-learn/torch: input = [encoder vector, log1p rule features], standardised with
the training split's mean and spread; output = P(multi-hop). Training runs a fixed number of epochs
of shuffled mini-batches, keeps the weights of the epoch with the best validation F1 and stops early
when that has not improved for ``patience`` epochs. Everything is seeded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class HeadConfig:
    """Training settings of the head: 5 epochs and early stopping on validation F1.

    See docs/design.md#the-classifier-service.
    """

    hidden: int = 64
    epochs: int = 5
    patience: int = 2
    batch_size: int = 16
    learning_rate: float = 3e-3
    weight_decay: float = 1e-4
    seed: int = 13


@dataclass(slots=True)
class Head:
    """Weights and input scaling of a trained head."""

    mean: np.ndarray
    scale: np.ndarray
    weights: dict[str, np.ndarray] = field(default_factory=dict)

    def probabilities(self, inputs: np.ndarray) -> np.ndarray:
        """P(multi-hop) for each input row."""
        return _forward(self.weights, (inputs - self.mean) / self.scale)[0]

    def arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to rebuild the head, for ``numpy.savez``."""
        return {"mean": self.mean, "scale": self.scale, **{f"w_{k}": v for k, v in self.weights.items()}}

    @classmethod
    def from_arrays(cls, arrays: Any) -> Head:
        """The head saved by :meth:`arrays`."""
        weights = {name[2:]: np.asarray(arrays[name]) for name in arrays if name.startswith("w_")}
        return cls(np.asarray(arrays["mean"]), np.asarray(arrays["scale"]), weights)


def _sigmoid(values: np.ndarray) -> np.ndarray:
    result: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * values))
    return result


def _forward(weights: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    if "W1" in weights:
        hidden = np.maximum(0.0, x @ weights["W1"] + weights["b1"])
        return _sigmoid(hidden @ weights["W2"] + weights["b2"])[:, 0], hidden
    return _sigmoid(x @ weights["W2"] + weights["b2"])[:, 0], None


def _gradients(
    weights: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, decay: float
) -> dict[str, np.ndarray]:
    """Gradients of the mean binary cross-entropy plus L2 on the weight matrices."""
    probability, hidden = _forward(weights, x)
    delta = ((probability - y) / len(y))[:, None]
    grads: dict[str, np.ndarray] = {}
    top_input = hidden if hidden is not None else x
    grads["W2"] = top_input.T @ delta + decay * weights["W2"]
    grads["b2"] = delta.sum(axis=0)
    if hidden is not None:
        back = (delta @ weights["W2"].T) * (hidden > 0)
        grads["W1"] = x.T @ back + decay * weights["W1"]
        grads["b1"] = back.sum(axis=0)
    return grads


def _initial_weights(inputs: int, hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if hidden <= 0:
        return {"W2": np.zeros((inputs, 1)), "b2": np.zeros(1)}
    return {
        "W1": rng.normal(0.0, np.sqrt(2.0 / inputs), (inputs, hidden)),
        "b1": np.zeros(hidden),
        "W2": rng.normal(0.0, np.sqrt(1.0 / hidden), (hidden, 1)),
        "b2": np.zeros(1),
    }


@dataclass(frozen=True, slots=True)
class EpochRecord:
    """One epoch's training loss and validation F1."""

    epoch: int
    loss: float
    validation_f1: float


@dataclass(frozen=True, slots=True)
class TrainedHead:
    """The best head, the epoch it came from, every epoch's record and why training stopped."""

    head: Head
    best_epoch: int
    history: list[EpochRecord]
    stopped: str


def train_head(
    train_x: np.ndarray,
    train_y: np.ndarray,
    validation_x: np.ndarray,
    validation_y: np.ndarray,
    *,
    config: HeadConfig = HeadConfig(),
    validation_f1: Callable[[np.ndarray, np.ndarray], float],
) -> TrainedHead:
    """Train with Adam on shuffled mini-batches; keep the epoch with the best validation F1."""
    rng = np.random.default_rng(config.seed)
    mean = train_x.mean(axis=0)
    scale = train_x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    x = (train_x - mean) / scale
    xv = (validation_x - mean) / scale
    weights = _initial_weights(x.shape[1], config.hidden, rng)
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in weights.items()}
    beta1, beta2, step = 0.9, 0.999, 0
    best: tuple[float, int, dict[str, np.ndarray]] = (-1.0, 0, {k: v.copy() for k, v in weights.items()})
    history: list[EpochRecord] = []
    stopped = "max_epochs"
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(len(x))
        for start in range(0, len(order), config.batch_size):
            rows = order[start : start + config.batch_size]
            grads = _gradients(weights, x[rows], train_y[rows], config.weight_decay)
            step += 1
            for name, grad in grads.items():
                first, second = moments[name]
                first[:] = beta1 * first + (1 - beta1) * grad
                second[:] = beta2 * second + (1 - beta2) * grad * grad
                corrected = first / (1 - beta1**step)
                weights[name] -= (
                    config.learning_rate * corrected / (np.sqrt(second / (1 - beta2**step)) + 1e-8)
                )
        probability = np.clip(_forward(weights, x)[0], 1e-7, 1 - 1e-7)
        loss = float(-np.mean(train_y * np.log(probability) + (1 - train_y) * np.log(1 - probability)))
        f1 = validation_f1(validation_y, _forward(weights, xv)[0])
        history.append(EpochRecord(epoch, round(loss, 5), round(f1, 5)))
        if f1 > best[0]:
            best = (f1, epoch, {k: v.copy() for k, v in weights.items()})
        elif epoch - best[1] >= config.patience:
            stopped = "early_stopping"
            break
    return TrainedHead(Head(mean, scale, best[2]), best[1], history, stopped)
