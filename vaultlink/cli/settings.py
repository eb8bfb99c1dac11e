"""Settings: defaults < ``.vaultlink/config.yaml`` < ``VAULTLINK_*`` environment.

Only the ``cli`` package calls ``load_settings``; everything below it receives typed,
frozen options (``vaultlink.options``) built here once per command. The commented default
file that ``vaultlink init`` writes is the single source of the defaults, so
documentation and behaviour cannot drift apart.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from vaultlink.errors import ConfigError
from vaultlink.options import RERANKER_NAMES, DaemonOptions, PipelineOptions, Provider

DEFAULT_CONFIG_YAML = """\
# vaultlink settings. Every key is shown with its default; delete what you don't change.
# Environment variables override this file: VAULTLINK_<SECTION>__<KEY>, for example
# VAULTLINK_LLM__MODEL=qwen3:4b or VAULTLINK_WATCH__QUIET_SECONDS=60.

folders:
  daily: daily          # the user's day notes (read only)
  resource: resource    # papers, clippings (read only)
  digest: digest        # where vaultlink writes digest/<bucket>/<slug>.md

vault:
  max_note_bytes: 2000000   # larger notes are skipped with a reason, never read

llm:
  provider: auto        # auto: Ollama when it answers, else the offline integrator
                        # ollama: always the model (work waits while it is down)
                        # offline: never a model
  host: http://127.0.0.1:11434
  model: qwen2.5-coder:1.5b  # `ollama pull qwen2.5-coder:1.5b`; see README, Models
  num_ctx: 8192         # context sent with every call; prompts are packed to fit
  silence_seconds: 300  # a call ends when the model sends nothing this long (reading
                        # the prompt counts: a slow CPU needs minutes for a long one)
  timeout_seconds: 1800 # one call in all, answer included (0: no limit)
  integrate_mode: auto  # oneshot: one structured answer per unit (small models)
                        # tools: the model drives the six tools; auto: by model size
  max_steps: 12         # tool calls per unit before the attempt is given up
  retries: 2            # extra tries on connection errors and 5xx, with backoff
  fallback: none        # auto, once a model has written to this vault, and it does not
                        # answer: none stops the run (the notes wait for the model);
                        # offline writes offline text all the same

embedding:
  provider: local       # local: a model installed with vaultlink (no download); ollama
  model: minilm-l6-v2-int8  # local: minilm-l6-v2-int8 (English) or multilingual-e5-small-q4
                        # (~100 languages; `vaultlink init` picks it when the notes are not
                        # mostly English); ollama: e.g. nomic-embed-text. A new model
                        # rebuilds the index (its vectors are another space)
  sections: fast        # the section index of `search`: fast is MiniLM with int8
                        # arithmetic (about twice as fast to build, recall within 0.01 on
                        # bench.quality.sectionrecall); same: the model above. The
                        # multilingual model always embeds the sections itself

index:
  body_chars: 1000      # opening of a digest body indexed with its name and description
  # node-search and search leave out hits below this cosine similarity, unless keyword
  # search ranked them among its best 3; picked by `python -m bench.quality.floor`
  # (keeps 98% of related hits, drops 77% of the others)
  min_similarity: 0.15
  reranker: none        # ms-marco-minilm-l12: `search` reads its first 10 notes again with
                        # a cross-encoder (English queries; about 1 s a query on 2 cores;
                        # pip install 'vaultlink[rerank]'); see docs/quality.md, LoCoMo
  chroma:
    mode: embedded      # embedded: in .vaultlink/state.sqlite; http: a Chroma server
    host: 127.0.0.1
    port: 8000

backfill:
  days: 14              # a vault's first start integrates notes changed in these last days;
                        # older ones wait (indexed for search): `vaultlink backfill` takes them

auto_dream:
  steps:
    - dream_extract_step
    - dream_integrate_step
    - dream_topics_step
    - dream_finish_step
  max_units: 5          # units per run; the rest waits for the next run, never dropped
  park_after: 3         # runs a failed unit (or note) is retried before it waits for
                        # you: `vaultlink status` lists it, `dream --retry-parked` resumes

