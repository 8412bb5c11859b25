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
training from the newest checkpoint in `output_dir`.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import random  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from data.squad import evaluate as squad_evaluate
from data.tokenization import full_tokenizer as tokenization  # noqa: E402
from data.squad.examples import (  # noqa: E402
    load_squad_json, read_squad_examples)
from data.squad.features import (  # noqa: E402
    FeatureWriter, convert_examples_to_features, squad_dataset)
from data.squad.postprocess import (  # noqa: E402
    RawResult, write_json_atomic, write_predictions)
from modeling import BertConfig, BertSquad  # noqa: E402
from modeling import runtime, training  # noqa: E402
from modeling.optimization import create_optimizer  # noqa: E402

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

for _name in ("vocab_file", "bert_config_file", "output_dir"):
    flags.mark_flag_as_required(_name)

# The original's pre-shuffle of the training examples.
TRAIN_SHUFFLE_SEED = 12345


def validate_flags_or_throw(bert_config):
    """The original's checks, with messages that say what to change.

    Raises:
      ValueError: no do_* flag, a missing train/predict file, max_seq_length
        above max_position_embeddings or not above max_query_length + 3, or
        a case flag that contradicts a released checkpoint's name.

    Source: run_squad.py validate_flags_or_throw (+ the case check in main).
    """
    tokenization.validate_case_matches_checkpoint(FLAGS.do_lower_case,
                                                  FLAGS.init_checkpoint)
    if not FLAGS.do_train and not FLAGS.do_predict:
        raise ValueError(
            "At least one of `do_train` or `do_predict` must be True.")
    if FLAGS.do_train and not FLAGS.train_file:
        raise ValueError(
            "If `do_train` is True, then `train_file` must be specified.")
    if FLAGS.do_predict and not FLAGS.predict_file:
        raise ValueError(
            "If `do_predict` is True, then `predict_file` must be specified.")
    if FLAGS.max_seq_length > bert_config.max_position_embeddings:
        raise ValueError(
            "Cannot use sequence length %d because the BERT model was only "
            "trained up to sequence length %d (max_position_embeddings in %s)"
            % (FLAGS.max_seq_length, bert_config.max_position_embeddings,
               FLAGS.bert_config_file))
    if FLAGS.max_seq_length <= FLAGS.max_query_length + 3:
        raise ValueError(
            "The max_seq_length (%d) must be greater than max_query_length "
            "(%d) + 3" % (FLAGS.max_seq_length, FLAGS.max_query_length))
    if FLAGS.doc_stride < 1:
        raise ValueError("doc_stride must be at least 1, got %d"
                         % FLAGS.doc_stride)


def train(model, tokenizer, options, strategy):
    """Reads, shuffles and featurizes train_file, then trains."""
    train_examples = read_squad_examples(
        FLAGS.train_file, is_training=True,
        version_2_with_negative=FLAGS.version_2_with_negative)
    # Steps are counted from examples, not features, as the original.
    num_train_steps = int(
        len(train_examples) / FLAGS.train_batch_size * FLAGS.num_train_epochs)
    num_warmup_steps = int(num_train_steps * FLAGS.warmup_proportion)
    if num_train_steps < 1:
        raise ValueError(
            "%d training examples / train_batch_size %d * num_train_epochs %g "
            "gives no training step." % (len(train_examples),
                                         FLAGS.train_batch_size,
                                         FLAGS.num_train_epochs))
    random.Random(TRAIN_SHUFFLE_SEED).shuffle(train_examples)

    train_file = os.path.join(FLAGS.output_dir, "train.tf_record")
    with FeatureWriter(train_file, is_training=True) as writer:
        convert_examples_to_features(
            examples=train_examples, tokenizer=tokenizer,
            max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
            max_query_length=FLAGS.max_query_length, is_training=True,
            output_fn=writer.process_feature)
    logging.info("***** Running training *****")
    logging.info("  Num orig examples = %d", len(train_examples))
    logging.info("  Num split examples = %d", writer.num_features)
    logging.info("  Batch size = %d", FLAGS.train_batch_size)
    logging.info("  Num steps = %d", num_train_steps)
    del train_examples

    label_keys = ("start_positions", "end_positions")

    def split_labels(batch):
        features = {k: v for k, v in batch.items() if k not in label_keys}
        labels = {k: batch[k] for k in label_keys}
        return features, labels

    dataset = squad_dataset(train_file, FLAGS.max_seq_length,
                            is_training=True,
                            batch_size=FLAGS.train_batch_size).map(
                                split_labels)
    with strategy.scope():
        optimizer = create_optimizer(FLAGS.learning_rate, num_train_steps,
                                     num_warmup_steps)
    training.run_training(
        model, optimizer, dataset, num_train_steps, FLAGS.output_dir,
        options, FLAGS.train_batch_size, strategy=strategy,
        init_checkpoint=FLAGS.init_checkpoint)


