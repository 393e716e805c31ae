#!/usr/bin/env bash
# Manual smoke test of the docker sandbox backend (its pytest tests skip when no daemon answers).
#   bash scripts/docker-smoke.sh [IMAGE]        default image: python:3.11-slim (pulled if missing)
# Needs: a running Docker or Podman daemon, and agentpost installed in .venv.
# Checks: exec and exit codes, the work dir copy, the timeout, no network, the read-only root,
# background processes killed after exec, then runs the docker backend's pytest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-python:3.11-slim}"
py=.venv/bin/python
export AGENTPOST_DOCKER_IMAGE="$image"

docker_cli=$(command -v docker || command -v podman || true)
[ -n "$docker_cli" ] || { echo "no docker or podman CLI on PATH" >&2; exit 1; }
"$docker_cli" info >/dev/null 2>&1 || { echo "$docker_cli: no daemon answers" >&2; exit 1; }
"$docker_cli" image inspect "$image" >/dev/null 2>&1 || "$docker_cli" pull "$image"

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo "hello from the host" > "$work/greeting.txt"

run() { .venv/bin/agentpost sandbox exec --backend docker --image "$image" "$@"; }
check() {  # check NAME PYTHON-EXPR-ON-r -- ARGS...
  local name=$1 expr=$2; shift 3
  out=$(run "$@")
  if echo "$out" | $py -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)"; then
    echo "ok   $name"
  else
    echo "FAIL $name: $out"; exit 1
  fi
}

check "exec + workdir copy" 'r["exit_code"]==0 and r["stdout"]=="hello from the host\n"' -- --workdir "$work" -- cat greeting.txt
check "exit code" 'r["exit_code"]==3' -- -- bash -c 'exit 3'
check "timeout" 'r["timed_out"] and r["exit_code"] is None' -- --timeout 2 -- sleep 30
check "no network" 'r["exit_code"]!=0' -- -- python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), 3)"
check "read-only root" 'r["exit_code"]!=0' -- -- touch /usr/pwned
check "output cap" 'r["truncated"]' -- -- yes

.venv/bin/python -m pytest tests/sandbox/test_sandbox_docker.py -q
echo "docker smoke: all passed"
