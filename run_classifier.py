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
newest checkpoint in `output_dir`.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from data.tokenization import full_tokenizer as tokenization  # noqa: E402
from data.glue.features import (  # noqa: E402
    classifier_dataset, file_based_convert_examples_to_features)
from data.glue.processors import PaddingInputExample, get_processor  # noqa: E402
from data.glue.metrics import task_metrics  # noqa: E402
from data.io.results import write_key_value_file, write_text_atomically  # noqa: E402
from modeling import BertClassifier, BertConfig  # noqa: E402
from modeling.optimization import create_optimizer  # noqa: E402
from modeling import runtime, training  # noqa: E402

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

for _name in ("data_dir", "task_name", "vocab_file", "bert_config_file",
              "output_dir"):
    flags.mark_flag_as_required(_name)


def check_flags(bert_config):
    """The original's checks, with messages that say what to change.

    Raises:
        ValueError: no do_* flag is set, or `max_seq_length` exceeds the
            model's `max_position_embeddings`, or the case flag contradicts
            a released checkpoint's name.
    """
    tokenization.validate_case_matches_checkpoint(FLAGS.do_lower_case,
                                                  FLAGS.init_checkpoint)
    if not FLAGS.do_train and not FLAGS.do_eval and not FLAGS.do_predict:
        raise ValueError(
            "At least one of `do_train`, `do_eval` or `do_predict' must be True.")
    if FLAGS.max_seq_length > bert_config.max_position_embeddings:
        raise ValueError(
            "Cannot use sequence length %d because the BERT model was only "
            "trained up to sequence length %d (max_position_embeddings in %s)"
            % (FLAGS.max_seq_length, bert_config.max_position_embeddings,
               FLAGS.bert_config_file))


def pad_examples_for_tpu(examples, batch_size, options):
    """On TPU every batch is full: pad with `PaddingInputExample` (weight 0)."""
    examples = list(examples)
    if options.use_tpu:
        while len(examples) % batch_size:
            examples.append(PaddingInputExample())
    return examples


def write_features(examples, label_list, tokenizer, name):
    """Writes `examples` as TFRecord `output_dir/<name>`; returns its path."""
    path = os.path.join(FLAGS.output_dir, name)
    file_based_convert_examples_to_features(
        examples, label_list, FLAGS.max_seq_length, tokenizer, path)
    return path


def inference_dataset(examples, label_list, tokenizer, processor, batch_size,
                      options, file_name, title):
    """Writes eval/predict features and reads them back, every example kept.

    Returns:
        (dataset of (features, label_ids, is_real_example) batches, number of
        real examples before TPU padding).
    """
    num_actual = len(examples)
    examples = pad_examples_for_tpu(examples, batch_size, options)
    path = write_features(examples, label_list, tokenizer, file_name)
    logging.info("***** Running %s *****", title)
    logging.info("  Num examples = %d (%d actual, %d padding)", len(examples),
                 num_actual, len(examples) - num_actual)
    logging.info("  Batch size = %d", batch_size)
    dataset = classifier_dataset(path, FLAGS.max_seq_length, False, batch_size,
                                 is_regression=processor.is_regression)
    return dataset, num_actual


def predict_logits(model, dataset):
    """Logits [N, num_labels], labels [N] and weights [N] of every example.

    Raises:
        RuntimeError: the model returned another number of rows than the
            file holds (they would be paired with the wrong labels).
    """
    logits = np.asarray(model.predict(dataset.map(lambda x, y, w: x), verbose=0),
                        np.float32)
    labels, weights = [], []
    for _, y, w in dataset.as_numpy_iterator():
        labels.append(y)
        weights.append(w)
    labels, weights = np.concatenate(labels), np.concatenate(weights)
    if len(logits) != len(labels):
        raise RuntimeError(f"Got {len(logits)} predictions for {len(labels)} "
                           "examples.")
    return logits, labels, weights