def predict(model, tokenizer, chief=True):
    """Featurizes predict_file, runs the model and writes the answers.

    Every worker runs the model (distributed predict needs them all); only
    the chief writes the JSON files.
    """
    eval_examples = read_squad_examples(
        FLAGS.predict_file, is_training=False,
        version_2_with_negative=FLAGS.version_2_with_negative)
    eval_features = []
    eval_file = os.path.join(FLAGS.output_dir, "eval.tf_record")
    with FeatureWriter(eval_file, is_training=False) as writer:
        def append_feature(feature):
            eval_features.append(feature)
            writer.process_feature(feature)

        convert_examples_to_features(
            examples=eval_examples, tokenizer=tokenizer,
            max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
            max_query_length=FLAGS.max_query_length, is_training=False,
            output_fn=append_feature)
    logging.info("***** Running predictions *****")
    logging.info("  Num orig examples = %d", len(eval_examples))
    logging.info("  Num split examples = %d", len(eval_features))
    logging.info("  Batch size = %d", FLAGS.predict_batch_size)

    all_results = []
    if eval_features:
        # drop_remainder=False: every window gets logits.
        dataset = squad_dataset(eval_file, FLAGS.max_seq_length,
                                is_training=False,
                                batch_size=FLAGS.predict_batch_size)
        num_batches = -(-len(eval_features) // FLAGS.predict_batch_size)
        dataset = dataset.apply(
            tf.data.experimental.assert_cardinality(num_batches))
        outputs = model.predict(dataset, verbose=0)
        start_logits = np.asarray(outputs["start_logits"], np.float32)
        end_logits = np.asarray(outputs["end_logits"], np.float32)
        if len(start_logits) != len(eval_features):
            raise RuntimeError("Got %d results for %d features." % (
                len(start_logits), len(eval_features)))
        all_results = [
            RawResult(unique_id=feature.unique_id, start_logits=start,
                      end_logits=end)
            for feature, start, end in zip(eval_features, start_logits,
                                           end_logits)]

    if not chief:
        return
    output_prediction_file = os.path.join(FLAGS.output_dir,
                                          "predictions.json")
    output_nbest_file = os.path.join(FLAGS.output_dir,
                                     "nbest_predictions.json")
    output_null_log_odds_file = os.path.join(FLAGS.output_dir,
                                             "null_odds.json")
    predictions, _, null_odds = write_predictions(
        eval_examples, eval_features, all_results, FLAGS.n_best_size,
        FLAGS.max_answer_length, FLAGS.do_lower_case, output_prediction_file,
        output_nbest_file, output_null_log_odds_file,
        version_2_with_negative=FLAGS.version_2_with_negative,
        null_score_diff_threshold=FLAGS.null_score_diff_threshold,
        verbose_logging=FLAGS.verbose_logging)
    write_eval_results(predictions, null_odds)


def _has_gold_answers(dataset):
    return all(isinstance(qa.get("answers"), list)
               for article in dataset for paragraph in article["paragraphs"]
               for qa in paragraph["qas"])


def write_eval_results(predictions, null_odds):
    """eval_results.json with the official metrics, if answers are known."""
    dataset = load_squad_json(FLAGS.predict_file)
    if not _has_gold_answers(dataset):
        logging.info("%s has no gold answers: no eval_results.json.",
                     FLAGS.predict_file)
        return
    result = squad_evaluate.evaluate(
        dataset, predictions,
        na_probs=null_odds if FLAGS.version_2_with_negative else None)
    logging.info("***** Eval results *****")
    for key, value in result.items():
        logging.info("  %s = %s", key, value)
    write_json_atomic(result, os.path.join(FLAGS.output_dir,
                                           "eval_results.json"))


def main(_):
    logging.set_verbosity(logging.INFO)
    bert_config = BertConfig.from_json_file(FLAGS.bert_config_file)
    validate_flags_or_throw(bert_config)
    tf.io.gfile.makedirs(FLAGS.output_dir)
    tokenizer = tokenization.tokenizer_for_model(
        FLAGS.vocab_file, FLAGS.do_lower_case, bert_config.vocab_size,
        FLAGS.bert_config_file)

    options = runtime.runtime_options_from_flags()
    strategy = runtime.setup(options)
    with strategy.scope():
        model = BertSquad(bert_config)

    if FLAGS.do_train:
        train(model, tokenizer, options, strategy)
    elif FLAGS.do_predict:
        training.restore_for_inference(model, FLAGS.output_dir, FLAGS.init_checkpoint)

    if FLAGS.do_predict:
        predict(model, tokenizer, chief=runtime.is_chief(strategy))


if __name__ == "__main__":
    app.run(main)