integrate:
  # cosine similarity (node_search `similarity`) thresholds of the offline integrator,
  # chosen by F1 on labelled pairs: `python -m bench.quality`
  same_threshold: 0.60     # at or above: the same abstraction, update that node
  related_threshold: 0.24  # at or above: related, woven in as a link

review:
  # Review before write. uncertain: a decision vaultlink is not sure of (any correction,
  # an update whose unit does not name the node's subject, a page merged into a node made
  # from another page) waits as a proposal: `vaultlink review`, or the plugin's panel,
  # approves, rejects or writes it as a new node; everything else is written at once.
  # all: every decision waits. off: every decision is written (undo is still there).
  mode: uncertain

topics:
  max_topics: 3
  min_units: 4          # the model groups a day's units into topics once, when the day
                        # holds this many (its topics so far and the run's units);
                        # fewer: one topic each
  lookback_days: 7      # a topic seen in this many past days is not repeated

watch:
  quiet_seconds: 120    # a note is integrated after it has been unchanged this long
  schedule: ""          # optional daily time "HH:MM" for a full run; empty: none
  nice: 10              # the daemon lowers its CPU priority this much (0-19; 0: not at
                        # all), so the editor and the model's server come first

api:
  port: 8765            # the status API, on 127.0.0.1 only
"""

DEFAULTS: dict[str, Any] = yaml.safe_load(DEFAULT_CONFIG_YAML)

_MODEL_LINE = "  model: minilm-l6-v2-int8  # local: minilm-l6-v2-int8"


def config_yaml(embedding_model: str | None = None, why: str = "") -> str:
    """The commented default file, with ``embedding.model`` set to ``embedding_model``
    (None: the default) and ``why`` as a comment above it (what ``vaultlink init``
    saw in the notes)."""
    if embedding_model is None:
        return DEFAULT_CONFIG_YAML
    width = len("  model: minilm-l6-v2-int8")  # the comment keeps its column
    line = f"  model: {embedding_model}".ljust(width)
    note = "".join(f"  # {part}\n" for part in why.splitlines() if part)
    text = DEFAULT_CONFIG_YAML.replace(_MODEL_LINE, note + line + "  # local: minilm-l6-v2-int8", 1)
    assert yaml.safe_load(text)["embedding"]["model"] == embedding_model
    return text


@dataclass(frozen=True)
class Settings:
    """The merged settings, as a nested mapping with typed accessors for common keys."""

    data: Mapping[str, Any]
    source: str = "defaults"

    def get(self, dotted: str) -> Any:
        """A value by dotted key, e.g. ``settings.get("llm.model")``."""
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise ConfigError(f"unknown setting {dotted!r}")
            node = node[part]
        return node

    def pipeline(self) -> PipelineOptions:
        """The values the pipeline's parts are built from, typed (see ``pipeline/compose.py``)."""
        g = self.get
        return PipelineOptions(
            provider=Provider(g("llm.provider")), llm_host=str(g("llm.host")),
            model=str(g("llm.model")), num_ctx=int(g("llm.num_ctx")),
            timeout=float(g("llm.timeout_seconds")), retries=int(g("llm.retries")),
            max_steps=int(g("llm.max_steps")),
            embedding_provider=str(g("embedding.provider")),
            embedding_model=str(g("embedding.model")),
            section_embedding=str(g("embedding.sections")),
            chroma_mode=str(g("index.chroma.mode")), chroma_host=str(g("index.chroma.host")),
            chroma_port=int(g("index.chroma.port")), body_chars=int(g("index.body_chars")),
            same_threshold=float(g("integrate.same_threshold")),
            related_threshold=float(g("integrate.related_threshold")),
            digest=str(g("folders.digest")), max_units=int(g("auto_dream.max_units")),
            max_topics=int(g("topics.max_topics")), topic_min_units=int(g("topics.min_units")),
            lookback_days=int(g("topics.lookback_days")), fallback=str(g("llm.fallback")),
            backfill_days=int(g("backfill.days")), model_cache=str(model_cache_dir()),
            silence_seconds=float(g("llm.silence_seconds")),
            integrate_mode=str(g("llm.integrate_mode")),
            park_after=int(g("auto_dream.park_after")),
            review_mode=str(g("review.mode")), reranker=str(g("index.reranker")))

    def daemon(self) -> DaemonOptions:
        """What the daemon runs with, typed (see ``daemon.service.Daemon``)."""
        g = self.get
        return DaemonOptions(
            daily=str(g("folders.daily")), resource=str(g("folders.resource")),
            digest=str(g("folders.digest")), max_note_bytes=int(g("vault.max_note_bytes")),
            quiet_seconds=float(g("watch.quiet_seconds")), schedule=str(g("watch.schedule")),
            api_port=int(g("api.port")), steps=tuple(g("auto_dream.steps")),
            pipeline=self.pipeline(), nice=int(g("watch.nice")))

    def with_overrides(self, overrides: Mapping[str, Any]) -> Settings:
        """A copy with dotted keys replaced (command-line flags); ``None`` values are ignored."""
        data = copy.deepcopy(dict(self.data))
        for dotted, value in overrides.items():
            if value is None:
                continue
            _set_dotted(data, dotted, value)
        return Settings(_validated(data), self.source)


