"""A free TCP port on 127.0.0.1 that stays reserved until the server under test binds it.

Asking the kernel for a free port and closing the socket leaves a window in which any
other process (a parallel test run, a browser) may take the port. ``hold_port`` keeps
its socket bound, with ``SO_REUSEADDR`` and never listening: the kernel hands the port
to nobody else, while a server that also sets ``SO_REUSEADDR`` (``http.server``,
uvicorn, Chroma) can still bind and listen on it. Release it once the server is up.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


class HeldPort:
    """A reserved port: ``port`` to hand to the server, ``release()`` once it listens."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]

    def release(self) -> None:
        """Give the reservation up (idempotent)."""
        self._sock.close()


@contextmanager
def hold_port() -> Iterator[HeldPort]:
    """A ``HeldPort`` for the length of the block."""
    held = HeldPort()
    try:
        yield held
    finally:
        held.release()
