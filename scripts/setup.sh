#!/usr/bin/env bash
# Set up agentpost on a fresh Debian machine: system tools, a virtual environment, the package.
#   bash scripts/setup.sh            set up, then run the main job (agentpost demo)
#   bash scripts/setup.sh --no-demo  set up only
#   bash scripts/setup.sh --train    also install the training extra (torch CPU, transformers, trl)
#   bash scripts/setup.sh --docker   also install docker.io and debootstrap (the docker backend;
#                                    start the daemon with scripts/dockerd.sh start)
#   bash scripts/setup.sh --ray      also install the ray extra (the Ray executor)
#   bash scripts/setup.sh --llama    also build llama.cpp's server (the lab's real model server)
#   bash scripts/setup.sh --swebench also install the swebench extra (SWE-bench's harness: specs,
#                                    eval scripts, log parsers) and docker.io + debootstrap
set -euo pipefail
cd "$(dirname "$0")/.."

run_demo=1
train=0
docker=0
ray=0
llama=0
swebench=0
for arg in "$@"; do
  case "$arg" in
    --no-demo) run_demo=0 ;;
    --train) train=1 ;;
    --docker) docker=1 ;;
    --ray) ray=1 ;;
    --llama) llama=1 ;;
    --swebench) swebench=1; docker=1 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done

# System tools: bubblewrap (sandboxes), tmux (keystroke replay), git and gcc (bundled tasks),
# chromium (the report test). Installed only when missing.
missing=()
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v tmux >/dev/null || missing+=(tmux)
command -v git >/dev/null || missing+=(git)
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
command -v patch >/dev/null || missing+=(patch)
command -v chromium >/dev/null || missing+=(chromium)
# the Python headers: scripts/compile_native.py compiles the import path against them
python3 -c 'import os, sysconfig; raise SystemExit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || missing+=(python3-dev)
if [ "$docker" = 1 ]; then
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
fi
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing system packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
extras="dev"
if [ "$train" = 1 ]; then
  # torch first, pinned: on this kind of machine pip takes a local CPU build for this version,
  # while an open range would pull a multi-GB CUDA build.
  .venv/bin/python -m pip install -q "torch==2.13.0"
  extras="dev,train"
fi
if [ "$ray" = 1 ]; then
  extras="$extras,ray"
fi
if [ "$swebench" = 1 ]; then
  extras="$extras,swebench"
fi
if [ "$llama" = 1 ]; then
  extras="$extras,lab"  # compiles llama.cpp (pip caches the wheel for later installs)
fi
.venv/bin/python -m pip install -q -e ".[$extras]"
# the import path compiled with mypyc (about 30 s); without a compiler it runs interpreted
if ! .venv/bin/python scripts/compile_native.py; then
  echo "warning: the compiled import path was not built; import runs interpreted" >&2
fi
echo "agentpost is installed in .venv"

if [ "$run_demo" = 1 ]; then
  .venv/bin/agentpost demo
fi
