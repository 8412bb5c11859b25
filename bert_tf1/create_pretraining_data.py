"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

Same flags, defaults and output as google-research/bert
`create_pretraining_data.py` (up to one --shard_size_mb of input). Added:
--num_workers, --shard_size_mb, --runner and --beam_pipeline_options.

Example:
  python create_pretraining_data.py \\
    --input_file=sample_text.txt --output_file=/tmp/tf_examples.tfrecord \\
    --vocab_file=uncased_L-12_H-768_A-12/vocab.txt --do_lower_case=True \\
    --max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 \\
    --random_seed=12345 --dupe_factor=5
"""
if __name__ == "__mp_main__":
    # A spawned --num_workers process: TF's start-up lines filtered too.
    from bert_tf1.tasks.quiet_start import start_tensorflow
    start_tensorflow()

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402

flags.DEFINE_string(
    "input_file", None,
    "Input raw text file (or comma-separated list of files; globs allowed).")
flags.DEFINE_string(
    "output_file", None,
    "Output TF example file (or comma-separated list of files).")
script_flags.define_vocab_flags()
flags.DEFINE_bool(
    "do_whole_word_mask", False,
    "Whether to use whole word masking rather than per-WordPiece masking.")
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", 20,
                     "Maximum number of masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer(
    "dupe_factor", 10,
    "Number of times to duplicate the input data (with different masks).")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float(
    "short_seq_prob", 0.1,
    "Probability of creating sequences which are shorter than the maximum "
    "length.")
flags.DEFINE_integer(
    "num_workers", 1,
    "Processes that build shards in parallel (not in the original); with "
    "--runner=DirectRunner, Beam worker processes; DataflowRunner's initial "
    "workers, FlinkRunner's parallelism. The output does not depend on it.")
flags.DEFINE_float(
    "shard_size_mb", 16.0,
    "Cut the input into shards of about this many MB of text, each "
    "processed on its own with a seed derived from --random_seed (not in "
    "the original). Memory per worker: about 70x a shard's size with "
    "dupe_factor=10 (about 1.1 GB at 16 MB), plus TensorFlow. Input up to "
    "this size is one shard, whose output equals the original's; 0 keeps "
    "any input in one shard.")
flags.DEFINE_string(
    "runner", "local",
    "Where to run (not in the original): 'local' (this machine's process "
    "pool) or an Apache Beam runner: DirectRunner (Beam's local runner), "
    "PrismRunner, DataflowRunner, FlinkRunner, SparkRunner. Beam runners "
    "need `pip install -e .[beam]` and write the same bytes as 'local'.")
flags.DEFINE_string(
    "beam_pipeline_options", "",
    "Options for the Beam runner, as a command line (not in the original), "
    "e.g. \"--project=my-project --region=us-central1 "
    "--temp_location=gs://bucket/tmp --setup_file=./setup.py\".")


# Not listed in --help (the original's flags are), but accepted.
cli.define_common_flags(checkpoint_flags=False)


def main():
    """Flags -> `PretrainingDataConfig` -> `PretrainingDataTask.run()`."""
    # Imported here so that --help answers without loading TensorFlow.
    from bert_tf1.tasks.quiet_start import start_tensorflow
    start_tensorflow()
    from bert_tf1.tasks.pretraining_data import (PretrainingDataConfig,
                                                 PretrainingDataTask)

    PretrainingDataTask(cli.config_from_flags(PretrainingDataConfig)).run()


def command():
    """`python create_pretraining_data.py`, `python -m
    bert_tf1.create_pretraining_data` and `bert-create-pretraining-data`:
    parses the command line and runs `main` under the one error path."""
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"])
    cli.main(main, script=__name__)


if __name__ == "__main__":
    command()
