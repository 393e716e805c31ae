#!/usr/bin/env bash
# SCVD end to end, offline, on the bundled terminal suite (README: "SCVD training data"):
#   scripted students (hasty, wrong-then-repaired) -> scvd collect with the scripted teacher ->
#   the FTD baseline -> task- and size-matched SCVD and FTD datasets -> train sft on a tiny model.
#
#   bash scripts/scvd-offline.sh OUT [TASK_ID ...]     (no task ids: every bundled task)
#
# Resumable: kill it at any point and run the same command again; every stage reads back what
# it finished (rollouts, judge answers, teacher continuations, FTD rollouts, trained models).
# The scripted teacher is a pipeline fixture (it applies the task's oracle), not a teacher to
# learn from. SCVD_STEPS sets the training steps per model (default 20), SCVD_CONCURRENCY the
# cases in flight (default 2).
set -euo pipefail
out=${1:?usage: scvd-offline.sh OUT [TASK_ID ...]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
ap=${AGENTPOST:-$here/.venv/bin/agentpost}
steps=${SCVD_STEPS:-20}
conc=${SCVD_CONCURRENCY:-2}
tasks=()
for t in "$@"; do tasks+=(--task "$t"); done

"$ap" run -o "$out/students" --policy hasty --policy wrong-then-repaired ${tasks[@]+"${tasks[@]}"}
"$ap" scvd collect "$out/students/trajectories.jsonl" -o "$out/collect" --no-progress --workers "$conc"
"$ap" scvd ftd -o "$out/ftd" --no-progress --workers "$conc" ${tasks[@]+"${tasks[@]}"}
"$ap" scvd match "$out/collect/scvd.parquet" "$out/ftd/ftd.parquet" -o "$out/matched"
for name in scvd ftd; do
  if [ ! -f "$out/model-$name/train.json" ]; then  # train.json is written last
    "$ap" train sft "$out/matched/$name.matched.parquet" --model tiny -o "$out/model-$name" \
      --max-steps "$steps" --cpu --no-checkpointing --max-length 16384 --grad-accum 1 --lr 1e-3
  fi
done
echo "SCVD offline run complete: $out/matched (datasets), $out/model-scvd and $out/model-ftd (models)"