def model_cache_dir() -> Path:
    """The user's cache folder for vaultlink (``$XDG_CACHE_HOME/vaultlink``, else
    ``~/.cache/vaultlink``): the embedding model's optimised graph, shared by vaults."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vaultlink"


def config_path(vault: Path) -> Path:
    """Where a vault's configuration lives."""
    return vault / ".vaultlink" / "config.yaml"


def load_settings(vault: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then the vault's config.yaml if present, then ``VAULTLINK_*`` variables."""
    data = copy.deepcopy(DEFAULTS)
    source = "defaults"
    path = config_path(vault)
    if path.is_file():
        try:
            user = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            what = getattr(exc, "problem", None) or exc.__class__.__name__
            raise ConfigError(f"{path} does not parse{where} ({what}); fix it, "
                              "or delete it and run `vaultlink init`") from None
        if not isinstance(user, dict):
            raise ConfigError(f"{path} must be a mapping of sections to keys")
        _merge(data, user, prefix="")
        source = str(path)
    env = os.environ if environ is None else environ
    for name, raw in env.items():
        if not name.startswith("VAULTLINK_") or "__" not in name:
            continue
        dotted = name[len("VAULTLINK_"):].lower().replace("__", ".")
        try:
            _set_dotted(data, dotted, _env_value(dotted, raw), strict=True)
        except ConfigError as exc:
            raise ConfigError(f"environment variable {name}: {exc}") from None
    return Settings(_validated(data), source)


def _env_value(dotted: str, raw: str) -> Any:
    """An environment value: as text for text settings, else parsed as YAML (numbers, lists).

    Text stays text, so ``VAULTLINK_LLM__MODEL=yes`` is the model "yes", not True, and
    ``VAULTLINK_WATCH__SCHEDULE=12:30`` is not read as the base-60 number 750.
    """
    try:
        default = Settings(DEFAULTS).get(dotted)
    except ConfigError:
        default = None  # unknown: _set_dotted names it
    if isinstance(default, str):
        return raw
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        raise ConfigError(f"{raw!r} is not a valid value for {dotted!r}") from None


def _merge(base: dict[str, Any], new: Mapping[str, Any], prefix: str) -> None:
    for key, value in new.items():
        dotted = f"{prefix}{key}"
        if key not in base:
            raise ConfigError(f"unknown setting {dotted!r} in config.yaml; "
                              "see `vaultlink init --print` for every key")
        if isinstance(base[key], dict):
            if value is None:  # a section whose keys were all deleted: the defaults stay
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"setting {dotted!r} must be a section of keys")
            _merge(base[key], value, prefix=dotted + ".")
        else:
            base[key] = value


