#!/usr/bin/env bash
# Build 2 problems x 2 personas for each of the ten benchmarks with the embedded model, offline, from the
# shared copies; validate each build, then evaluate all of them at once (baseline, discovery, oracle). Prints wall time
# and the builder's calls/tokens per benchmark. Run it on an otherwise idle machine: llama.cpp jobs sharing
# the 2 cores slow each other 20-50x.
# Usage: benchmarks/build_all_embedded.sh OUT_DIR [SHARED_DIR] [--no-eval]
#
# The embedded model gets two small-model settings, both plain options: strings in its grammar are capped at
# 100 characters (-M max_string_chars=100) and profiles hold 3-4 attributes (--max-attributes 4), so a rubric
# (256 + 640 output tokens per criterion) fits its 4,096-token context.
set -euo pipefail
out=${1:?usage: build_all_embedded.sh OUT_DIR [SHARED_DIR] [--no-eval]}
shared=${2:-$(dirname "$0")/../../shared}
do_eval=${3:-}
bin=$(dirname "$0")/../.venv/bin
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
mkdir -p "$out"
declare -A src=(
  [math500]=math500/test.jsonl [aime]=aime/train.jsonl [logiqa]=logiqa/test.jsonl [mascqa]=mascqa/test.jsonl
  [scienceqa]=scienceqa/test.jsonl [medqa]=medqa/test.jsonl [mmlu]=mmlu/test.jsonl [simpleqa]=simpleqa/test.jsonl
  [commonsenseqa]=commonsenseqa/validation.jsonl [socialiqa]=socialiqa/validation.jsonl
)
small=(--model prefdisco/smollm2 -M max_string_chars=100)
start=$(date +%s)
"$bin/prefdisco" personas --n 4 "${small[@]}" --out "$out/personas.jsonl" --seed 0 --max-share 0.25
echo "personas: $(( $(date +%s) - start )) s"
for bench in math500 aime logiqa mascqa scienceqa medqa mmlu simpleqa commonsenseqa socialiqa; do
  t0=$(date +%s)
  "$bin/prefdisco" build --benchmark "$bench" --source "$shared/data/benchmarks/${src[$bench]}" \
    --problems 2 --personas-per-problem 2 --persona-library "$out/personas.jsonl" \
    "${small[@]}" --max-attributes 4 --out "$out/$bench" --seed 0
  "$bin/prefdisco" validate "$out/$bench"
  echo "$bench build: $(( $(date +%s) - t0 )) s"
done
if [[ "$do_eval" != "--no-eval" ]]; then
  # one eval over the ten builds at once: their scenarios concatenated into one file
  mkdir -p "$out/all"
  for bench in math500 aime logiqa mascqa scienceqa medqa mmlu simpleqa commonsenseqa socialiqa; do
    cat "$out/$bench/scenarios.jsonl"
  done > "$out/all/scenarios.jsonl"
  "$bin/prefdisco" validate "$out/all/scenarios.jsonl"
  t0=$(date +%s)
  "$bin/prefdisco" eval "$out/all/scenarios.jsonl" --model prefdisco/smollm2 --log-dir "$out/eval-all" \
    --constrain-protocol --max-tokens 120 --user-max-tokens 40 --judge structured --display none
  echo "eval of all ten: $(( $(date +%s) - t0 )) s"
fi
echo "total: $(( $(date +%s) - start )) s"
