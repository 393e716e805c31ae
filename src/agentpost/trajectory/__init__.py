"""Canonical trajectories: the model, importers from real scaffolds, and JSONL I/O."""
