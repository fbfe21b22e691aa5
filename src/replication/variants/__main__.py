"""``python -m replication.variants``: ``cli.main``."""

import sys

from .cli import main

sys.exit(main())
