"""One heavy job at a time: the arbiter's order, pinned with real threads.

No test asserts a duration: each waits (with a generous deadline that only a hang
reaches) until the arbiter says how many jobs queue, then releases the holder and
reads the order the jobs ran in.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.fakes.ollama_server import FakeOllama, reply
from vaultlink.llm.arbiter import (
    BACKFILL,
    EMBED,
    INDEX,
    MODEL,
    Arbiter,
    ArbitratedEmbedder,
    is_local_host,
    lower_priority,
)
from vaultlink.llm.ollama import OllamaChat

HANG = 30.0  # seconds: only a broken arbiter waits this long


def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (polling); fail only if it never comes."""
    deadline = time.monotonic() + HANG
    while not condition():
        assert time.monotonic() < deadline, "the arbiter never got there"
        time.sleep(0.005)


def queue_behind_holder(arbiter: Arbiter, kinds: Sequence[tuple[str, int]],
                        order: list[str]) -> threading.Event:
    """Hold the arbiter in a thread, queue one thread per (name, kind) in list order,
    and return the event that releases the holder."""
    release, held = threading.Event(), threading.Event()

    def holder() -> None:
        with arbiter.job(MODEL):
            held.set()
            release.wait(HANG)

    def job(name: str, kind: int) -> None:
        with arbiter.job(kind):
            order.append(name)

    threading.Thread(target=holder, daemon=True).start()
    until(held.is_set)
    for n, (name, kind) in enumerate(kinds, start=1):
        threading.Thread(target=job, args=(name, kind), daemon=True).start()
        until(lambda n=n: arbiter.waiting() == n)  # queued in exactly this order
    return release


def test_a_free_arbiter_goes_to_the_model_first_then_embedding_then_backfill() -> None:
    """Rank beats arrival: backfill came first, yet runs last; the model's call runs
    before the embedding batch that waited longer."""
    arbiter, order = Arbiter(), []
    release = queue_behind_holder(
        arbiter, [("backfill", BACKFILL), ("index", INDEX), ("embed", EMBED),
                  ("model", MODEL)], order)
    release.set()
    until(lambda: len(order) == 4)
    assert order == ["model", "embed", "index", "backfill"]
    assert not arbiter.busy()


def test_jobs_of_one_kind_run_first_come_first_served() -> None:
    arbiter, order = Arbiter(), []
    release = queue_behind_holder(
        arbiter, [("e1", EMBED), ("e2", EMBED), ("e3", EMBED)], order)
    release.set()
    until(lambda: len(order) == 3)
    assert order == ["e1", "e2", "e3"]


def test_never_two_jobs_at_once() -> None:
    """Eight threads of mixed kinds, each job checking nobody else is inside."""
    arbiter = Arbiter()
    inside, most, lock = [0], [0], threading.Lock()

    def work(kind: int) -> None:
        for _ in range(50):
            with arbiter.job(kind):
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0)  # let the others try to get in
                with lock:
                    inside[0] -= 1

    threads = [threading.Thread(target=work, args=(k % 4,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG)
    assert most[0] == 1
    assert sum(arbiter.granted.values()) == 400


def test_a_job_nested_in_the_holders_own_runs_at_once() -> None:
    """A reindex turn that embeds, or a model call inside a held job, never waits for
    itself; the arbiter is free again when the outer job ends."""
    arbiter = Arbiter()
    with arbiter.job(INDEX), arbiter.job(EMBED), arbiter.job(MODEL):
        assert arbiter.busy()
    assert not arbiter.busy()


class GatedEmbedder:
    """An embedder whose first batch blocks until the test lets it go."""

    model_id, dimension = "gated", 2

    def __init__(self) -> None:
        self.started, self.go = threading.Event(), threading.Event()
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not self.batches:
            self.started.set()
            self.go.wait(HANG)
        self.batches.append(len(texts))
        return [[1.0, 0.0] for _ in texts]

    def calibrate(self, cosine: float) -> float:
        return cosine / 2


def test_a_long_embedding_lets_a_model_call_in_between_its_slices() -> None:
    """An embedding of 10 texts in slices of 4: a model call that arrives during the
    first slice runs before the second, not after the whole batch."""
    arbiter, inner, order = Arbiter(), GatedEmbedder(), []
    embedder = ArbitratedEmbedder(inner, arbiter, slice_size=4)
    vectors: list[Any] = []
    t = threading.Thread(target=lambda: vectors.extend(embedder.embed([f"t{i}" for i in
                                                                       range(10)])))
    t.start()
    until(inner.started.is_set)

    def model() -> None:
        with arbiter.job(MODEL):
            order.append(f"model after {len(inner.batches)} slice(s)")

    m = threading.Thread(target=model)
    m.start()
    until(lambda: arbiter.waiting() == 1)
    inner.go.set()
    t.join(HANG)
    m.join(HANG)
    assert order == ["model after 1 slice(s)"]
    assert inner.batches == [4, 4, 2] and len(vectors) == 10
    assert embedder.model_id == "gated" and embedder.calibrate(0.5) == 0.25


def test_a_search_query_is_embedded_while_a_model_call_holds_the_arbiter() -> None:
    """One text (a query) never waits for the model; two texts do (a batch)."""
    arbiter, inner = Arbiter(), GatedEmbedder()
    inner.go.set()
    embedder = ArbitratedEmbedder(inner, arbiter)
    done: list[int] = []
    release = queue_behind_holder(arbiter, [], [])  # a model call in another thread
    assert len(embedder.embed(["query"])) == 1
    t = threading.Thread(target=lambda: done.append(len(embedder.embed(["a", "b"]))))
    t.start()
    until(lambda: arbiter.waiting() == 1)
    assert not done
    release.set()
    t.join(HANG)
    assert done == [2]


def test_a_local_model_call_holds_the_arbiter_a_remote_one_does_not() -> None:
    """While the server answers a call to a model on this machine, an embedding batch
    waits; the same model on another host leaves the arbiter free."""
    seen: list[bool] = []
    arbiter = Arbiter()

    def model(request: dict[str, Any]) -> Any:
        seen.append(arbiter.busy())
        return reply("ok")

    with FakeOllama(model=model) as server:
        chat = OllamaChat(server.url, "qwen3:4b", 8192, 0.0, 0, silence_seconds=300.0,
                          arbiter=arbiter)
        chat.chat([{"role": "user", "content": "hi"}])
        OllamaChat(server.url, "qwen3:4b", 8192, 0.0, 0, silence_seconds=300.0).chat(
            [{"role": "user", "content": "hi"}])
    assert seen == [True, False]
    assert arbiter.granted[MODEL] == 1


@pytest.mark.parametrize(("host", "local"), [
    ("http://127.0.0.1:11434", True), ("localhost:11434", True), ("http://[::1]:11434", True),
    ("127.0.0.2", True), ("http://gpu-box:11434", False), ("https://10.0.0.5", False)])
def test_which_hosts_are_this_machine(host: str, local: bool) -> None:
    assert is_local_host(host) is local


def test_lower_priority_nices_the_process_only_downwards() -> None:
    """In a child process (the test's own priority stays): 0 leaves it, 5 lowers it to
    5, and asking for 3 after that keeps 5."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply(_nices) == (0, 5, 5)


def _nices() -> tuple[int, int, int]:
    return lower_priority(0), lower_priority(5), lower_priority(3)
