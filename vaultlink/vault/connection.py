"""What the tables of ``state.sqlite`` share: ``State``'s connection, lock and transaction.

Each group of tables (journal, proposals, runs, readings) is a mixin of ``State``, which
owns the connection; they declare here, once, what they use of it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any


class StateConnection:
    """The part of ``State`` its table mixins call."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One atomic change (``State.transaction``)."""
        raise NotImplementedError

    def _all(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        raise NotImplementedError
