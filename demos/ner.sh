#!/usr/bin/env bash
# Sequence tagging end to end on WNUT-17 (English, 6 entity types), with
# run_ner.py, in one go on CPU:
#
#   bash demos/ner.sh [DATA_DIR=../shared/data] [WORK_DIR=/tmp/ner_demo]
#
# No pretrained BERT exists on this machine, so the demo makes a small one:
#   1. pretraining corpus: the shared corpus.txt (WikiText-2 test + Pride and
#      Prejudice) plus the WNUT-17 TRAINING sentences (untagged; the dev file
#      is never used for pretraining); create_pretraining_data.py, cased;
#   2. run_pretraining.py: a 4-layer, hidden-128 BERT (configs/
#      bert_ner_demo.json, cased vocab) for $PRETRAIN_STEPS steps from scratch
#      at the paper's learning rate, 1e-4. Brief pretraining at a higher rate
#      hurts: the tied MLM output layer drags every rarely seen word piece's
#      embedding along one shared direction (400 steps at 1e-3 left a mean
#      pairwise cosine of 0.82 between word embeddings after centring; 100
#      steps at 1e-4: 0.45), and fine-tuning from such a table stayed at
#      "O everywhere" for every learning rate tried;
#   3. fine-tuning (BertTokenClassifier) from that checkpoint, learning rate
#      $FT_LEARNING_RATE, batch $FT_BATCH_SIZE, $FT_EPOCHS epochs (the
#      small model leaves the all-"O" plateau only after ~2 epochs);
#   4. the feature-based approach, --feature_layers=concat_last_four, from the
#      same checkpoint (frozen encoder, activations cached, 2-layer BiLSTM);
#   5. baselines: every word tagged with its most frequent training tag
#      (demos/ner/baselines.py), and demos/wordpiece_bilstm_ner.py (run_ner.py
#      with the same BiLSTM on the same word pieces, random embeddings, no BERT);
# each trained on wnut17train.conll and evaluated on emerging.dev.conll.
# It prints one table (entity F1 per type and overall, conlleval rules, and
# the training time of each run, process start-up included), the load
# average before and after, and the total time. Logs: $WORK_DIR/logs/.
# A rerun resumes (checkpoints and caches are in $WORK_DIR); use a fresh
# WORK_DIR to measure.
set -euo pipefail
source "$(dirname "$0")/../scripts_env.sh"
cd "$REPO"
DATA_DIR=${1:-../shared/data}
WORK_DIR=${2:-/tmp/ner_demo}
PRETRAIN_STEPS=${PRETRAIN_STEPS:-100}
PRETRAIN_LEARNING_RATE=${PRETRAIN_LEARNING_RATE:-1e-4}
FT_EPOCHS=${FT_EPOCHS:-8}
FT_LEARNING_RATE=${FT_LEARNING_RATE:-2e-4}
FT_BATCH_SIZE=${FT_BATCH_SIZE:-16}
# Epochs of the two BiLSTM taggers (batch 32, learning rate 2e-3).
EPOCHS=${EPOCHS:-3}
LSTM_UNITS=${LSTM_UNITS:-64}
PY="$VENV/bin/python"
NER="$DATA_DIR/ner/wnut17"
VOCAB="$DATA_DIR/bert_models/cased_L-12_H-768_A-12/vocab.txt"
CONFIG=configs/bert_ner_demo.json
mkdir -p "$WORK_DIR/logs"
LOGS="$WORK_DIR/logs"
START=$(date +%s)
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# Runs a command with its output in $LOGS/<name>.log; sets SECONDS_TAKEN.
timed() {
  local name=$1; shift
  local begin; begin=$(date +%s)
  if ! "$@" >"$LOGS/$name.log" 2>&1; then
    echo "== $name failed; the end of $LOGS/$name.log:"; tail -20 "$LOGS/$name.log"; exit 1
  fi
  SECONDS_TAKEN=$(( $(date +%s) - begin ))
  echo "== $name: ${SECONDS_TAKEN} s"
}

# 1-2. A small cased BERT, pretrained briefly.
[ -f "$WORK_DIR/corpus.txt" ] || "$PY" demos/ner_demo_tools.py corpus \
  "$NER/wnut17train.conll" "$DATA_DIR/pretraining/corpus.txt" "$WORK_DIR/corpus.txt"
