#!/usr/bin/env bash
# The verl adapter's checks, in verl's own venv (.venv-verl): verl pins an older transformers than
# the `train` extra, so it never shares .venv. Creates the venv when missing (several minutes),
# then runs the verl tests: the estimator, the compute_advantage hook, HERO reaching a real Ray
# worker through agentpost.train.verl_main's worker setup hook, and HERO's inputs (turn spans,
# top-k turn entropies, C_i, groups) going from the agentpost_shell agent loop through a real
# TransferQueue into the v1 trainer's advantage step (tests/train/test_train_verl_v1.py).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-verl/bin/python ]; then
  python3 -m venv .venv-verl
  # verl's ray_trainer imports cachetools/uvicorn/fastapi, which verl's wheel does not declare;
  # its v1 trainer (the default) imports TransferQueue (verl's optional "verl-core" extra)
  .venv-verl/bin/pip install -q torch==2.13.0 verl==0.9.1 "TransferQueue>=0.1.10" cachetools \
    uvicorn fastapi pytest pytest-timeout
  .venv-verl/bin/pip install -q --no-deps -e .
fi
# a venv made before the v1 test existed lacks TransferQueue
.venv-verl/bin/python -c 'import transfer_queue' 2>/dev/null \
  || .venv-verl/bin/pip install -q "TransferQueue>=0.1.10"
PYTHONPATH="$PWD/src" .venv-verl/bin/python -m pytest -q -p no:cacheprovider \
  tests/train/test_train_verl_hero.py tests/train/test_train_verl_workers.py \
  tests/train/test_train_verl_v1.py "$@"
