"""The sections of REPORT.md beside the claims, one module each: the machine, readiness
against completion, ramp-up, slow clients, architectures, hooked calls and locks, what
surprised us, and what a full run may sharpen. plots/document.py sets their order."""
