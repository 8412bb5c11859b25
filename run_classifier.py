"""BERT fine-tuning for sentence (pair) classification: GLUE and XNLI.

The command line of the original `run_classifier.py` (same flags, defaults and
checks, same files in `output_dir`), with Keras `model.fit` underneath:

    python run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \
      --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Writes `train.tf_record`/`eval.tf_record`/`predict.tf_record`, TF1 checkpoints
`model.ckpt-N` (loadable by `--init_checkpoint` and by the original code),
`eval_results.txt` and `test_results.tsv`. Rerunning a command resumes from the
newest checkpoint in `output_dir`. The work is `tasks.classification`; every
check runs before anything is written, and an error is one line on stderr
(--verbose_errors for the traceback).
"""

from tasks.quiet_start import start_tensorflow  # noqa: E402

# Before anything else imports TensorFlow: its start-up lines would bury
# the one-line errors (see tasks/quiet_start.py).
start_tensorflow()

from absl import flags  # noqa: E402

from data.glue.processors import PROCESSORS  # noqa: E402
from modeling import runtime  # noqa: E402
from tasks import cli  # noqa: E402
from tasks.classification import (  # noqa: E402
    ClassificationConfig, ClassificationTask)

# --help prints this docstring: name the tasks --task_name knows.
__doc__ += "\nKnown --task_name values: %s.\n" % ", ".join(sorted(PROCESSORS))

FLAGS = flags.FLAGS

# Required parameters (the original's).
flags.DEFINE_string(
    "data_dir", None,
    "The input data dir. Should contain the .tsv files (or other data files) "
    "for the task.")
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.")
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_string(
    "output_dir", None,
    "The output directory where the model checkpoints will be written.")

# Other parameters (the original's).
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
flags.DEFINE_integer(
    "max_seq_length", 128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_bool(
    "do_predict", False,
    "Whether to run the model in inference mode on the test set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_float("num_train_epochs", 3.0,
                   "Total number of training epochs to perform.")
flags.DEFINE_float(
    "warmup_proportion", 0.1,
    "Proportion of training to perform linear learning rate warmup for. "
    "E.g., 0.1 = 10% of training.")
runtime.define_runtime_flags()
cli.define_common_flags()
flags.adopt_module_key_flags(runtime)
flags.adopt_module_key_flags(cli)

for _name in ("data_dir", "task_name", "vocab_file", "bert_config_file",
              "output_dir"):
    flags.mark_flag_as_required(_name)


def main():
    """Flags -> `ClassificationConfig` -> `ClassificationTask.run()`."""
    ClassificationTask(cli.config_from_flags(ClassificationConfig)).run()


if __name__ == "__main__":
    cli.main(main)
