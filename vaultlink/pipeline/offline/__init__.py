"""The offline path (no LLM): extractor and integrator, re-exported from their modules.

``OfflineExtractor`` (``vaultlink.pipeline.offline.extract``) cuts units out of the new sections
of changed notes, quoting only the notes' own sentences. ``OfflinePolicy``
(``vaultlink.pipeline.offline.policy``) is a deterministic chat model that drives the same six
tools, agent loop and guard as a real model, deciding by node_search similarity. The
thresholds come in from configuration (``integrate.same_threshold`` and
``integrate.related_threshold``), chosen by ``python -m bench.quality``.
"""

from vaultlink.pipeline.offline.extract import OfflineExtractor
from vaultlink.pipeline.offline.policy import OfflinePolicy, unit_query

__all__ = ["OfflineExtractor", "OfflinePolicy", "unit_query"]
