"""Whether the daemon's queue may go to the model now: reachability and backoff.

With ``llm.provider: ollama`` a run needs the server. When it does not answer (or
answers without the model) the queue waits, retried with exponential backoff that
only a run that got through resets, so a broken setup is never hammered in a loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from vaultlink.options import Provider, redact_url

log = logging.getLogger(__name__)

MODEL_BACKOFF = (5.0, 300.0)  # first and longest wait while Ollama does not answer
REACHABLE_TTL = 30.0  # seconds a reachability answer is reused for the status


class ModelGate:
    """The model's availability as the daemon sees it.

    ``probe`` answers whether the server is up (``llm.is_reachable`` bound to the host);
    the provider ``offline`` is always open, ``auto`` never waits for the server.
    """

    def __init__(self, provider: Provider, host: str, probe: Callable[[str], bool],
                 backoff: tuple[float, float] = MODEL_BACKOFF) -> None:
        self.provider, self.host, self.backoff = provider, host, backoff
        self._probe = probe
        self.wait = 0.0  # the current backoff step; 0 while the model answers
        self.retry_at = 0.0  # when a waiting queue may try again
        self._reachable: tuple[float, bool] | None = None

    def open(self, now: float) -> bool:
        """May a run start now? Only ``ollama`` ever waits, and then probes the server."""
        if self.provider != Provider.OLLAMA:
            return True
        if now < self.retry_at:
            return False
        if self.reachable(fresh=True):
            return True
        self.down(now, f"Ollama does not answer at {redact_url(self.host)}")
        return False

    def down(self, now: float, why: str) -> None:
        """The model failed: wait the next backoff step before trying again."""
        first, longest = self.backoff
        if not self.wait:
            log.warning("%s; work waits for the model (retrying with backoff)", why)
        self.wait = min(max(self.wait * 2, first), longest)
        self.retry_at = now + self.wait

    def up(self) -> None:
        """A run got through: the next failure starts the backoff over."""
        if self.wait:
            log.info("the model answers again; resuming")
            self.wait = 0.0

    def waiting(self, now: float) -> bool:
        """True while an ``ollama`` queue waits out the backoff."""
        return self.provider == Provider.OLLAMA and self.retry_at > now

    def reachable(self, fresh: bool = False) -> bool:
        """Whether the integrator answers: offline always; Ollama probed, cached 30 s."""
        if self.provider == Provider.OFFLINE:
            return True
        now = time.monotonic()
        if fresh or self._reachable is None or now - self._reachable[0] > REACHABLE_TTL:
            self._reachable = (now, self._probe(self.host))
        return self._reachable[1]
