"""BERT fine-tuning and prediction for SQuAD 1.1 and SQuAD 2.0.

The command line of the original `run_squad.py` (same flags, defaults and
checks, same files in `output_dir`), with Keras `model.fit` underneath:

    python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --do_train=True --train_file=$SQUAD_DIR/train-v1.1.json \
      --do_predict=True --predict_file=$SQUAD_DIR/dev-v1.1.json \
      --train_batch_size=12 --learning_rate=3e-5 --num_train_epochs=2.0 \
      --max_seq_length=384 --doc_stride=128 --output_dir=/tmp/squad_base/

Writes `train.tf_record`, `eval.tf_record`, TF1 checkpoints `model.ckpt-N`,
`predictions.json`, `nbest_predictions.json` and (SQuAD 2.0)
`null_odds.json`, exactly as the original. When the predict file carries gold
answers (a dev set), it also writes `eval_results.json`: the official
evaluation's numbers (evaluate-v2.0.py keys; with null odds the best
threshold for --null_score_diff_threshold). Rerunning a command resumes
training from the newest checkpoint in `output_dir`. The work is
`tasks.squad`; every check runs before anything is written, and an error is
one line on stderr (--verbose_errors for the traceback).
"""

from tasks.quiet_start import start_tensorflow  # noqa: E402

# Before anything else imports TensorFlow: its start-up lines would bury
# the one-line errors (see tasks/quiet_start.py).
start_tensorflow()

from absl import flags  # noqa: E402

from modeling import runtime  # noqa: E402
from tasks import cli  # noqa: E402
from tasks.squad import SquadConfig, SquadTask  # noqa: E402

FLAGS = flags.FLAGS

# Required parameters (the original's).
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.")
flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string(
    "output_dir", None,
    "The output directory where the model checkpoints will be written.")

# Other parameters (the original's).
flags.DEFINE_string("train_file", None,
                    "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string(
    "predict_file", None,
    "SQuAD json for predictions. E.g., dev-v1.1.json or test-v1.1.json")
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
flags.DEFINE_integer(
    "max_seq_length", 384,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded.")
flags.DEFINE_integer(
    "doc_stride", 128,
    "When splitting up a long document into chunks, how much stride to "
    "take between chunks.")
flags.DEFINE_integer(
    "max_query_length", 64,
    "The maximum number of tokens for the question. Questions longer than "
    "this will be truncated to this length.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_predict", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("predict_batch_size", 8,
                     "Total batch size for predictions.")
flags.DEFINE_float("learning_rate", 5e-5,
                   "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0,
                   "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion", 0.1,
    "Proportion of training to perform linear learning rate warmup for. "
    "E.g., 0.1 = 10% of training.")
flags.DEFINE_integer(
    "n_best_size", 20,
    "The total number of n-best predictions to generate in the "
    "nbest_predictions.json output file.")
flags.DEFINE_integer(
    "max_answer_length", 30,
    "The maximum length of an answer that can be generated. This is needed "
    "because the start and end predictions are not conditioned on one "
    "another.")
flags.DEFINE_bool(
    "verbose_logging", False,
    "If true, all of the warnings related to data processing will be "
    "printed. A number of warnings are expected for a normal SQuAD "
    "evaluation.")
flags.DEFINE_bool(
    "version_2_with_negative", False,
    "If true, the SQuAD examples contain some that do not have an answer.")
flags.DEFINE_float(
    "null_score_diff_threshold", 0.0,
    "If null_score - best_non_null is greater than the threshold predict "
    "null.")
runtime.define_runtime_flags()
cli.define_common_flags()
flags.adopt_module_key_flags(runtime)
flags.adopt_module_key_flags(cli)

for _name in ("vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main():
    """Flags -> `SquadConfig` -> `SquadTask.run()`."""
    SquadTask(cli.config_from_flags(SquadConfig)).run()


if __name__ == "__main__":
    cli.main(main)
