"""Building the pipeline's parts: the composition root's toolkit.

Called by the CLI and the daemon with the typed ``PipelineOptions`` the CLI read from
the configuration; everything built here receives plain values.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from vaultlink.errors import ModelUnavailable
from vaultlink.index.embed import Embedder
from vaultlink.index.nodes import NodeIndex
from vaultlink.index.recall import Indexes, open_recall
from vaultlink.llm.arbiter import ARBITER, is_local_host
from vaultlink.llm.ollama import OllamaChat, is_reachable, parameter_count
from vaultlink.options import PipelineOptions, Provider, redact_url
from vaultlink.pipeline.context import DreamContext, Extractor, IntegrateMode, ReviewMode
from vaultlink.pipeline.events import ModelProgress, Progress
from vaultlink.pipeline.extract.extractor import ModelExtractor, RulesInstead
from vaultlink.pipeline.offline.extract import OfflineExtractor
from vaultlink.pipeline.offline.policy import MIN_STEPS as OFFLINE_MIN_STEPS
from vaultlink.pipeline.offline.policy import OfflinePolicy
from vaultlink.pipeline.topics import ModelTopicPicker
from vaultlink.vault.notes import Vault
from vaultlink.vault.state import State

log = logging.getLogger(__name__)

OFFLINE_NOTICE = (
    "no Ollama server answers at {host}: using the offline integrator (no LLM). "
    "For model-written digests: install Ollama, run `ollama pull {model}`, and keep "
    "`ollama serve` running (or set llm.provider: offline to silence this)."
)


@dataclass
class Parts:
    """The long-lived parts of one vault: state, embedder, and both search indexes
    (the pipeline uses the node index; the section index answers ``search``)."""

    vault: Vault
    state: State
    embedder: Embedder
    indexes: Indexes

    @property
    def index(self) -> NodeIndex:
        """The node index, which the pipeline recalls from and writes to."""
        return self.indexes.nodes

    def close(self) -> None:
        """Release the database connections and the Chroma client."""
        self.indexes.close()
        self.state.close()


def open_parts(vault: Vault, options: PipelineOptions) -> Parts:
    """Open state.sqlite, the embedder and the search indexes of a vault."""
    state = State(vault.state_dir / "state.sqlite")
    try:
        indexes = open_recall(vault, options)
    except BaseException:
        state.close()
        raise
    return Parts(vault, state, indexes.nodes.embedder, indexes)


MODEL_GONE = (
    "no Ollama server answers at {host}, and a model has written to this vault's digest, "
    "so this run stops rather than mix offline text into it (the notes wait). Start Ollama "
    "(`ollama serve`), or run once with `--llm offline`, or set `llm.fallback: offline` in "
    ".vaultlink/config.yaml to let the offline integrator write while the model is away."
)


def choose_provider(options: PipelineOptions, state: State | None = None) -> Provider:
    """``ollama`` or ``offline``: ``auto`` asks the server once, cheaply.

    With ``auto`` and no server answering, a vault a model has already written to (per
    ``state``'s journal) gets no offline text unless ``llm.fallback`` is ``offline``:
    ``ModelUnavailable`` says so. A vault no model has written to falls back with a notice.
    """
    if options.provider != Provider.AUTO:
        return options.provider
    if is_reachable(options.llm_host):
        return Provider.OLLAMA
    if state is not None and options.fallback != "offline" and state.model_has_written():
        raise ModelUnavailable(MODEL_GONE.format(host=redact_url(options.llm_host)))
    log.warning(OFFLINE_NOTICE.format(host=redact_url(options.llm_host), model=options.model))
    return Provider.OFFLINE


def max_steps(provider: Provider, options: PipelineOptions) -> int:
    """A unit's session turns: ``llm.max_steps``, and for the offline integrator (whose
    turns cost nothing) at least what reading its longest target takes."""
    return max(options.max_steps, OFFLINE_MIN_STEPS) if provider == Provider.OFFLINE \
        else options.max_steps


def models_for(provider: Provider, options: PipelineOptions,
               resource: str = "resource") -> tuple[Extractor, Any]:
    """The extractor and the integrating chat model for a provider (``resource``: the
    vault's folder of kept documents)."""
    if provider == Provider.OFFLINE:
        return OfflineExtractor(), OfflinePolicy(
            same_threshold=options.same_threshold, related_threshold=options.related_threshold,
            digest=options.digest, max_steps=max_steps(provider, options))
    # A model on this machine competes with our embedding for the cores: one at a time.
    arbiter = ARBITER if is_local_host(options.llm_host) else None
    chat = OllamaChat(options.llm_host, options.model, options.num_ctx, options.timeout,
                      options.retries, silence_seconds=options.silence_seconds,
                      arbiter=arbiter)
    return ModelExtractor(chat, options.num_ctx, OfflineExtractor(), resource), chat


ONESHOT_BELOW = 7e9  # parameters: smaller models integrate in one structured call


def integrate_mode(provider: Provider, options: PipelineOptions) -> IntegrateMode:
    """``tools`` or ``oneshot``; ``auto`` picks one-shot for small models (measured in
    ``bench/realmodel``: they rarely drive a tool loop) and for a size Ollama does not say."""
    if provider != Provider.OLLAMA:
        return IntegrateMode.TOOLS  # the offline integrator speaks the tool protocol
    if options.integrate_mode != "auto":
        return IntegrateMode(options.integrate_mode)
    size = parameter_count(options.llm_host, options.model)
    big = size is not None and size >= ONESHOT_BELOW
    return IntegrateMode.TOOLS if big else IntegrateMode.ONESHOT


def close_models(ctx: DreamContext) -> None:
    """Release what a run's model holds open: the HTTP connections of its client.

    Never raises: it runs in ``finally`` blocks, where an error would hide the run's.
    """
    if isinstance(ctx.integrator, OllamaChat):
        try:
            ctx.integrator.close()
        except Exception as exc:  # the GC frees the pool all the same
            log.warning("could not close the Ollama client: %s", exc)


def dream_context(parts: Parts, options: PipelineOptions, provider: Provider, *,
                  dry_run: bool = False, only: frozenset[str] | None = None,
                  progress: Progress | None = None) -> DreamContext:
    """A ready DreamContext for one run."""
    extractor, integrator = models_for(provider, options, parts.vault.resource)
    picker = (ModelTopicPicker(integrator, options.num_ctx) if provider == Provider.OLLAMA
              else None)
    ctx = DreamContext(
        vault=parts.vault, state=parts.state, index=parts.index, extractor=extractor,
        integrator=integrator, provider=provider, max_units=options.max_units,
        mode_of=lambda: integrate_mode(provider, options),
        integrator_name=(f"ollama {options.model}" if provider == Provider.OLLAMA
                         else str(provider)),
        park_after=options.park_after, same_threshold=options.same_threshold,
        related_threshold=options.related_threshold, max_steps=max_steps(provider, options),
        dry_run=dry_run,
        max_topics=options.max_topics, lookback_days=options.lookback_days,
        topic_min_units=options.topic_min_units,
        topic_picker=picker, only=only, progress=progress,
        backfill_days=options.backfill_days, review=ReviewMode(options.review_mode),
        rules=(RulesInstead(extractor.task_lists) if isinstance(extractor, ModelExtractor)
               else None))
    if isinstance(integrator, OllamaChat) and progress is not None:
        integrator.progress = lambda tokens, seconds: ctx.report(
            ModelProgress(tokens, round(seconds, 1)))
    return ctx
