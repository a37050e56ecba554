#!/usr/bin/env bash
# Build 2 problems x 2 personas for each of the ten benchmarks with the embedded model, offline, from the
# shared copies; validate each build and evaluate one of them. Prints wall time per benchmark.
# Usage: benchmarks/build_all_embedded.sh OUT_DIR [SHARED_DIR]
set -euo pipefail
out=${1:?usage: build_all_embedded.sh OUT_DIR [SHARED_DIR]}
shared=${2:-$(dirname "$0")/../../shared}
bin=$(dirname "$0")/../.venv/bin
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
mkdir -p "$out"
declare -A src=(
  [math500]=math500/test.jsonl [aime]=aime/train.jsonl [logiqa]=logiqa/test.jsonl [mascqa]=mascqa/test.jsonl
  [scienceqa]=scienceqa/test.jsonl [medqa]=medqa/test.jsonl [mmlu]=mmlu/test.jsonl [simpleqa]=simpleqa/test.jsonl
  [commonsenseqa]=commonsenseqa/validation.jsonl [socialiqa]=socialiqa/validation.jsonl
)
start=$(date +%s)
"$bin/prefdisco" personas --n 4 --model prefdisco/smollm2 --out "$out/personas.jsonl" --seed 0
echo "personas: $(( $(date +%s) - start )) s"
for bench in math500 aime logiqa mascqa scienceqa medqa mmlu simpleqa commonsenseqa socialiqa; do
  t0=$(date +%s)
  "$bin/prefdisco" build --benchmark "$bench" --source "$shared/data/benchmarks/${src[$bench]}" \
    --problems 2 --personas-per-problem 2 --persona-library "$out/personas.jsonl" \
    --model prefdisco/smollm2 --out "$out/$bench" --seed 0
  "$bin/prefdisco" validate "$out/$bench"
  echo "$bench: $(( $(date +%s) - t0 )) s"
done
"$bin/prefdisco" eval "$out/socialiqa" --model prefdisco/smollm2 --log-dir "$out/eval-socialiqa" \
  --constrain-protocol --max-tokens 120 --user-max-tokens 40 --judge structured --display none
echo "total: $(( $(date +%s) - start )) s"
