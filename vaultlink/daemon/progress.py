"""What the daemon's worker is doing, for ``GET /status``: the unit or note of the run
under way, and the model's progress on it."""

from __future__ import annotations

import logging
from typing import Any

from vaultlink.options import Provider, redact_url

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

    def __call__(self, event: str, detail: dict[str, Any]) -> None:
        if event == "unit_started":
            self.current = {"unit": detail.get("unit"), "paths": list(detail.get("paths", [])),
                            "stage": "integrate", "tokens": None, "seconds": None}
        elif event == "note_started":
            self.current = {"unit": "", "paths": [detail.get("path")], "stage": "extract",
                            "tokens": None, "seconds": None}
        elif event == "model_progress" and self.current is not None:
            # tokens the model has written so far and seconds since the call began
            self.current = {**self.current, "tokens": detail.get("tokens"),
                            "seconds": detail.get("seconds")}
        elif event in ("note_finished", "note_failed"):
            self.current = None
        elif event == "unit_finished":
            self.current = None
            log.info("unit %s: %s %s %s", detail.get("unit"), detail.get("status"),
                     detail.get("action") or "", detail.get("target") or detail.get("error"))


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
