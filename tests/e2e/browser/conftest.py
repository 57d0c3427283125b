"""The browser tests (Chromium through Playwright): every test here is marked `browser` and `e2e`,
so `make check` leaves them out and `make test` runs them. They drive the web app the web tests
use: its fixtures come from tests/starter/web/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.starter.web.conftest import open_web_server, web_server, web_worker  # noqa: F401 (fixtures)

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.e2e)
