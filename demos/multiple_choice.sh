#!/usr/bin/env bash
# Multiple choice that learns on this machine: a small BERT (2 layers, hidden
# 128, configs/bert_tiny_from_scratch.json, the uncased vocab) trained from
# random values with run_multiple_choice.py on a next-sentence task built
# from the shared text, evaluated on held-out rows from documents it never
# saw.
#
#   bash demos/multiple_choice.sh [DATA_DIR=../shared/data] [WORK_DIR=/tmp/multiple_choice_demo] [EPOCHS=3]
#
# 1. The task (demos/build_next_sentence_choice.py): context = a sentence, the
#    right ending = the next sentence of its document, 3 distractors =
#    sentences of other documents of the same split; the split is by
#    document (dev: 1,125 rows from 10 documents never trained on).
# 2. Training from random values (no pretrained weights exist here); every
#    half-epoch checkpoint is kept.
# 3. The learning curve on dev.tsv, then demos/next_sentence_report.py: how
#    much of the accuracy the text's source (Wikipedia or the novel) answers
#    alone, and the accuracy on the rows where it answers nothing.
#
# Environment: SEQ=48 BATCH=32 LR=5e-4 (a model trained from random values
# needs a larger step than the paper's 2e-5 for a pretrained one; 1e-3 left
# the [CLS] output constant here), POINTS=2 (curve points per epoch);
# PYTHON=/path/to/python, else the .venv that scripts_env.sh creates.
# A rerun resumes from the checkpoints in WORK_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${1:-../shared/data}
WORK_DIR=${2:-/tmp/multiple_choice_demo}
EPOCHS=${3:-3}
SEQ=${SEQ:-48}
BATCH=${BATCH:-32}
LR=${LR:-5e-4}
POINTS=${POINTS:-2}
if [ -n "${PYTHON:-}" ]; then
  PY=$PYTHON
  export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
else
  source scripts_env.sh
  PY="$VENV/bin/python"
fi
VOCAB="$DATA_DIR/bert_models/uncased_L-12_H-768_A-12/vocab.txt"
CONFIG=configs/bert_tiny_from_scratch.json
TASK="$WORK_DIR/task"
MODEL="$WORK_DIR/model"
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "== load average at start: $(load) ($(nproc) cores)"

# 1. The task: train.tsv and dev.tsv in the multiple-choice tsv layout.
[ -f "$TASK/dev.tsv" ] || "$PY" demos/build_next_sentence_choice.py \
  --data_dir="$DATA_DIR/pretraining" --output_dir="$TASK" --seed=12345 \
  --num_choices=4 --min_dev_rows=1000
TRAIN_ROWS=$(( $(wc -l < "$TASK/train.tsv") - 1 ))
DEV_ROWS=$(( $(wc -l < "$TASK/dev.tsv") - 1 ))
STEPS_PER_EPOCH=$(( TRAIN_ROWS / BATCH ))
EVERY=$(( STEPS_PER_EPOCH / POINTS ))
echo "== task: $TRAIN_ROWS train rows, $DEV_ROWS dev rows; $STEPS_PER_EPOCH steps per epoch"

common=(--data_format=tsv --num_choices=4 --vocab_file="$VOCAB"
        --do_lower_case=true --bert_config_file="$CONFIG" --max_seq_length="$SEQ")

# 2. Training from random values.
"$PY" run_multiple_choice.py "${common[@]}" --do_train=true \
  --train_file="$TASK/train.tsv" --train_batch_size="$BATCH" \
  --learning_rate="$LR" --num_train_epochs="$EPOCHS" \
  --save_checkpoints_steps="$EVERY" --keep_checkpoint_max=0 \
  --output_dir="$MODEL" 2> "$WORK_DIR/train.log"
echo "== trained ($(elapsed) s; load average $(load))"

# 3. The learning curve on the held-out rows; the last point also writes
#    test_results.tsv (per-choice probabilities) for the report.
LAST=$(sed -n 's/^model_checkpoint_path: "model.ckpt-\([0-9]*\)"$/\1/p' "$MODEL/checkpoint")
echo "step  epoch  eval_accuracy  eval_loss  elapsed_s"
for step in $(seq "$EVERY" "$EVERY" $(( LAST - 1 ))) "$LAST"; do
  if [ "$step" = "$LAST" ]; then
    out="$MODEL"
    "$PY" run_multiple_choice.py "${common[@]}" --do_eval=true \
      --eval_file="$TASK/dev.tsv" --do_predict=true \
      --predict_file="$TASK/dev.tsv" --eval_batch_size=64 \
      --predict_batch_size=64 --output_dir="$out" 2>> "$WORK_DIR/eval.log"
  else
    out="$WORK_DIR/eval_$step"
    "$PY" run_multiple_choice.py "${common[@]}" --do_eval=true \
      --eval_file="$TASK/dev.tsv" --eval_batch_size=64 \
      --init_checkpoint="$MODEL/model.ckpt-$step" --output_dir="$out" \
      2>> "$WORK_DIR/eval.log"
  fi
  value() { sed -n "s/^$1 = //p" "$out/eval_results.txt"; }
  printf "%5d  %5s  %13s  %9s  %9s\n" "$step" \
    "$(awk -v s="$step" -v e="$STEPS_PER_EPOCH" 'BEGIN{printf "%.1f", s/e}')" \
    "$(value eval_accuracy)" "$(value eval_loss)" "$(elapsed)"
done

# 4. What the number means.
"$PY" demos/next_sentence_report.py --data_dir="$DATA_DIR/pretraining" \
  --dev_file="$TASK/dev.tsv" --test_results="$MODEL/test_results.tsv"
echo "== total $(elapsed) s; load average at the end: $(load)"
# CPU seconds (user, system) of this shell, then of the commands it ran:
# with other jobs on the machine wall time overstates the cost, and CPU
# seconds / 2 bound the wall time on an idle 2-core machine from below.
times
