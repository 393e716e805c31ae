#!/usr/bin/env bash
# Hidden evaluator for rename-spaces: needs only POSIX tools and python3; writes the reward.
mkdir -p /logs/verifier
# Fresh bytecode: a stale __pycache__ left by the agent (same size, same second) must not be graded.
export PYTHONPYCACHEPREFIX=/tmp/agentpost-verifier-pycache
cd /app || { echo 0 > /logs/verifier/reward.txt; exit 0; }
if python3 /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
