"""Fixtures of the classifier tests: one tiny model trained, evaluated and exported per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.classifier.support import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(run dir, export dir) of a model trained on 400 generated examples with the offline USE encoder."""
    return build_tiny_model(tmp_path_factory.mktemp("classifier"))
