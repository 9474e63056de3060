"""`python -m console.demo`: the same as `apc demo`."""

import sys

from console.demo.cli import main

sys.exit(main())
