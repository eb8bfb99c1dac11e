"""Test doubles: a fake Ollama server driven by scripted models (``ollama_server``), a
scripted model that knows the sample vault (``sample_vault_model``), dream runs against
them (``dream_runs``), wrapping embedders (``embedders``) and reserved ports (``ports``)."""

from .ollama_server import (
    EMBED_DIM,
    Action,
    FakeOllama,
    Hang,
    HTTPError,
    Malformed,
    ModelSpec,
    RecordedRequest,
    Scripted,
    ScriptedModel,
    down_url,
    echo,
    fake_embedding,
    reply,
    wait_for,
)

__all__ = [
    "EMBED_DIM",
    "Action",
    "FakeOllama",
    "HTTPError",
    "Hang",
    "Malformed",
    "ModelSpec",
    "RecordedRequest",
    "Scripted",
    "ScriptedModel",
    "down_url",
    "echo",
    "fake_embedding",
    "reply",
    "wait_for",
]
