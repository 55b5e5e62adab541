"""`python -m gtog.local [--port N]`: run the local model server in the foreground."""

import sys

from gtog.local.server import _main

sys.exit(_main())
