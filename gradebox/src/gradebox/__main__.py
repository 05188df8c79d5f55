"""``python -m gradebox``: the ``gradebox`` command."""

import sys

from .cli import main

sys.exit(main())
