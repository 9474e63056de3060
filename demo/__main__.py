"""`python -m demo`: the same as `apc demo`."""

import sys

from demo.cli import main

sys.exit(main())
