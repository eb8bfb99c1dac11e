"""``review``: the decisions held for the owner (``review.mode``), one command per choice.

Reading proposals needs only state.sqlite. Settling one writes the vault: while the
daemon runs it goes through the daemon's API (``POST /proposals/{id}/...``), so one
process writes the vault, as ``undo`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from vaultlink.cli.common import JsonOpt, VaultOpt, app, emit_json, open_vault
from vaultlink.daemon.process import writer_or_daemon
from vaultlink.errors import StateError

review_app = typer.Typer(
    name="review",
    help=(
        "Decisions held for your review before anything is written.\n\n"
        "With review.mode uncertain (the default), a decision vaultlink is not sure of "
        "waits here as a proposal instead of being written: any correction, an update "
        "whose unit does not name the node's subject, a page merged into a node made "
        "from another page (review.mode all: every decision; off: none). Each proposal "
        "holds the exact change, the unit and its note, and why. Its note is not read "
        "again while it waits.\n\n"
        "Examples:\n\n"
        "  vaultlink review list              # what waits, newest first\n\n"
        "  vaultlink review show 3            # proposal 3: why, the unit, the diff\n\n"
        "  vaultlink review approve 3         # write it; `vaultlink undo` reverts it\n\n"
        "  vaultlink review reject 3          # write nothing, never propose it again\n\n"
        "  vaultlink review new 3             # write the unit as a new node instead\n\n"
        "If the node changed since the proposal was made, approving writes nothing: the "
        "proposal is stale and the next run decides the unit again."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(review_app)

IdArg = Annotated[int, typer.Argument(help="The proposal id, from `vaultlink review list`.")]


@review_app.command("list")
def list_(
    vault: VaultOpt = Path("."),
    every: Annotated[bool, typer.Option(
        "--all", help="Also the settled ones (approved, rejected, created, stale).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List the proposals waiting for you, newest first.

    Examples:

      vaultlink review list

      vaultlink review list --all --json
    """
    v, views = _views(vault, every)
    if as_json:
        emit_json({"proposals": views})
        return
    if not views:
        typer.echo("no proposal waits for review" if not every else "no proposals yet")
        return
    for p in views:
        state = "STALE" if p["stale"] and p["state"] == "open" else p["state"].upper()
        typer.echo(f"#{p['id']} {state} {p['action']} {p['target']} <- unit "
                   f"{p['unit']['name']} ({', '.join(p['unit']['paths'])})")
        typer.echo(f"    held: {p['reason']}")
    del v


@review_app.command()
def show(proposal: IdArg, vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Show one proposal: why vaultlink would do it, why it waits, the unit, the diff.

    Examples:

      vaultlink review show 3

      vaultlink review show 3 --json
    """
    _, views = _views(vault, True, proposal)
    if not views:
        raise StateError(f"no proposal #{proposal}: `vaultlink review list --all` shows them")
    p = views[0]
    if as_json:
        emit_json(p)
        return
    for line in describe(p):
        typer.echo(line)


@review_app.command()
def approve(proposal: IdArg, vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Write the proposed change, as the decision would have been written.

    It goes through the guard and the journal like any decision (`vaultlink undo ID`
    reverts it). If the node changed since the proposal was made, nothing is written:
    the proposal is stale and the next run decides the unit again.

    Examples:

      vaultlink review approve 3
    """
    _settle(vault, proposal, "approve", as_json)


@review_app.command()
def reject(proposal: IdArg, vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Write nothing: the unit is recorded as skipped, with why, and never proposed again.

    Examples:

      vaultlink review reject 3
    """
    _settle(vault, proposal, "reject", as_json)


@review_app.command()
def new(proposal: IdArg, vault: VaultOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Write the unit as a new digest node (a CREATE) instead of the proposed change.

    Examples:

      vaultlink review new 3
    """
    _settle(vault, proposal, "new", as_json)


def describe(p: dict[str, Any]) -> list[str]:
    """A proposal in words, the diff last."""
    stale = " (STALE: its node changed since; approving has the next run decide it again)" \
        if p["stale"] and p["state"] == "open" else ""
    unit = p["unit"]
    lines = [f"proposal #{p['id']} ({p['state']}{stale}), made {p['at']} by "
             f"{p['integrator'] or 'vaultlink'}",
             f"would {p['action']} {p['target']}",
             f"why: {p['why'] or '-'}",
             f"held: {p['reason']}",
             f"unit {unit['name']} ({unit['bucket']}) from {', '.join(unit['paths'])}:"]
    lines += [f"  {line}" for line in unit["summary"].splitlines() if line.strip()]
    if p["state"] != "open":
        lines.append(f"settled {p['decided_at']}" + (f" (journal #{p['journal_id']})"
                                                    if p["journal_id"] else ""))
    else:
        lines.append(f"vaultlink review approve {p['id']}  |  reject {p['id']}  |  "
                     f"new {p['id']}")
    return [*lines, "", p["diff"].rstrip("\n")]


def _views(vault: Path, every: bool, one: int | None = None) -> tuple[Any, list[dict[str, Any]]]:
    # the proposals and their diffs: ~20 ms that --help need not pay
    from vaultlink.pipeline.integrate.review import proposal_view
    from vaultlink.vault.proposals import ProposalState
    from vaultlink.vault.state import State

    v, _ = open_vault(vault)
    state = State(v.state_dir / "state.sqlite")
    try:
        if one is not None:
            found = state.proposal_get(one)
            rows = [found] if found is not None else []
        else:
            rows = state.proposals(None if every else ProposalState.OPEN)
        return v, [proposal_view(p, v) for p in rows]
    finally:
        state.close()


def _settle(vault: Path, proposal: int, verb: str, as_json: bool) -> None:
    # the guard, the journal and the writers: ~60 ms that --help need not pay
    from vaultlink.pipeline.integrate import review, settle
    from vaultlink.vault.state import State

    v, _ = open_vault(vault)
    lock = writer_or_daemon(v, "review")
    if lock is None:  # the daemon writes, and re-indexes what it wrote at once
        from vaultlink.daemon.client import ask_daemon  # urllib.request, ssl: ~30 ms

        answer = ask_daemon(v.state_dir, "POST", f"/proposals/{proposal}/{verb}", {})
    else:
        state = State(v.state_dir / "state.sqlite")
        try:
            how = {"approve": settle.approve, "reject": settle.reject,
                   "new": settle.create_new}[verb]
            answer = review.settled_view(how(v, state, proposal), v)
        finally:
            state.close()
            lock.release()
    if as_json:
        emit_json(answer)
        return
    typer.echo(f"proposal #{proposal}: {answer['message']}")
