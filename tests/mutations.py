"""Break one promise at a time and check the suite notices: a mutation test.

Each mutation is a one-line change to the code that keeps a promise of the README
(rollback, the queue's compare-and-swap, the guard's checks, fsync, the hash compare,
undo's link check, recovery after a kill...). For each, the package is copied to a
scratch folder, the line changed, and the tests that guard that promise run against
the copy (``PYTHONPATH`` points at it, so processes the tests start run it too). A
mutation the tests do not catch *survives*; the script exits 1 if any does. Caught
means a test failed (pytest's exit status 1): a collection error, a test id that no
longer exists or an interrupted run is reported as an error, not as a catch. First the
same tests run on an unchanged copy (``--no-baseline`` skips it): a test that fails
there would pass any mutation off as caught.

    python -m tests.mutations              # all, about 6 minutes on 2 cores
    python -m tests.mutations --only fsync-dropped --keep
    python -m tests.mutations --list

Weakening a test should make a mutation survive: that is how this script is checked.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COPIED = ("vaultlink", "tests", "sample_vault", "pyproject.toml")


@dataclass(frozen=True)
class Mutation:
    """Replace ``old`` (exactly once in ``file``) by ``new``; ``tests`` must then fail."""

    name: str
    promise: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTATIONS = [
    Mutation("rollback-noop", "a failed attempt leaves nothing behind",
             "vaultlink/pipeline/integrate/tools.py",
             "        if self.dry_run:\n            self.current.clear()\n            return\n",
             "        if True:\n            self.current.clear()\n            return\n",
             ("tests/test_rollback.py",)),
    Mutation("dequeue-cas-dropped", "a note edited during its run is run again",
             "vaultlink/vault/state.py",
             '"DELETE FROM queue WHERE path=? AND changed_at=?",\n'
             "                           [(i.path, i.changed_at) for i in items])",
             '"DELETE FROM queue WHERE path=?",\n'
             "                           [(i.path,) for i in items])",
             ("tests/test_daemon_faults.py::test_a_note_edited_while_its_run_is_in_progress"
              "_is_run_again",)),
    Mutation("guard-link-resolution-dropped", "every written link resolves",
             "vaultlink/pipeline/integrate/guard.py",
             "            if link.target in resolver:\n                continue",
             "            if True:\n                continue",
             ("tests/test_guard_tools.py",)),
    Mutation("guard-additive-dropped", "an update never removes a link or source",
             "vaultlink/pipeline/integrate/guard.py",
             "            lost = removed_links(old_text, new_text)",
             "            lost = []",
             ("tests/test_guard_tools.py",)),
    Mutation("guard-bare-lines-dropped", "every source link sits in a sentence",
             "vaultlink/pipeline/integrate/guard.py",
             "        bare = bare_link_lines(note.body)",
             "        bare = []",
             ("tests/test_guard_tools.py",)),
    Mutation("fsync-dropped", "the new text is on disk before it takes the name",
             "vaultlink/vault/atomic.py",
             "            os.fsync(fh.fileno())",
             "            pass",
             ("tests/test_atomic_safety.py",)),
    Mutation("cas-compare-inverted", "a user's edit is never overwritten",
             "vaultlink/vault/atomic.py",
             "        if _current_hash(aside) != expected_hash:",
             "        if _current_hash(aside) == expected_hash:",
             ("tests/test_vault.py",)),
    Mutation("create-overwrites", "CREATE never overwrites a file",
             "vaultlink/vault/atomic.py",
             "        os.link(src, path)\n    except FileExistsError:",
             "        os.replace(src, path)\n    except FileExistsError:",
             ("tests/test_vault.py",)),
    Mutation("writes-outside-digest", "only digest/ and .vaultlink/ are written",
             "vaultlink/vault/notes.py",
             '        return "/" in rel and top in (self.digest, STATE_DIR)',
             '        return "/" in rel',
             ("tests/test_vault.py",)),
    Mutation("failed-paths-checkpointed", "a failed unit's notes are retried",
             "vaultlink/pipeline/finish.py",
             "    held = report.failed_paths | found.deferred_paths",
             "    held = found.deferred_paths",
             ("tests/test_integrate_adversarial.py",)),
    Mutation("undo-link-check-dropped", "undo never leaves a broken link",
             "vaultlink/pipeline/history.py",
             '        """Revert or prune until no file links to a file the plan removes."""\n',
             '        """Revert or prune until no file links to a file the plan removes."""\n'
             "        return\n",
             ("tests/test_history.py",)),
    Mutation("undo-cas-dropped", "undo never throws away a later edit",
             "vaultlink/pipeline/history.py",
             "        while self.text(e.target) != e.after_text:",
             "        while False:",
             ("tests/test_history.py",)),
    Mutation("recovery-dropped", "a write killed before its journal row is rolled back",
             "vaultlink/pipeline/recovery.py",
             "        if now != intent.before_text and mark in intent.written:",
             "        if False:",
             ("tests/test_history.py",)),
    Mutation("salvage-keeps-nothing", "a damaged state.sqlite keeps its journal",
             "vaultlink/vault/salvage.py",
             "                kept[table] = _copy_table(old, new, table)",
             "                kept[table] = 0",
             ("tests/test_state_faults.py::test_a_damaged_page_loses_no_journal_row_and_"
              "nothing_is_integrated_twice",)),
    Mutation("aside-not-restored", "a node set aside by a killed write comes back",
             "vaultlink/vault/atomic.py",
             '                if m["kind"] == "old" and not os.path.lexists(target):',
             '                if False:',
             ("tests/test_atomic_safety.py",)),
]


def run(m: Mutation, keep: bool) -> tuple[int, float, str]:
    """Apply ``m`` in a scratch copy and run its tests; (pytest's exit status, seconds,
    output tail). An empty ``old`` changes nothing (the baseline)."""
    work = Path(tempfile.mkdtemp(prefix=f"vaultlink-mutant-{m.name}-"))
    try:
        for name in COPIED:
            src = REPO / name
            if src.is_dir():
                shutil.copytree(src, work / name, ignore=shutil.ignore_patterns(
                    "__pycache__", ".vaultlink", ".pytest_cache"))
            else:
                shutil.copy2(src, work / name)
        if m.old:
            target = work / m.file
            text = target.read_text()
            if text.count(m.old) != 1:
                raise SystemExit(f"{m.name}: the line to change occurs {text.count(m.old)} "
                                 f"times in {m.file}; update the mutation")
            target.write_text(text.replace(m.old, m.new))
        env = {**os.environ, "PYTHONPATH": str(work), "VAULTLINK_PROPERTY_SEQUENCES": "60"}
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p",
                               "no:cacheprovider", *m.tests], cwd=work, env=env,
                              capture_output=True, text=True)
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        return proc.returncode, time.monotonic() - t0, tail
    finally:
        if keep:
            print(f"    kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="run these mutations (by name)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip running the chosen mutations' tests on an unchanged copy")
    args = ap.parse_args()
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list or not chosen:
        for m in MUTATIONS:
            print(f"{m.name:32} {m.promise}")
        return 0 if chosen else 2
    if not args.no_baseline:
        tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        code, seconds, tail = run(Mutation("baseline", "", "", "", "", tests), args.keep)
        print(f"{'passes  ' if code == 0 else 'FAILS   '} {'(no mutation)':32} {seconds:5.0f} s"
              f"  ({len(tests)} test target(s))", flush=True)
        if code != 0:
            print("    " + tail.replace("\n", "\n    "))
            print("\nthe tests fail without a mutation: no catch would mean anything")
            return 1
    survivors, errors = [], []
    for m in chosen:
        code, seconds, tail = run(m, args.keep)
        label = {0: "SURVIVED", 1: "caught  "}.get(code, "ERROR   ")
        print(f"{label} {m.name:32} {seconds:5.0f} s  ({m.promise})", flush=True)
        if code != 1:
            (survivors if code == 0 else errors).append(m.name)
            print("    " + tail.replace("\n", "\n    "))
    caught = len(chosen) - len(survivors) - len(errors)
    print(f"\n{caught} of {len(chosen)} mutations caught, {len(survivors)} survived"
          + (f": {', '.join(survivors)}" if survivors else "")
          + (f"; {len(errors)} did not run (pytest errors): {', '.join(errors)}"
             if errors else ""))
    return 1 if survivors or errors else 0


if __name__ == "__main__":
    sys.exit(main())
