"""The chat protocol the dream speaks, the Ollama client behind it, the probe ``doctor``
runs, and the gate that backs off a model that is down.
"""
