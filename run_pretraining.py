"""Masked-LM + next-sentence pre-training of BERT on TFRecords.

The command line of google-research/bert `run_pretraining.py` (same flags,
defaults, input pipeline, loss and `eval_results.txt`), with Keras
`model.fit` underneath:

    python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \\
      --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \\
      --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

Writes TF1 checkpoints `model.ckpt-N` in output_dir (a rerun resumes from the
newest) and, with --do_eval, `eval_results.txt`. Added: --dynamic_masking
(new masks each time an instance is read) and --optimizer_type (adamw or
lamb). The work is `tasks.pretraining`; every check (input files, their
sequence length, checkpoint vs config) runs before training, and an error is
one line on stderr (--verbose_errors for the traceback).
"""

from tasks.quiet_start import start_tensorflow  # noqa: E402

# Before anything else imports TensorFlow: its start-up lines would bury
# the one-line errors (see tasks/quiet_start.py).
start_tensorflow()

from absl import flags  # noqa: E402

from modeling import runtime  # noqa: E402
from tasks import cli  # noqa: E402
from tasks.pretraining import PretrainingConfig, PretrainingTask  # noqa: E402

FLAGS = flags.FLAGS

# Required parameters (the original's).
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.")
flags.DEFINE_string(
    "input_file", None,
    "Input TF example files (can be a glob or comma separated).")
flags.DEFINE_string(
    "output_dir", None,
    "The output directory where the model checkpoints will be written.")

# Other parameters (the original's).
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_integer(
    "max_seq_length", 128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded. Must match data generation.")
flags.DEFINE_integer(
    "max_predictions_per_seq", 20,
    "Maximum number of masked LM predictions per sequence. "
    "Must match data generation.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
runtime.define_runtime_flags()
cli.define_common_flags()
flags.adopt_module_key_flags(runtime)
flags.adopt_module_key_flags(cli)

# This project's additions.
flags.DEFINE_bool(
    "dynamic_masking", False,
    "Draw new masked-LM masks each time a training instance is read "
    "(keras_hub MaskedLMMaskGenerator; needs --vocab_file). Evaluation keeps "
    "the masks stored in the files.")
flags.DEFINE_float("masked_lm_prob", 0.15,
                   "Share of tokens masked by --dynamic_masking.")
flags.DEFINE_string(
    "vocab_file", None,
    "Vocab file; only --dynamic_masking needs it (ids of [MASK], [CLS], "
    "[SEP]).")
flags.DEFINE_enum("optimizer_type", "adamw", ["adamw", "lamb"],
                  "adamw: the original's AdamWeightDecayOptimizer; lamb: LAMB.")

for _name in ("bert_config_file", "input_file", "output_dir"):
    flags.mark_flag_as_required(_name)


def main():
    """Flags -> `PretrainingConfig` -> `PretrainingTask.run()`."""
    PretrainingTask(cli.config_from_flags(PretrainingConfig)).run()


if __name__ == "__main__":
    cli.main(main)
