"""`python -m apc`: the same as `apc`."""

import sys

from apc.cli import main

sys.exit(main())
