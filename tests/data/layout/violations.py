# Read by tests/test_test_layout.py, never imported: each line after this comment is a problem.
import sys
import test_worker_core
from test_dataset_run import env
from tests.support.worker import api
import conftest
sys.path.insert(0, "benchmarks")
sys.path.append("tests")
SCRIPT = """
import sys
sys.path.insert(0, "tests")
from test_mint import _specialist
"""
