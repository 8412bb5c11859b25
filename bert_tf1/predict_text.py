r"""Predicts from raw text in one line: JSON lines on standard output.

    # with an export of export_saved_model.py (its type is read from it)
    python predict_text.py --export_dir=/tmp/mrpc_export \
      --text=$'He said hello.\tHe greeted us.'

    # with a checkpoint: the same serving module is built in memory
    python predict_text.py --init_checkpoint=/tmp/mrpc_output \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --model_type=classifier \
      --task_name=MRPC --input_file=pairs.txt

Input: every --text, else --input_file, else standard input; one example per
line, TAB between the fields. Output: docs/serving.md. With --runner (an
Apache Beam runner) and --export_dir: --input_file files and globs into
--output_dir shards (docs/batch_inference.md).
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402

flags.DEFINE_string("export_dir", None,
                    "An export of export_saved_model.py (instead of "
                    "--init_checkpoint): its raw-text SavedModel, or one "
                    "--format folder (saved_model, numeric, openvino, litert, "
                    "onnx; docs/deploying.md).")
flags.DEFINE_enum("model_type", None,
                  ["classifier", "squad", "tagger", "multiple_choice",
                   "encoder"],
                  "What --init_checkpoint holds (needed with it, but for a "
                  "model folder with a pooling.json: an encoder, pooled as "
                  "recorded); with --export_dir, checked against the "
                  "export.")
script_flags.define_model_flags(
    max_seq_length=None,
    max_seq_length_help="With --init_checkpoint: the sequence length of "
    "training (default: the model folder's record, else 128). An export "
    "records its own.",
    init_checkpoint_help="A checkpoint to predict with (instead of "
    "--export_dir): a prefix or an output_dir (its newest checkpoint; an "
    "output_dir gives the config, vocab, casing, length and labels too).")
script_flags.define_served_model_flags()
flags.DEFINE_multi_string("text", None,
                          "An example (repeatable); TAB separates its fields.")
flags.DEFINE_string("input_file", None,
                    "Examples, one per line (default: standard input); "
                    "blank lines are skipped, and each result's `line` "
                    "is its line number in the input.")
flags.DEFINE_string("output_file", None,
                    "Write the JSON lines to this file instead of standard "
                    "output.")
flags.DEFINE_integer("batch_size", 32, "Examples per model call.")
script_flags.define_batch_inference_flags()
cli.define_common_flags(checkpoint_flags=False)


def run():
    """Flags -> `PredictTextConfig` -> `PredictTextTask.run()`."""
    from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask

    PredictTextTask(cli.config_from_flags(
        PredictTextConfig, batch=script_flags.batch_options_from_flags(),
        **script_flags.served_model_overrides())).run()


def command():
    """`python predict_text.py`, `python -m bert_tf1.predict_text` and
    `bert-predict-text`: parses the command line and runs `run` under the
    one error path."""
    cli.main(run, script=__name__, quiet=True)


if __name__ == "__main__":
    command()
