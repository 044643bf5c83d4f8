"""Loaded by zebench into the pytest runs that grade a workspace (``-p zebench_guard``).

Grading starts pytest with ``PYTHONSAFEPATH=1``, so that no module of the workspace is
imported in place of pytest, its plugins or the standard library while pytest starts. The
workspace still has to be importable by its tests, as ``python -m pytest`` makes it: this
plugin puts it at the *end* of ``sys.path``, after everything installed.
"""

import os
import sys

_workspace = os.getcwd()
if _workspace not in sys.path:
    sys.path.append(_workspace)