def _set_dotted(data: dict[str, Any], dotted: str, value: Any, strict: bool = True) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            raise ConfigError(f"unknown setting {dotted!r}")
        node = node[part]
    if strict and parts[-1] not in node:
        raise ConfigError(f"unknown setting {dotted!r}")
    if isinstance(node.get(parts[-1]), dict) and not isinstance(value, dict):
        raise ConfigError(f"{dotted!r} is a section, not a setting; set one of its keys "
                          f"({', '.join(node[parts[-1]])})")
    node[parts[-1]] = value


_TYPES: dict[str, type | tuple[type, ...]] = {
    "vault.max_note_bytes": int, "llm.num_ctx": int, "llm.timeout_seconds": (int, float),
    "llm.silence_seconds": (int, float), "auto_dream.park_after": int,
    "llm.max_steps": int, "llm.retries": int, "index.body_chars": int,
    "index.chroma.port": int, "auto_dream.max_units": int, "topics.max_topics": int,
    "topics.min_units": int,
    "topics.lookback_days": int, "watch.quiet_seconds": (int, float), "api.port": int,
    "watch.nice": int,
    "backfill.days": int,
    "integrate.same_threshold": (int, float), "integrate.related_threshold": (int, float),
    "index.min_similarity": (int, float),
}
_CHOICES = {
    "llm.provider": tuple(Provider),
    "llm.fallback": ("none", "offline"),
    "llm.integrate_mode": ("auto", "tools", "oneshot"),
    "embedding.provider": ("local", "ollama"),
    "embedding.sections": ("fast", "same"),
    "index.chroma.mode": ("embedded", "http"),
    "index.reranker": RERANKER_NAMES,
    "review.mode": ("off", "uncertain", "all"),
}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _validated(data: dict[str, Any]) -> dict[str, Any]:
    review = data.get("review")
    if isinstance(review, dict) and review.get("mode") is False:
        review["mode"] = "off"  # YAML reads a bare `off` as false
    settings = Settings(data)
    for dotted, kind in _TYPES.items():
        value: Any = settings.get(dotted)
        if isinstance(value, bool) or not isinstance(value, kind):
            hint = ("; remove the quotes around it in config.yaml"
                    if isinstance(value, str) and _is_number(value) else "")
            raise ConfigError(f"setting {dotted!r} must be a number, not {value!r}{hint}")
        if isinstance(value, (int, float)) and value < 0:
            raise ConfigError(f"setting {dotted!r} must not be negative")
    for dotted, choices in _CHOICES.items():
        if settings.get(dotted) not in choices:
            raise ConfigError(f"setting {dotted!r} is {settings.get(dotted)!r}; "
                              f"choose one of {', '.join(choices)}")
    for dotted, default in _leaves(DEFAULTS):
        value = settings.get(dotted)
        if isinstance(default, str) and not isinstance(value, str):
            raise ConfigError(f"setting {dotted!r} must be text, not {value!r}; "
                              "put it in quotes in config.yaml")
    if settings.get("llm.silence_seconds") <= 0:
        raise ConfigError("setting 'llm.silence_seconds' must be above 0: it is how long a "
                          "model may stay silent before the call is given up")
    if not 0 <= settings.get("watch.nice") <= 19:
        raise ConfigError("setting 'watch.nice' must be from 0 (the daemon keeps its CPU "
                          "priority) to 19 (the lowest)")
    if settings.get("topics.min_units") < 1:
        raise ConfigError("setting 'topics.min_units' must be 1 or more")
    steps = settings.get("auto_dream.steps")
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise ConfigError("setting 'auto_dream.steps' must be a list of step names")
    for key in ("daily", "resource", "digest"):
        name = settings.get(f"folders.{key}")
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise ConfigError(f"setting 'folders.{key}' must be a plain folder name")
    return data


def _leaves(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Every ``(dotted key, value)`` below the sections of ``data``."""
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, Mapping):
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out
