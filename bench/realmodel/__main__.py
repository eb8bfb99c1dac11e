"""``python -m bench.realmodel``: see ``bench/realmodel/run.py``."""

import sys

from bench.realmodel.run import main

sys.exit(main())
