"""``python -m bigtwo.cli``: the ``bigtwo`` command."""

import sys

from bigtwo.cli import main

sys.exit(main())
