"""Waiting, with a deadline, for what another thread or process does (a daemon's run, a
watcher's event): tests poll instead of sleeping for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(pred: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
    """``pred()``'s first true value, polled every 50 ms; fails the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or pred}")
