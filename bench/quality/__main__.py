"""``python -m bench.quality``."""

from bench.quality.run import main

raise SystemExit(main())
