"""The process's heap: given back to the system after a burst, and kept from growing
behind live blocks in a long-lived daemon (glibc's ``malloc_trim`` and ``mallopt``; a
no-op where the C library is another). The memory each saves: docs/performance.md,
"Figures behind rules in the code".
"""

from __future__ import annotations

import ctypes
import gc
import logging
import sys

log = logging.getLogger(__name__)

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h


def give_back_freed_heap() -> None:
    """Return to the system the heap a burst freed (onnxruntime copies a graph's weights
    out of its parse; glibc would keep the freed pages mapped)."""
    _glibc("malloc_trim", 0)


def release_after_run() -> None:
    """Collect cycles and give back freed heap after a run: a run parses notes, builds
    prompts and reads model answers, tens of MB of short-lived objects."""
    gc.collect()
    give_back_freed_heap()


def hold_heap_steady() -> None:
    """Fix glibc's mmap threshold at 256 KiB for this process (a daemon's, for weeks).
    By default glibc raises it to the size of each large block freed, up to 32 MiB, so
    the embedding model's buffers move into the heap, where freed pages stay mapped
    behind live ones."""
    _glibc("mallopt", _M_MMAP_THRESHOLD, 256 * 1024)


def _glibc(function: str, *args: int) -> None:
    """Call a glibc heap function; nothing where the C library is another (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        getattr(ctypes.CDLL("libc.so.6"), function)(*args)
    except (OSError, AttributeError):  # musl, or no glibc by that name
        log.debug("%s is not available; the heap keeps glibc's ways", function)
