"""Harbor-compatible tasks: the task model, loaders (Harbor and Terminal-Bench 1), evaluation
inside a sandbox, and the bundled offline suites under ``suites/``."""
