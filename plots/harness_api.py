"""Everything plots take from harness/, in one place: the statistics, the drivers' point
statuses and memory resolution, the regression gate's noise constants, the sequential design's
words, the JSON writer and machine names, and the experiments' declarations of the claims they
feed. Every other plots module reaches harness/ through this one, so a module moving inside
harness/ is one edit here, and the layering test can see what plots depend on.

Importable when PYTHONPATH holds harness/ beside plots/ (./run.sh and CTest set it). The run
folder's own files (suite.json's steps, each experiment's JSON) are read by data.py, not here.
"""
import experiments  # the registry: each experiment's name and the claims it feeds
from gate import regress_files  # the gate's stored files, which history reads beside runs
from gate import regress_gate  # the gate's timing floor and spread, which compare's noise shares
from lib import changepoint  # history's steps of a series
from lib import host_pace  # which rounds' two legs ran at one pace of the host (same_pace)
from lib import meta  # the one JSON writer and the CPU model's short name
from lib import sequential  # the words of fiberio's sampling-until-decided record
from lib import stats  # the project's one statistics module (bootstrap, U test, trends)
from lib import status as driver_status  # what each status a driver gives a point means
# Kernel memory per connection: its resolution (lib/memory.py says why it has one).
from lib.memory import KERNEL_RESOLUTION_KIB, MEMINFO_DRIFT_KIB, kernel_resolution

__all__ = ["changepoint", "experiments", "host_pace", "meta", "regress_files", "regress_gate",
           "sequential", "stats", "driver_status",
           "KERNEL_RESOLUTION_KIB", "MEMINFO_DRIFT_KIB", "kernel_resolution"]
