"""Test doubles that speak real protocols: a fake Ollama server driven by scripted models."""

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
