#!/usr/bin/env bash
# A small BERT (2 layers, hidden 128) trained from scratch on GLUE SST-2 with
# run_classifier.py and evaluated on all 872 dev sentences (the project's main
# job before a real pretrained model reached it; run_main.sh now fine-tunes
# all-MiniLM-L6-v2). Sets up the virtualenv on first use.
#
#   bash demos/sst2_from_scratch.sh [--data_dir=../shared/data] [--output_dir=${TMPDIR:-/tmp}/bert_main-$USER]
#                    [any other run_classifier.py flag, e.g. --num_train_epochs=1]
#
# --data_dir is the shared data folder (it holds glue/SST-2 and
# bert_models/uncased_L-12_H-768_A-12/vocab.txt). With --init_checkpoint and a
# matching --bert_config_file it fine-tunes a released checkpoint instead of
# training the small model from scratch (use a fresh --output_dir: a rerun
# resumes from the checkpoints already there). Relative paths are taken from
# the current directory.
set -euo pipefail
source "$(dirname "$0")/../scripts_env.sh"
DATA_DIR=$REPO/../shared/data
# Per user, so that two users of one machine do not share (or resume) a run.
OUTPUT_DIR=${TMPDIR:-/tmp}/bert_main-$(id -un)
EXTRA=()
for arg in "$@"; do
  case "$arg" in
    --data_dir=*) DATA_DIR="${arg#*=}" ;;
    --output_dir=*) OUTPUT_DIR="${arg#*=}" ;;
    *) EXTRA+=("$arg") ;;
  esac
done
"$VENV/bin/python" "$REPO/run_classifier.py" \
  --task_name=SST-2 \
  --do_train=true --do_eval=true \
  --data_dir="$DATA_DIR/glue/SST-2" \
  --vocab_file="$DATA_DIR/bert_models/uncased_L-12_H-768_A-12/vocab.txt" \
  --bert_config_file="$REPO/configs/bert_tiny_from_scratch.json" \
  --max_seq_length=64 --train_batch_size=32 --learning_rate=1e-3 \
  --num_train_epochs=2 --save_checkpoints_steps=1000 \
  --output_dir="$OUTPUT_DIR" "${EXTRA[@]+"${EXTRA[@]}"}"
echo "== $OUTPUT_DIR/eval_results.txt"
cat "$OUTPUT_DIR/eval_results.txt"
