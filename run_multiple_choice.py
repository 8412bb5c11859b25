"""BERT fine-tuning for multiple choice: SWAG, HellaSwag or your own TSV.

The BERT paper's SWAG task (§4.4), which the original repository never
shipped, with its recipe: each example becomes --num_choices rows
`[CLS] context [SEP] ending [SEP]`, one vector scores each row's pooled
output and a softmax over an example's scores gives the choice
probabilities. Flags, checks and files in the style of run_classifier.py,
with the files named as run_squad.py names them:

    python run_multiple_choice.py --data_format=swag \
      --do_train=true --train_file=$SWAG_DIR/train.csv \
      --do_eval=true --eval_file=$SWAG_DIR/val.csv \
      --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --output_dir=/tmp/swag_output/

Defaults are the paper's: 3 epochs, learning rate 2e-5, batch size 16.
--data_format: swag (the released CSV: sent1 is segment A, sent2 + " " +
ending<k> segment B of choice k), hellaswag (JSON Lines: ctx_a; ctx_b + " " +
endings[k]) or tsv (a header `id context ending0 .. ending{N-1} label`;
id and label optional). Every row must have --num_choices endings and a
label in 0..num_choices-1 (train and eval files; a predict file may have
none).

Writes `train.tf_record`/`eval.tf_record`/`predict.tf_record`, TF1
checkpoints `model.ckpt-N`, `eval_results.txt` (eval_accuracy, eval_loss,
global_step, loss) and `test_results.tsv` (one line of per-choice
probabilities per example of --predict_file, in input order). Rerunning a
command resumes from the newest checkpoint in `output_dir`. The work is
`tasks.multiple_choice`; every check runs before anything is written, and an
error is one line on stderr (--verbose_errors for the traceback).
"""

from tasks.quiet_start import start_tensorflow  # noqa: E402

# Before anything else imports TensorFlow: its start-up lines would bury
# the one-line errors (see tasks/quiet_start.py).
start_tensorflow()

from absl import flags  # noqa: E402

from data.multiple_choice.readers import DATA_FORMATS  # noqa: E402
from tasks import cli, script_flags  # noqa: E402
from tasks.multiple_choice import (  # noqa: E402
    MultipleChoiceConfig, MultipleChoiceTask)

FLAGS = flags.FLAGS

script_flags.define_model_flags()
script_flags.define_output_dir_flag()
flags.DEFINE_string(
    "train_file", None,
    "Multiple-choice file for training (e.g. SWAG train.csv), read as "
    "--data_format.")
flags.DEFINE_string(
    "eval_file", None,
    "Labelled multiple-choice file for --do_eval (e.g. SWAG val.csv).")
flags.DEFINE_string(
    "predict_file", None,
    "Multiple-choice file for --do_predict (labels optional, e.g. SWAG "
    "test.csv); its probabilities go to test_results.tsv.")
flags.DEFINE_enum(
    "data_format", "swag", list(DATA_FORMATS),
    "Layout of the data files: swag (CSV with sent1, sent2, ending0.., "
    "label), hellaswag (JSON Lines with ctx_a, ctx_b, endings, label) or "
    "tsv (header: id, context, ending0 .. ending{N-1}, label).")
flags.DEFINE_integer(
    "num_choices", 4,
    "Number of endings of every example; a row with another number is an "
    "error.")
script_flags.define_mode_flags(("train", "eval", "predict"),
                               batch_sizes={"train": 16})
script_flags.define_learning_rate_flags(learning_rate=2e-5)
script_flags.define_padding_flags()
script_flags.define_evaluation_flags()
script_flags.define_runtime_and_error_flags()

for _name in ("vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main():
    """Flags -> `MultipleChoiceConfig` -> `MultipleChoiceTask.run()`."""
    MultipleChoiceTask(cli.config_from_flags(MultipleChoiceConfig)).run()


if __name__ == "__main__":
    cli.main(main)
