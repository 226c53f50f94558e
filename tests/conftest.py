"""Shared pytest settings: ``slow`` tests are skipped unless asked for.

The ``slow`` marker is declared in pyproject.toml. A default run skips every test marked with
it; ``pytest -m slow`` (or any ``-m`` expression that names ``slow``) or ``pytest --runslow``
runs them.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow or --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
