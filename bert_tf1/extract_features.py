"""Extracts pre-computed BERT activations as JSON lines.

The command line and output of google-research/bert `extract_features.py`:

    python extract_features.py --input_file=input.txt \\
      --output_file=output.jsonl --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=8

One input line per example (`text_a ||| text_b` for a pair); one output line
per example: `{"linex_index": N, "features": [{"token": ..., "layers":
[{"index": -1, "values": [...]}, ...]}, ...]}`. Sentence embeddings:

    python extract_features.py --pooling=mean --l2_normalize \\
      --output_file=embeddings.npy ... (float32 [input lines, hidden])

With --runner=DirectRunner (or a cluster runner) and --pooling, --input_file
files and globs go to Parquet shards in --output_dir instead
(docs/batch_inference.md).
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None, "Text file, one example per line "
                    "(`text_a ||| text_b` for a pair).")
flags.DEFINE_string("output_file", None,
                    "JSON lines file to write; with --pooling, a name ending "
                    "in .npy gives a float32 [input lines, hidden] array.")
flags.DEFINE_string("layers", "-1,-2,-3,-4",
                    "Encoder layers to output (-1 is the last). With "
                    "--pooling one layer, default -1.")
flags.DEFINE_enum(
    "pooling", "none", ["none", "mean", "cls", "max"],
    "none: every token's layers (the original's output). mean / max: one "
    "vector per input line over its real tokens ([CLS] and [SEP] included, "
    "as sentence-transformers); cls: the [CLS] token's vector of the layer "
    "(not the tanh pooler). Not given: the pooling.json of the model folder "
    "of --init_checkpoint (run_embeddings.py, fetch_pretrained.py), else "
    "none; mean, cls or max differing from pooling.json is refused.")
flags.DEFINE_bool("l2_normalize", False,
                  "With --pooling: divide each vector by its L2 norm (for "
                  "cosine similarity as a dot product). Not given: as the "
                  "model folder's pooling.json, else false.")
script_flags.define_model_flags()
flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
flags.DEFINE_bool(
    "use_one_hot_embeddings", False,
    "Accepted for the original's command lines; the embedding lookup is "
    "the same either way.")
# The original's use_tpu, master and num_tpu_cores: the runtime flags.
script_flags.define_batch_inference_flags()
script_flags.define_padding_flags(group_by_length=False)
script_flags.define_runtime_and_error_flags()

flags.mark_flags_as_required(["input_file", "vocab_file", "bert_config_file",
                             "init_checkpoint"])


def main():
    """Flags -> `FeatureExtractionConfig` -> `FeatureExtractionTask.run()`."""
    from bert_tf1.tasks.feature_extraction import (FeatureExtractionConfig,
                                                   FeatureExtractionTask)

    layers = FLAGS.layers if FLAGS["layers"].present else None
    # Not given: the model folder's pooling record decides.
    pooling = {name: None for name in ("pooling", "l2_normalize")
               if not FLAGS[name].present}
    # --output_dir is the Beam shards' folder, not the task's output_dir.
    FeatureExtractionTask(cli.config_from_flags(
        FeatureExtractionConfig, layers=layers, output_dir=None,
        batch=script_flags.batch_options_from_flags(), **pooling)).run()


def command():
    """`python extract_features.py`, `python -m bert_tf1.extract_features` and
    `bert-extract-features`: parses the command line and runs `main` under
    the one error path."""
    cli.main(main, script=__name__)


if __name__ == "__main__":
    command()
