"""What the daemon's worker is doing, for ``GET /status``: the unit or note of the run
under way, and the model's progress on it."""

from __future__ import annotations

import logging
from typing import Any

from vaultlink.options import Provider, redact_url
from vaultlink.pipeline.events import (
    ModelProgress,
    NoteFailed,
    NoteFinished,
    NoteStarted,
    RunEvent,
    UnitFinished,
    UnitStarted,
)

log = logging.getLogger(__name__)


class RunProgress:
    """The progress sink of the daemon's runs: ``current`` is the status API's
    ``current`` (None between units), ``working`` is true while a run is under way."""

    def __init__(self) -> None:
        self.working = False
        self.current: dict[str, Any] | None = None

    def finished(self) -> None:
        """The run is over (done, failed or abandoned)."""
        self.working, self.current = False, None

    def __call__(self, event: RunEvent) -> None:
        match event:
            case UnitStarted(unit=unit, paths=paths):
                self.current = {"unit": unit, "paths": list(paths), "stage": "integrate",
                                "tokens": None, "seconds": None}
            case NoteStarted(path=path):
                self.current = {"unit": "", "paths": [path], "stage": "extract",
                                "tokens": None, "seconds": None}
            case ModelProgress(tokens=tokens, seconds=seconds) if self.current is not None:
                # tokens the model has written so far and seconds since the call began
                self.current = {**self.current, "tokens": tokens, "seconds": seconds}
            case NoteFinished() | NoteFailed():
                self.current = None
            case UnitFinished():
                self.current = None
                log.info("unit %s: %s %s %s", event.unit, event.status, event.action or "",
                         event.target or event.error)


def model_view(configured: Provider, last_used: str, llm_host: str, model: str,
               reachable: bool) -> dict[str, Any]:
    """The status API's ``model``: the provider in use (auto: the one a run would take
    now), the configured one, and the host with no credentials (any token holder reads
    it, and clients log it)."""
    provider, host = last_used, redact_url(llm_host)
    if configured == Provider.AUTO:
        provider = Provider.OLLAMA if reachable else Provider.OFFLINE
    elif configured == Provider.OFFLINE:
        host, model = "", ""  # no model is configured to be used
    return {"provider": str(provider), "configured": str(configured), "host": host,
            "model": model, "reachable": reachable}
