"""The typed options the CLI reads from the settings once and hands down.

Nothing below ``cli`` reads configuration: the daemon, the dream and the indexes receive
these frozen values (``cli.settings.Settings.pipeline()`` and ``.daemon()`` build them).
Their defaults are written once, in ``cli/settings.py``'s default file; none here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

# A URL's user info (``user:pass@``, ``token@``), after its scheme or at the start of a
# bare ``host`` setting; greedy up to the last ``@`` before the path, as urlsplit reads it.
_USERINFO = re.compile(r"(?P<lead>[A-Za-z][A-Za-z0-9+.-]*://|^)[^/?#\s]*@")
# The value of each query parameter (``?token=...``): any of them may be a key.
_QUERY_VALUE = re.compile(r"(?P<key>[?&;][^=&#\s]*=)[^&#\s'\"]*")


def redact_url(text: str) -> str:
    """``text`` (a URL setting such as ``llm.host``, or a message quoting URLs) with the
    user info and query values masked: ``http://user:s3cret@h:11434`` ->
    ``http://***@h:11434``. What the log, the status API and the terminal show of a URL
    setting; the clients connect with the setting itself, credentials and all."""
    text = _USERINFO.sub(lambda m: f"{m['lead']}***@", text)
    return _QUERY_VALUE.sub(lambda m: f"{m['key']}***", text)


class Provider(StrEnum):
    """``llm.provider``: who integrates. auto: Ollama when it answers, else offline;
    ollama: always the model (work waits while it is down); offline: never a model."""

    AUTO = "auto"
    OLLAMA = "ollama"
    OFFLINE = "offline"


# index.reranker: the models ``search`` may read its first notes again with (index/rerank.py)
RERANKER_NAMES = ("none", "ms-marco-minilm-l12")

@dataclass(frozen=True)
class PipelineOptions:
    """What ``pipeline/compose.py`` builds a run's parts from (models, indexes, thresholds)."""

    provider: Provider
    llm_host: str
    model: str
    num_ctx: int
    timeout: float  # llm.timeout_seconds: one call in all (0: no limit)
    retries: int
    max_steps: int
    embedding_provider: str
    embedding_model: str
    chroma_mode: str
    chroma_host: str
    chroma_port: int
    body_chars: int
    same_threshold: float
    related_threshold: float
    digest: str
    max_units: int
    max_topics: int
    lookback_days: int
    fallback: str  # llm.fallback: offline lets auto write offline text after a model
    backfill_days: int | None  # backfill.days; None: a first start holds nothing back
    section_embedding: str  # embedding.sections: fast | same
    model_cache: str  # where the embedder keeps its optimised graph ("": nowhere)
    silence_seconds: float  # llm.silence_seconds: no token for this long ends a call
    integrate_mode: str  # llm.integrate_mode: auto | tools | oneshot
    park_after: int  # auto_dream.park_after: runs a failed unit is tried
    topic_min_units: int  # topics.min_units: a day's units before the model groups them
    review_mode: str  # off | uncertain | all (pipeline/integrate/review.py)
    reranker: str  # index.reranker: none | ms-marco-minilm-l12 (index/rerank.py)


@dataclass(frozen=True)
class DaemonOptions:
    """What ``vaultlink watch`` runs with: the vault's folders, the settle time, the
    schedule, the API port, and the options of each run it starts."""

    daily: str
    resource: str
    digest: str
    max_note_bytes: int
    quiet_seconds: float
    schedule: str  # HH:MM of the daily full run, or "" for none
    api_port: int
    steps: tuple[str, ...]
    pipeline: PipelineOptions
    nice: int  # watch.nice: steps the daemon lowers its own CPU priority (0: none)


@dataclass(frozen=True)
class AssistOptions:
    """What ``vaultlink mcp`` serves with: recall's options (read in its own process
    while no daemon runs) and the relevance floor ``node-search`` and ``search`` use."""

    pipeline: PipelineOptions
    min_similarity: float  # index.min_similarity
