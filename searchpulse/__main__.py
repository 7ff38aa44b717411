"""``python -m searchpulse``: the ``searchpulse`` command without its console script."""

import sys

from searchpulse import main

sys.exit(main())
