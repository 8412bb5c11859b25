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
lamb).
"""
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from data.tokenization import full_tokenizer as tokenization  # noqa: E402
from data.pretraining.dynamic_masking import DynamicMasking  # noqa: E402
from data.pretraining.dataset import (  # noqa: E402
    expand_input_files, pretraining_dataset, split_inputs_and_labels)
from data.pretraining.metrics import PretrainingMetrics  # noqa: E402
from data.io.results import write_key_value_file  # noqa: E402
from modeling import BertConfig, BertPretrainer  # noqa: E402
from modeling import runtime, training  # noqa: E402
from modeling.optimization import create_optimizer  # noqa: E402

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


def check_flags(bert_config):
    """The original's check plus ours, with messages that say what to change.

    Raises:
      ValueError: neither --do_train nor --do_eval, a sequence length beyond
        the model's positions, or --dynamic_masking without --vocab_file.
    """
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise ValueError("At least one of `do_train` or `do_eval` must be "
                         "True.")
    if FLAGS.max_seq_length > bert_config.max_position_embeddings:
        raise ValueError(
            "Cannot use sequence length %d because the BERT model was only "
            "trained up to sequence length %d (max_position_embeddings in %s)"
            % (FLAGS.max_seq_length, bert_config.max_position_embeddings,
               FLAGS.bert_config_file))
    if FLAGS.dynamic_masking and not FLAGS.vocab_file:
        raise ValueError("--dynamic_masking needs --vocab_file (for the ids "
                         "of [MASK], [CLS] and [SEP]).")


def evaluate(model, dataset):
    """The original's evaluation metrics over every batch of `dataset`."""
    predict = tf.function(lambda inputs: model(inputs, training=False))
    metrics = PretrainingMetrics()
    for features in dataset:
        inputs, labels = split_inputs_and_labels(features)
        outputs = predict(inputs)
        metrics.update(outputs["masked_lm_log_probs"].numpy(),
                       labels["masked_lm_ids"].numpy(),
                       labels["masked_lm_weights"].numpy(),
                       outputs["next_sentence_log_probs"].numpy(),
                       labels["next_sentence_labels"].numpy())
    return metrics.result()


def main(argv):
    if len(argv) > 1:
        raise app.UsageError("unexpected arguments: %s" % " ".join(argv[1:]))
    logging.set_verbosity(logging.INFO)
    bert_config = BertConfig.from_json_file(FLAGS.bert_config_file)
    try:
        check_flags(bert_config)
        input_files = expand_input_files(FLAGS.input_file)
    except ValueError as error:
        raise app.UsageError(str(error))
    tf.io.gfile.makedirs(FLAGS.output_dir)
    logging.info("*** Input Files ***")
    for input_file in input_files:
        logging.info("  %s", input_file)

    options = runtime.runtime_options_from_flags()
    strategy = runtime.setup(options)
    with strategy.scope():
        model = BertPretrainer(bert_config)

    global_step = 0
    if FLAGS.do_train:
        logging.info("***** Running training *****")
        logging.info("  Batch size = %d", FLAGS.train_batch_size)
        dataset = pretraining_dataset(
            input_files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
            FLAGS.train_batch_size, is_training=True)
        if FLAGS.dynamic_masking:
            tokenizer = tokenization.FullTokenizer(FLAGS.vocab_file)
            tokenization.validate_vocab_size(
                tokenizer.vocab, bert_config.vocab_size, FLAGS.vocab_file,
                FLAGS.bert_config_file)
            dataset = dataset.map(DynamicMasking.from_tokenizer(
                tokenizer, FLAGS.max_predictions_per_seq,
                FLAGS.masked_lm_prob), num_parallel_calls=tf.data.AUTOTUNE)
        dataset = dataset.map(split_inputs_and_labels)
        with strategy.scope():
            optimizer = create_optimizer(
                FLAGS.learning_rate, FLAGS.num_train_steps,
                FLAGS.num_warmup_steps, optimizer_type=FLAGS.optimizer_type,
                model=model)
        result = training.run_training(
            model, optimizer, dataset, FLAGS.num_train_steps,
            FLAGS.output_dir, options, FLAGS.train_batch_size,
            strategy=strategy, init_checkpoint=FLAGS.init_checkpoint)
        global_step = result["global_step"]
    else:
        global_step = training.restore_for_inference(
            model, FLAGS.output_dir, FLAGS.init_checkpoint)

    if FLAGS.do_eval:
        logging.info("***** Running evaluation *****")
        logging.info("  Batch size = %d", FLAGS.eval_batch_size)
        dataset = pretraining_dataset(
            input_files, FLAGS.max_seq_length, FLAGS.max_predictions_per_seq,
            FLAGS.eval_batch_size, is_training=False)
        result = evaluate(model, dataset.take(FLAGS.max_eval_steps))
        result["global_step"] = global_step
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])
        if runtime.is_chief(strategy):
            write_key_value_file(
                os.path.join(FLAGS.output_dir, "eval_results.txt"), result)


if __name__ == "__main__":
    for _name in ("bert_config_file", "input_file", "output_dir"):
        flags.mark_flag_as_required(_name)
    app.run(main)
