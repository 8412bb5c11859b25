"""Extracts pre-computed BERT activations as JSON lines.

The command line and output of google-research/bert `extract_features.py`:

    python extract_features.py --input_file=input.txt \\
      --output_file=output.jsonl --vocab_file=$BERT_BASE_DIR/vocab.txt \\
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \\
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \\
      --layers=-1,-2,-3,-4 --max_seq_length=128 --batch_size=8

One input line per example (`text_a ||| text_b` for a pair); one output line
per example: `{"linex_index": N, "features": [{"token": ..., "layers":
[{"index": -1, "values": [...]}, ...]}, ...]}`. The output file is written
to a temporary file and moved into place at the end.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from absl import app, flags, logging  # noqa: E402

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None, "Text file, one example per line "
                    "(`text_a ||| text_b` for a pair).")
flags.DEFINE_string("output_file", None, "JSON lines file to write.")
flags.DEFINE_string("layers", "-1,-2,-3,-4",
                    "Encoder layers to output (-1 is the last).")
flags.DEFINE_string(
    "bert_config_file", None,
    "The config json file corresponding to the pre-trained BERT model. "
    "This specifies the model architecture.")
flags.DEFINE_integer(
    "max_seq_length", 128,
    "The maximum total input sequence length after WordPiece tokenization. "
    "Sequences longer than this will be truncated, and sequences shorter "
    "than this will be padded.")
flags.DEFINE_string(
    "init_checkpoint", None,
    "Initial checkpoint (usually from a pre-trained BERT model).")
flags.DEFINE_string("vocab_file", None,
                    "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Whether to lower case the input text. Should be True for uncased "
    "models and False for cased models.")
flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU. Here "
                  "the model runs on the default device; kept for the "
                  "original's command lines.")
flags.DEFINE_string("master", None,
                    "If using a TPU, the address of the master (unused).")
flags.DEFINE_integer(
    "num_tpu_cores", 8,
    "Only used if `use_tpu` is True. Total number of TPU cores to use "
    "(unused).")
flags.DEFINE_bool(
    "use_one_hot_embeddings", False,
    "Accepted for the original's command lines; the embedding lookup is "
    "the same either way.")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError("unexpected arguments: %s" % " ".join(argv[1:]))
    import tensorflow as tf

    from data.tokenization import full_tokenizer as tokenization
    from data.extraction.features import (compute_layer_outputs,
                                         convert_examples_to_features,
                                         feature_json_line,
                                         parse_layer_indexes, read_examples)
    from data.pretraining.records import (remove_quietly, replace_file,
                                          temp_path_for)
    from modeling import BertConfig, BertModel, checkpoints

    logging.set_verbosity(logging.INFO)
    bert_config = BertConfig.from_json_file(FLAGS.bert_config_file)
    try:
        layer_indexes = parse_layer_indexes(FLAGS.layers,
                                            bert_config.num_hidden_layers)
        if FLAGS.max_seq_length > bert_config.max_position_embeddings:
            raise ValueError(
                "Cannot use sequence length %d because the BERT model was "
                "only trained up to sequence length %d "
                "(max_position_embeddings in %s)"
                % (FLAGS.max_seq_length, bert_config.max_position_embeddings,
                   FLAGS.bert_config_file))
        if FLAGS.max_seq_length < 3 or FLAGS.batch_size < 1:
            raise ValueError("--max_seq_length must be at least 3 and "
                             "--batch_size at least 1")
    except ValueError as error:
        raise app.UsageError(str(error))

    tokenizer = tokenization.tokenizer_for_model(
        FLAGS.vocab_file, FLAGS.do_lower_case, bert_config.vocab_size,
        FLAGS.bert_config_file)
    examples = read_examples(FLAGS.input_file)
    features = convert_examples_to_features(examples, FLAGS.max_seq_length,
                                            tokenizer)

    model = BertModel(bert_config)
    checkpoints.load_tf1_checkpoint(model, FLAGS.init_checkpoint)

    folder = os.path.dirname(FLAGS.output_file)
    if folder:
        tf.io.gfile.makedirs(folder)
    temp_path = temp_path_for(FLAGS.output_file)
    try:
        with tf.io.gfile.GFile(temp_path, "w") as writer:
            for feature, layer_outputs in compute_layer_outputs(
                    model, features, layer_indexes, FLAGS.batch_size):
                writer.write(feature_json_line(feature, layer_outputs,
                                               layer_indexes))
        replace_file(temp_path, FLAGS.output_file)
    finally:
        remove_quietly(temp_path)
    logging.info("Wrote features of %d examples to %s", len(features),
                 FLAGS.output_file)


if __name__ == "__main__":
    for _name in ("input_file", "vocab_file", "bert_config_file",
                  "init_checkpoint", "output_file"):
        flags.mark_flag_as_required(_name)
    app.run(main)
