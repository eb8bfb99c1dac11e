"""Property test: random sequences of dreams, user edits, undos and redos on a small
vault keep every promise after every step (``tests/undo_machine.py`` says which).

CI runs ``VAULTLINK_PROPERTY_SEQUENCES`` sequences (default 300, derandomized so a
failure reproduces); ``bench/undo_property.py`` runs thousands with fresh seeds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.undo_machine import SEEN, Session, UndoMachine

SEQUENCES = int(os.environ.get("VAULTLINK_PROPERTY_SEQUENCES", "300"))
DERANDOMIZE = os.environ.get("VAULTLINK_PROPERTY_RANDOM", "") != "1"


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    yield Session()


@pytest.mark.slow
def test_undo_redo_and_dreams_keep_every_promise(session: Session, tmp_path: Path) -> None:
    UndoMachine.session, UndoMachine.workdir = session, tmp_path
    before = SEEN["sequences"]
    run_state_machine_as_test(UndoMachine, settings=settings(
        max_examples=SEQUENCES, stateful_step_count=8, deadline=None, derandomize=DERANDOMIZE,
        database=None, suppress_health_check=list(HealthCheck)))
    ran = SEEN["sequences"] - before
    print(f"\n{ran} sequences ran; what they did:", dict(sorted(SEEN.items())))
    # max_examples is a ceiling: hypothesis may stop early, and the issue asks for the
    # count CI runs (>= 300 by default), not for the count it was allowed
    assert ran >= SEQUENCES, f"only {ran} of {SEQUENCES} sequences ran"
