"""`python -m gtog.local [--port N]`: run the local model server in the foreground."""

import sys

from gtog.local._server import _main

sys.exit(_main())
