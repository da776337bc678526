"""Fixtures of the report tests."""

from __future__ import annotations

import shutil

import pytest
from _report_support import CHROMIUM_NAMES


@pytest.fixture
def chromium() -> str:
    """The headless browser the page tests render in (skipped where none is installed)."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("chromium is not installed (apt-get install -y --no-install-recommends chromium)")
