"""Fault seams: named points where a test can kill the process or fail a write.

A crash test needs the real process to die at the worst moment (a temp file written
but not yet renamed, a node written but not yet journaled), which a random kill hits
only by luck. So the writers call :func:`crash_point` at those moments; it does
nothing unless armed. Only the entry points arm it, from ``VAULTLINK_FAULTS``
(``cli.main``), or a test in its own process calls :func:`arm`. The spec is a comma
list of ``kind:point[@n]``:

* ``kill:<point>[@n]`` -- SIGKILL this process the n-th time (default 1st) it reaches
  ``point``; nothing is flushed, no ``finally`` runs: a power cut, as far as the
  vault can tell.
* ``eio:<point>[@n[+]]`` / ``enospc:...`` / ``erofs:...`` -- raise that ``OSError``
  there instead: the n-th time only (a passing glitch), or with ``+`` from the n-th
  time on (a disk that stays broken). The tests use a real small or read-only file
  system where they can (as root); these are the fallback.

The points (``POINTS``) name the moments the crash tests aim at. This module imports
nothing of vaultlink, so the lowest layer can call it.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Mapping

ENV = "VAULTLINK_FAULTS"

POINTS = {
    "after_temp": "the new text is in its temp file, fsynced; the target is untouched",
    "after_aside": "the old node is renamed aside: for this instant the name is empty",
    "after_rename": "the new text has the node's name; the temp and aside files remain",
    "after_node_write": "a unit's node is written, its journal row is not",
    "between_units": "one unit is journaled, the next not started",
    "mid_index_sync": "an index batch is half stored (SQLite open, Chroma partly done)",
    "mid_checkpoint": "the checkpoint rows are inserted but not committed",
    "mid_undo": "an undo group has changed some files and not others",
}
KINDS = {"kill", "eio", "enospc", "erofs"}

_lock = threading.Lock()
_armed: dict[str, tuple[str, int, bool]] = {}  # point -> (kind, n, and every later time)
_hits: dict[str, int] = {}


def parse(spec: str) -> dict[str, tuple[str, int, bool]]:
    """``kill:after_temp@2,eio:mid_undo@1+`` -> ``{point: (kind, n, on)}``; ValueError
    if bad."""
    armed: dict[str, tuple[str, int, bool]] = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        kind, _, rest = item.partition(":")
        point, _, count = rest.partition("@")
        on = count.endswith("+")
        count = count.removesuffix("+")
        if kind not in KINDS or point not in POINTS:
            raise ValueError(f"{ENV}: {item!r} is not kind:point[@n[+]] with kind one of "
                             f"{sorted(KINDS)} and point one of {sorted(POINTS)}")
        if count and not count.isdigit():
            raise ValueError(f"{ENV}: {item!r}: the count after @ must be a whole number")
        armed[point] = (kind, max(1, int(count or 1)), on)
    return armed


def arm(spec: str) -> None:
    """Arm the seams named by ``spec`` (replacing any armed before); '' disarms."""
    armed = parse(spec)
    with _lock:
        _armed.clear()
        _armed.update(armed)
        _hits.clear()


def arm_from_env(environ: Mapping[str, str]) -> None:
    """The entry points' call: arm from ``VAULTLINK_FAULTS`` when it is set."""
    spec = environ.get(ENV, "")
    if spec:
        arm(spec)


def crash_point(point: str) -> None:
    """Mark a dangerous moment; a no-op unless a test armed ``point``."""
    if not _armed:  # the fast path: one dict check per write
        return
    with _lock:
        plan = _armed.get(point)
        if plan is None:
            return
        _hits[point] = _hits.get(point, 0) + 1
        kind, n, on = plan
        if _hits[point] < n or (_hits[point] > n and not on):
            return
    if kind == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    code = {"eio": errno.EIO, "enospc": errno.ENOSPC, "erofs": errno.EROFS}[kind]
    raise OSError(code, f"{os.strerror(code)} (injected at {point})")
