"""``python -m replication.diff bless ...`` (``make bless``)."""

import sys

from .bless import main

sys.exit(main())