[ -f "$WORK_DIR/pretraining.tfrecord" ] || timed pretraining_data \
  "$PY" create_pretraining_data.py --input_file="$WORK_DIR/corpus.txt" \
  --output_file="$WORK_DIR/pretraining.tfrecord" --vocab_file="$VOCAB" \
  --do_lower_case=false --max_seq_length=64 --max_predictions_per_seq=10 \
  --masked_lm_prob=0.15 --dupe_factor=2 --num_workers=2
timed pretraining "$PY" run_pretraining.py --input_file="$WORK_DIR/pretraining.tfrecord" \
  --output_dir="$WORK_DIR/pretrained" --bert_config_file="$CONFIG" --do_train=true \
  --train_batch_size=32 --max_seq_length=64 --max_predictions_per_seq=10 \
  --num_train_steps="$PRETRAIN_STEPS" --num_warmup_steps=$((PRETRAIN_STEPS / 10)) \
  --learning_rate="$PRETRAIN_LEARNING_RATE" --save_checkpoints_steps="$PRETRAIN_STEPS"
PRETRAINED="$WORK_DIR/pretrained/model.ckpt-$PRETRAIN_STEPS"

COMMON=(--vocab_file="$VOCAB" --bert_config_file="$CONFIG" --do_lower_case=false
        --train_file="$NER/wnut17train.conll" --eval_file="$NER/emerging.dev.conll"
        --data_format=conll --tag_scheme=iob2 --max_seq_length=64 --doc_stride=32
        --eval_batch_size=64 --save_checkpoints_steps=100000)
# The BiLSTM taggers' training flags.
LSTM_TRAIN=(--train_batch_size=32 --num_train_epochs="$EPOCHS" --learning_rate=2e-3)

# 3. Fine-tuning.
timed finetune_train "$PY" run_ner.py "${COMMON[@]}" --do_train=true \
  --init_checkpoint="$PRETRAINED" --train_batch_size="$FT_BATCH_SIZE" \
  --num_train_epochs="$FT_EPOCHS" --learning_rate="$FT_LEARNING_RATE" \
  --output_dir="$WORK_DIR/finetune"
FINETUNE_S=$SECONDS_TAKEN
timed finetune_eval "$PY" run_ner.py "${COMMON[@]}" --do_eval=true \
  --output_dir="$WORK_DIR/finetune"

# 4. Feature-based: frozen encoder, concat of the last four layers, BiLSTM.
timed feature_train "$PY" run_ner.py "${COMMON[@]}" --do_train=true \
  --init_checkpoint="$PRETRAINED" --feature_layers=concat_last_four \
  --lstm_units="$LSTM_UNITS" "${LSTM_TRAIN[@]}" --output_dir="$WORK_DIR/feature_based"
FEATURE_S=$SECONDS_TAKEN
timed feature_eval "$PY" run_ner.py "${COMMON[@]}" --do_eval=true \
  --feature_layers=concat_last_four --lstm_units="$LSTM_UNITS" \
  --output_dir="$WORK_DIR/feature_based"

# 5. Baselines.
timed bilstm_train "$PY" demos/wordpiece_bilstm_ner.py "${COMMON[@]}" --do_train=true \
  --lstm_units="$LSTM_UNITS" "${LSTM_TRAIN[@]}" \
  --output_dir="$WORK_DIR/bilstm"
BILSTM_S=$SECONDS_TAKEN
timed bilstm_eval "$PY" demos/wordpiece_bilstm_ner.py "${COMMON[@]}" --do_eval=true \
  --lstm_units="$LSTM_UNITS" --output_dir="$WORK_DIR/bilstm"
timed most_frequent_tag "$PY" demos/ner_demo_tools.py baseline \
  "$NER/wnut17train.conll" "$NER/emerging.dev.conll" "$WORK_DIR/most_frequent_tag"

echo
echo "WNUT-17 dev (emerging.dev.conll), entity F1 / precision / recall in %, conlleval rules;"
echo "train s = wall-clock seconds of the training process (start-up included)"
"$PY" demos/ner_demo_tools.py table \
  "most frequent tag=$WORK_DIR/most_frequent_tag" \
  "BiLSTM, no BERT ($LSTM_UNITS units)=$WORK_DIR/bilstm:$BILSTM_S" \
  "BERT L4/H128 fine-tuned=$WORK_DIR/finetune:$FINETUNE_S" \
  "BERT feature-based concat_last_four=$WORK_DIR/feature_based:$FEATURE_S"
echo
echo "load average before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg); CPUs: $(nproc)"
echo "total: $(( $(date +%s) - START )) s"
