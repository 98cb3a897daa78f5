"""``python -m onpair.audit ALGO …``: the same as ``onpair audit ALGO …``."""

import sys

from .command import main

sys.exit(main())
