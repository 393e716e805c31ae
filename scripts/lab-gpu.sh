#!/usr/bin/env bash
# The lab's experiments in one command on a CUDA machine (about 10 minutes on one GPU), or at
# smoke size on CPU (--smoke: what CI runs, well under a minute on a quiet machine).
#
#   bash scripts/lab-gpu.sh [--smoke] [OUT]        (OUT defaults to lab-gpu)
#
# Runs, in OUT: `agentpost lab hero` (pre-flight table, HERO vs GRPO and all eight b.11
# ablations, 3 seeds), `agentpost lab scvd` (SCVD vs FTD with a model teacher), `agentpost lab
# results` (OUT/results.json and OUT/results.md). Each step resumes after a kill. Then, on a GPU
# machine whose verl venv (.venv-verl, scripts/verl-check.sh) has vLLM, HERO through verl's v1
# trainer (agentpost_hero) with the agentpost_shell agent loop on the lab's tasks and policy.
set -euo pipefail
cd "$(dirname "$0")/.."
scale=gpu
if [ "${1:-}" = --smoke ]; then
  scale=smoke
  shift
fi
out="${1:-lab-gpu}"
py="${PYTHON:-.venv/bin/python}"
if [ "$scale" = gpu ]; then
  "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "no CUDA device: use --smoke on CPU")'
fi
# Every step in one Python process, separated by ";" (torch, transformers and TRL are imported
# once; measured on the 2-core machine at load 7, the smoke took 23.0 s CPU / 63 s wall this way
# against 30.8 s / 80 s with one process per step); a step that fails stops the rest with its
# exit status.
lab_steps() {
  "$py" -c '
import sys
from agentpost.cli import main
steps = [[]]
for a in sys.argv[1:]:
    steps.append([]) if a == ";" else steps[-1].append(a)
for argv in steps:
    try:
        main(argv)
    except SystemExit as e:
        if e.code not in (0, None):
            raise
' "$@"
}
start=$(date +%s)
lab_steps lab hero --scale "$scale" -o "$out" ";" lab scvd --scale "$scale" -o "$out" ";" \
  lab results --hero "$out" --scvd "$out" -o "$out/results.json" --markdown "$out/results.md" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "lab: $(( $(date +%s) - start )) s"
if [ "$scale" = gpu ]; then
  if [ -x .venv-verl/bin/python ] && .venv-verl/bin/python -c 'import vllm' 2>/dev/null; then
    PYTHONPATH="$PWD/src" .venv-verl/bin/python -m agentpost.lab.verl_run "$out"
  else
    echo "verl: skipped (no .venv-verl with vLLM; bash scripts/verl-check.sh, then pip install vllm there)"
  fi
fi
