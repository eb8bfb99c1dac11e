"""Quality benchmark of the offline integrator: link recovery, dedup thresholds, end-to-end.

Run ``python -m bench.quality`` from the repository root; see README.md.
"""