def log_softmax(logits):
    """Row-wise log-softmax of float32 logits [N, num_labels], in NumPy."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def evaluate(model, dataset, processor, global_step):
    """The original's `eval_results.txt` values, computed over every example."""
    logits, labels, weights = predict_logits(model, dataset)
    batch_size = FLAGS.eval_batch_size
    if processor.is_regression:
        scores = logits[:, 0]
        per_example_loss = np.square(scores - labels)
    else:
        log_probs = log_softmax(logits)
        per_example_loss = -log_probs[np.arange(len(labels)), labels]
    total = weights.sum()
    result = {
        "eval_loss": float((per_example_loss * weights).sum() / total),
        "global_step": global_step,
        # The Estimator's `loss`: the mean over eval batches of each batch's
        # mean loss.
        "loss": float(np.mean([
            per_example_loss[i:i + batch_size].mean()
            for i in range(0, len(per_example_loss), batch_size)])),
    }
    if not processor.is_regression:
        predictions = logits.argmax(-1)
        result["eval_accuracy"] = float(
            ((predictions == labels) * weights).sum() / total)
    result.update(task_metrics(FLAGS.task_name, logits, labels, weights))
    return result


def write_test_results(model, dataset, processor, num_actual):
    """Writes `test_results.tsv`: per real example, the class probabilities
    (or the regression score) as the original's `str(float32)`, tab-separated."""
    logits, _, _ = predict_logits(model, dataset)
    if processor.is_regression:
        rows = logits[:num_actual, :1]
    else:
        rows = np.exp(log_softmax(logits))[:num_actual]
    lines = ["\t".join(str(np.float32(value)) for value in row) + "\n"
             for row in rows]
    path = os.path.join(FLAGS.output_dir, "test_results.tsv")
    write_text_atomically(path, "".join(lines))
    logging.info("Wrote %d predictions to %s", len(lines), path)


def main(_):
    logging.set_verbosity(logging.INFO)
    bert_config = BertConfig.from_json_file(FLAGS.bert_config_file)
    check_flags(bert_config)
    tf.io.gfile.makedirs(FLAGS.output_dir)

    processor = get_processor(FLAGS.task_name)
    label_list = processor.get_labels()
    num_labels = 1 if processor.is_regression else len(label_list)
    tokenizer = tokenization.tokenizer_for_model(
        FLAGS.vocab_file, FLAGS.do_lower_case, bert_config.vocab_size,
        FLAGS.bert_config_file)

    options = runtime.runtime_options_from_flags()
    strategy = runtime.setup(options)
    with strategy.scope():
        model = BertClassifier(bert_config, num_labels)

    global_step = 0
    if FLAGS.do_train:
        train_examples = processor.get_train_examples(FLAGS.data_dir)
        num_train_steps = int(
            len(train_examples) / FLAGS.train_batch_size * FLAGS.num_train_epochs)
        num_warmup_steps = int(num_train_steps * FLAGS.warmup_proportion)
        train_file = write_features(train_examples, label_list, tokenizer,
                                    "train.tf_record")
        logging.info("***** Running training *****")
        logging.info("  Num examples = %d", len(train_examples))
        logging.info("  Batch size = %d", FLAGS.train_batch_size)
        logging.info("  Num steps = %d", num_train_steps)
        dataset = classifier_dataset(
            train_file, FLAGS.max_seq_length, True, FLAGS.train_batch_size,
            is_regression=processor.is_regression).map(
                lambda features, labels, weights: (features, labels))
        with strategy.scope():
            optimizer = create_optimizer(FLAGS.learning_rate, num_train_steps,
                                         num_warmup_steps)
        result = training.run_training(
            model, optimizer, dataset, num_train_steps, FLAGS.output_dir,
            options, FLAGS.train_batch_size, strategy=strategy,
            init_checkpoint=FLAGS.init_checkpoint)
        global_step = result["global_step"]
    elif FLAGS.do_eval or FLAGS.do_predict:
        global_step = training.restore_for_inference(
            model, FLAGS.output_dir, FLAGS.init_checkpoint)

    chief = runtime.is_chief(strategy)
    if FLAGS.do_eval:
        dataset, _ = inference_dataset(
            processor.get_dev_examples(FLAGS.data_dir), label_list, tokenizer,
            processor, FLAGS.eval_batch_size, options, "eval.tf_record",
            "evaluation")
        result = evaluate(model, dataset, processor, global_step)
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])
        if chief:
            write_key_value_file(
                os.path.join(FLAGS.output_dir, "eval_results.txt"), result)

    if FLAGS.do_predict:
        dataset, num_actual = inference_dataset(
            processor.get_test_examples(FLAGS.data_dir), label_list, tokenizer,
            processor, FLAGS.predict_batch_size, options, "predict.tf_record",
            "prediction")
        if chief:
            write_test_results(model, dataset, processor, num_actual)

if __name__ == "__main__":
    app.run(main)
