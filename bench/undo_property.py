"""The undo/redo property test at bench size: thousands of random sequences.

Runs ``tests/test_undo_property.py`` with fresh random seeds (CI runs 300 derandomized)
and prints what the sequences did and how long they took.

    python -m bench.undo_property [--sequences 3000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sequences", type=int, default=3000)
    args = ap.parse_args()
    env = {**os.environ, "VAULTLINK_PROPERTY_SEQUENCES": str(args.sequences),
           "VAULTLINK_PROPERTY_RANDOM": "1"}
    t0 = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-n", "0", "-p",
                            "no:cacheprovider", "tests/test_undo_property.py"],
                           cwd=REPO, env=env)
    print(f"{args.sequences} sequences: {'0 failures' if code == 0 else 'FAILED'} in "
          f"{time.monotonic() - t0:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
