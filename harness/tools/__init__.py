"""Programs beside the suite: the run history (history.py, `./run.sh history`) and the
throughput ceiling of one server (ceiling.py). Built on lib/ and gate/."""
