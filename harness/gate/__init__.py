"""The switch-cost regression gate (regress.py, `./run.sh regress`): its decisions
(regress_gate), its baseline files (regress_files), the pairing with a base commit's build
(regress_paired), the measured error rates (regress_rates) and the IO path's counts (iopath).
Built on lib/; nothing in lib/ or experiments/ imports it."""
