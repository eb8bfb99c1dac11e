"""The auto_dream pipeline: extract -> integrate (auto_link) -> topics -> finish."""

from vaultlink.dream.pipeline import (
    DreamContext,
    RunState,
    SourceNote,
    UnitResult,
    build_steps,
    run_dream,
)

__all__ = ["DreamContext", "RunState", "SourceNote", "UnitResult", "build_steps", "run_dream"]
