#!/usr/bin/env bash
# Multiple choice that learns on this machine: a small BERT (2 layers, hidden
# 128, configs/bert_tiny_from_scratch.json, the uncased vocab) on a
# next-sentence task built from the shared text, evaluated on held-out rows
# from documents it never saw.
#
#   bash demos/multiple_choice.sh [DATA_DIR=../shared/data] [WORK_DIR=/tmp/multiple_choice_demo] [EPOCHS=1]
#
# 1. The task (demos/build_next_sentence_choice.py): context = a sentence, the
#    right ending = the next sentence of its document, 3 distractors =
#    sentences of other documents of the same split; the split is by
#    document (dev: >= 1,000 rows from documents never trained on).
# 2. No pretrained weights exist here, and fine-tuning from random values
#    barely learns this task in the time (see README), so the model is first
#    pretrained briefly (masked LM + next sentence, run_pretraining.py) on
#    the TRAIN documents' text only: the dev documents stay unseen.
# 3. run_multiple_choice.py fine-tunes it on train.tsv, then evaluates each
#    half-epoch checkpoint on dev.tsv, and demos/next_sentence_report.py says
#    how much of the accuracy the text's source (Wikipedia or the novel)
#    answers alone.
#
# Environment: PRETRAIN_STEPS=600 (0: fine-tune from random values),
# SEQ=64, BATCH=32, LR=2e-4 (fine-tuning), POINTS=2 (curve points per epoch);
# PYTHON=/path/to/python, else the .venv that scripts_env.sh creates.
# A rerun resumes from the checkpoints in WORK_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${1:-../shared/data}
WORK_DIR=${2:-/tmp/multiple_choice_demo}
EPOCHS=${3:-1}
PRETRAIN_STEPS=${PRETRAIN_STEPS:-600}
SEQ=${SEQ:-64}
BATCH=${BATCH:-32}
LR=${LR:-2e-4}
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

# 1. The task (train.tsv, dev.tsv) and the train documents' text.
[ -f "$TASK/dev.tsv" ] || "$PY" demos/build_next_sentence_choice.py \
  --data_dir="$DATA_DIR/pretraining" --output_dir="$TASK" --seed=12345 \
  --num_choices=4 --min_dev_rows=1000 --train_text_file="$TASK/train_text.txt"
TRAIN_ROWS=$(( $(wc -l < "$TASK/train.tsv") - 1 ))
DEV_ROWS=$(( $(wc -l < "$TASK/dev.tsv") - 1 ))
STEPS_PER_EPOCH=$(( TRAIN_ROWS / BATCH ))
EVERY=$(( STEPS_PER_EPOCH / ${POINTS:-2} ))
echo "== task: $TRAIN_ROWS train rows, $DEV_ROWS dev rows; $STEPS_PER_EPOCH steps per epoch ($(elapsed) s)"

# 2. Brief pretraining on the train documents only.
INIT=()
if [ "$PRETRAIN_STEPS" -gt 0 ]; then
  [ -f "$WORK_DIR/pretraining.tfrecord" ] || "$PY" create_pretraining_data.py \
    --input_file="$TASK/train_text.txt" \
    --output_file="$WORK_DIR/pretraining.tfrecord" --vocab_file="$VOCAB" \
    --do_lower_case=true --max_seq_length="$SEQ" --max_predictions_per_seq=10 \
    --masked_lm_prob=0.15 --dupe_factor=2 --num_workers=2 \
    2> "$WORK_DIR/pretraining_data.log"
  "$PY" run_pretraining.py --input_file="$WORK_DIR/pretraining.tfrecord" \
    --output_dir="$WORK_DIR/pretrained" --bert_config_file="$CONFIG" \
    --do_train=true --train_batch_size=32 --max_seq_length="$SEQ" \
    --max_predictions_per_seq=10 --num_train_steps="$PRETRAIN_STEPS" \
    --num_warmup_steps=$(( PRETRAIN_STEPS / 10 )) --learning_rate=1e-3 \
    --save_checkpoints_steps="$PRETRAIN_STEPS" 2> "$WORK_DIR/pretraining.log"
  INIT=(--init_checkpoint="$WORK_DIR/pretrained/model.ckpt-$PRETRAIN_STEPS")
  echo "== pretrained $PRETRAIN_STEPS steps ($(elapsed) s; load average $(load))"
fi

common=(--data_format=tsv --num_choices=4 --vocab_file="$VOCAB"
        --do_lower_case=true --bert_config_file="$CONFIG" --max_seq_length="$SEQ")

# 3. Fine-tuning; every half-epoch checkpoint is kept for the curve.
"$PY" run_multiple_choice.py "${common[@]}" "${INIT[@]+"${INIT[@]}"}" \
  --do_train=true --train_file="$TASK/train.tsv" --train_batch_size="$BATCH" \
  --learning_rate="$LR" --num_train_epochs="$EPOCHS" \
  --save_checkpoints_steps="$EVERY" --keep_checkpoint_max=0 \
  --output_dir="$MODEL" 2> "$WORK_DIR/train.log"
echo "== fine-tuned ($(elapsed) s; load average $(load))"

# 4. The learning curve on the held-out rows; the last point also writes
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

# 5. What the number means.
"$PY" demos/next_sentence_report.py --data_dir="$DATA_DIR/pretraining" \
  --dev_file="$TASK/dev.tsv" --test_results="$MODEL/test_results.tsv"
echo "== total $(elapsed) s; load average at the end: $(load)"
