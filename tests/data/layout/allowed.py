# Read by tests/test_test_layout.py, never imported: what a test module may do.
import sys
from support.worker import api, run_body
from support.scenario_builders import make_scenario
from harness.testing.results import MemoryResults
from benchmarks import results_drills
print(sys.path[0], "test_x imports nothing here")
SCRIPT = "from support.mint import paired_runs\n"
