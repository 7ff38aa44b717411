"""``python -m collector.cli``: the ``searchpulse`` command without its console script."""

import sys

from collector.cli import main

sys.exit(main())
