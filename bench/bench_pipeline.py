"""Pipeline overhead per unit, model time excluded, and prompt tokens per unit.

Runs the full dream (extract, integrate, topics, finish) on fresh copies of
sample_vault/ against the fake Ollama server answering instantly with the competent
scripted model, through the real ollama.Client. Time spent inside model calls
(HTTP round trip to the fake included) is measured and subtracted.

    python bench/bench_pipeline.py [--rounds 3]

Target (issue 4): under 50 ms per unit excluding model time; every request inside
num_ctx.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.ollama_server import FakeOllama  # noqa: E402
from tests.fakes.sample_vault_model import CompetentModel  # noqa: E402
from vaultlink.cli.settings import load_settings  # noqa: E402
from vaultlink.llm.chat import estimate_tokens  # noqa: E402
from vaultlink.options import Provider  # noqa: E402
from vaultlink.pipeline.compose import dream_context, open_parts  # noqa: E402
from vaultlink.pipeline.run import build_steps, run_dream  # noqa: E402
from vaultlink.vault.notes import Vault  # noqa: E402


class Timed:
    """Wraps a chat model and adds up the time spent inside it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.requests: list[int] = []

    def chat(self, messages: list[dict[str, Any]], tools: Any = None, schema: Any = None) -> Any:
        self.requests.append(estimate_tokens("".join(str(m.get("content", ""))
                                                     for m in messages)))
        start = time.perf_counter()
        try:
            return self.inner.chat(messages, tools=tools, schema=schema)
        finally:
            self.seconds += time.perf_counter() - start


class TimedEmbedder:
    """Wraps the embedder and adds up the time spent embedding."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.seconds = 0.0

    def embed(self, texts: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start


def one_round(url: str, num_ctx: int) -> tuple[float, float, float, int, list[int], list[int]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(ROOT / "sample_vault", root, copy_function=shutil.copy)  # fresh
        settings = load_settings(root, environ={}).with_overrides(
            {"llm.provider": "ollama", "llm.host": url, "auto_dream.max_units": 50,
             "llm.num_ctx": num_ctx})
        parts = open_parts(Vault(root), settings.pipeline())
        parts.index.sync()  # the index build is measured by bench_index.py, not here
        embedder = TimedEmbedder(parts.index.embedder)
        parts.index.embedder = embedder
        ctx = dream_context(parts, settings.pipeline(), Provider.OLLAMA)
        integrator = Timed(ctx.integrator)
        ctx.integrator = integrator
        extractor_model = Timed(ctx.extractor.model)  # type: ignore[attr-defined]
        ctx.extractor.model = extractor_model  # type: ignore[attr-defined]
        topics_model = Timed(ctx.topic_picker.model)  # type: ignore[union-attr, attr-defined]
        ctx.topic_picker.model = topics_model  # type: ignore[union-attr, attr-defined]
        start = time.perf_counter()
        run = run_dream(ctx, build_steps(settings.get("auto_dream.steps")))
        total = time.perf_counter() - start
        parts.close()
        model_time = integrator.seconds + extractor_model.seconds + topics_model.seconds
        per_unit_tokens = [sum(r.prompt_tokens) for r in run.report.results]
        return (total, model_time, embedder.seconds, len(run.report.results), per_unit_tokens,
                integrator.requests + extractor_model.requests + topics_model.requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--num-ctx", type=int, default=8192)
    args = parser.parse_args()
    overheads, no_embed, embeds, tokens, requests, units = [], [], [], [], [], 0
    with FakeOllama(model=CompetentModel()) as server:
        for _ in range(args.rounds):
            total, model_time, embed_time, n, per_unit, reqs = one_round(server.url,
                                                                         args.num_ctx)
            overheads.append((total - model_time) / max(n, 1) * 1000)
            no_embed.append((total - model_time - embed_time) / max(n, 1) * 1000)
            embeds.append(embed_time / max(n, 1) * 1000)
            tokens += per_unit
            requests += reqs
            units += n
    print(f"rounds {args.rounds}, units {units} (sample_vault, competent scripted model)")
    print(f"pipeline time per unit excluding model: median {statistics.median(overheads):.1f}"
          f" ms, max {max(overheads):.1f} ms (target < 50 ms)")
    print(f"  of which embedding (MiniLM, query + re-index of the written node): median "
          f"{statistics.median(embeds):.1f} ms")
    print(f"  without the embedding model either: median {statistics.median(no_embed):.1f} ms")
    print(f"prompt tokens per unit (all requests of its session): median "
          f"{statistics.median(tokens):.0f}, max {max(tokens)}")
    print(f"largest single request: {max(requests)} tokens (estimated) of num_ctx "
          f"{args.num_ctx}: {'inside' if max(requests) < args.num_ctx else 'OVER'}")


if __name__ == "__main__":
    main()
