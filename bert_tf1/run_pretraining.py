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

A rerun resumes from the newest `model.ckpt-N`. Added: --dynamic_masking and
--optimizer_type (an alias of --optimizer).
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402
from bert_tf1.tasks.pretraining import PretrainingConfig, PretrainingTask  # noqa: E402

script_flags.define_model_flags(
    max_seq_length_help=script_flags.MAX_SEQ_LENGTH_HELP
    + " Must match data generation.",
    vocab_file=False, do_lower_case=False)
flags.DEFINE_string(
    "input_file", None,
    "Input TF example files (can be a glob or comma separated).")
script_flags.define_output_dir_flag()
flags.DEFINE_integer(
    "max_predictions_per_seq", 20,
    "Maximum number of masked LM predictions per sequence. "
    "Must match data generation.")
script_flags.define_mode_flags(("train", "eval"))
script_flags.define_learning_rate_flags(epochs=False)
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
script_flags.define_runtime_and_error_flags()

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
                  "Alias of --optimizer (adamw: the original's "
                  "AdamWeightDecayOptimizer; lamb: LAMB).")

flags.mark_flags_as_required(["bert_config_file", "input_file", "output_dir"])


main = cli.task_main(PretrainingTask, PretrainingConfig)


def command():
    """`python run_pretraining.py`, `python -m bert_tf1.run_pretraining` and
    `bert-run-pretraining`: parses the command line and runs `main` under
    the one error path."""
    cli.main(main, script=__name__)


if __name__ == "__main__":
    command()
