#!/usr/bin/env bash
# Pretrains a small BERT (2 layers, hidden 128) from scratch on the shared corpus,
# prints a masked-LM accuracy curve, then fine-tunes it on MRPC with
# run_classifier.py. Run from the repository root, inside the virtualenv
# (`bash run_tests.sh` or `bash run_main.sh` create `.venv`):
#
#   bash demos/pretrain_small_bert.sh [DATA_DIR=../shared/data] [WORK_DIR=${TMPDIR:-/tmp}/pretrain_demo-$USER] [STEPS=1800]
#
# On a 2-core machine 1800 steps (sequences of 64 tokens) take about 14 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${1:-../shared/data}
WORK_DIR=${2:-${TMPDIR:-/tmp}/pretrain_demo-$(id -un)}  # per user: no collisions
STEPS=${3:-1800}
EVERY=$((STEPS / 6))
PY=${PYTHON:-.venv/bin/python}
VOCAB="$DATA_DIR/bert_models/uncased_L-12_H-768_A-12/vocab.txt"
CONFIG=configs/bert_tiny_from_scratch.json
mkdir -p "$WORK_DIR"

# 1. Pretraining data: the corpus for training, the original's sample_text.txt
#    (text the model never trains on) for a held-out curve.
[ -f "$WORK_DIR/corpus.tfrecord" ] || "$PY" create_pretraining_data.py \
  --input_file="$DATA_DIR/pretraining/corpus.txt" --output_file="$WORK_DIR/corpus.tfrecord" \
  --vocab_file="$VOCAB" --do_lower_case=true --max_seq_length=64 \
  --max_predictions_per_seq=10 --masked_lm_prob=0.15 --dupe_factor=5 --num_workers=2
[ -f "$WORK_DIR/heldout.tfrecord" ] || "$PY" create_pretraining_data.py \
  --input_file="$DATA_DIR/pretraining/sample_text.txt" --output_file="$WORK_DIR/heldout.tfrecord" \
  --vocab_file="$VOCAB" --do_lower_case=true --max_seq_length=64 \
  --max_predictions_per_seq=10 --masked_lm_prob=0.15 --dupe_factor=10

# 2. Pretraining; every checkpoint is kept for the curve.
"$PY" run_pretraining.py --input_file="$WORK_DIR/corpus.tfrecord" \
  --output_dir="$WORK_DIR/model" --bert_config_file="$CONFIG" --do_train=true \
  --train_batch_size=32 --max_seq_length=64 --max_predictions_per_seq=10 \
  --num_train_steps="$STEPS" --num_warmup_steps=$((STEPS / 10)) --learning_rate=1e-3 \
  --save_checkpoints_steps="$EVERY" --keep_checkpoint_max=0

# 3. The curve: each checkpoint evaluated on held-out and on training text.
echo "step  heldout_mlm_acc  heldout_mlm_loss  train_mlm_acc  train_nsp_acc"
for step in 0 $(seq "$EVERY" "$EVERY" "$STEPS"); do
  row="$step"
  for input in heldout corpus; do
    eval_dir="$WORK_DIR/eval_${input}_$step"
    init=()
    [ "$step" -gt 0 ] && init=(--init_checkpoint="$WORK_DIR/model/model.ckpt-$step")
    "$PY" run_pretraining.py --input_file="$WORK_DIR/$input.tfrecord" \
      --output_dir="$eval_dir" --bert_config_file="$CONFIG" --do_eval=true \
      --eval_batch_size=32 --max_eval_steps=20 --max_seq_length=64 \
      --max_predictions_per_seq=10 "${init[@]+"${init[@]}"}" >/dev/null 2>&1
    value() { sed -n "s/^$1 = //p" "$eval_dir/eval_results.txt"; }
    if [ "$input" = heldout ]; then
      row="$row  $(value masked_lm_accuracy)  $(value masked_lm_loss)"
    else
      row="$row  $(value masked_lm_accuracy)  $(value next_sentence_accuracy)"
    fi
  done
  echo "$row"
done

# 4. Fine-tune the pretrained model on MRPC from its last checkpoint.
"$PY" run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \
  --data_dir="$DATA_DIR/glue/MRPC" --vocab_file="$VOCAB" --bert_config_file="$CONFIG" \
  --init_checkpoint="$WORK_DIR/model/model.ckpt-$STEPS" --max_seq_length=64 \
  --train_batch_size=32 --learning_rate=1e-4 --num_train_epochs=1 \
  --output_dir="$WORK_DIR/mrpc" >/dev/null 2>&1
echo "== MRPC fine-tuned from the pretrained checkpoint: $WORK_DIR/mrpc/eval_results.txt"
cat "$WORK_DIR/mrpc/eval_results.txt"
