"""Candidate-state replay: rebuild the state after any recorded call in a fresh sandbox (SCVD diagnose
and collect, the lab, security grading and snapshots all use it)."""
