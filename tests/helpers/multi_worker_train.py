"""Worker process for tests/modeling/training/test_multi_worker.py: trains the tiny classifier.

Run with TF_CONFIG set (one worker of a cluster) or without (one process).
The model is the tiny fixture classifier with all dropout off, so that one
process on the whole global batch and two workers on half of it each take
the same steps. Writes `predictions.npy` (logits of the first training batch,
predicted on this worker alone after training) into the folder
`runtime.worker_output_dir` gives it.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
from absl import logging  # noqa: E402

from bert_tf1.modeling.training import runtime  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--fixture_dir", required=True)
    parser.add_argument("--seq_length", type=int, default=16)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--num_train_steps", type=int, default=4)
    parser.add_argument("--strategy", default="one_device")
    parser.add_argument("--use_xla", action="store_true")
    parser.add_argument("--logical_cpus", type=int, default=1)
    parser.add_argument("--save_checkpoints_steps", type=int, default=2)
    args = parser.parse_args()
    logging.set_verbosity(logging.INFO)
    if args.logical_cpus > 1:
        import tensorflow as tf
        tf.config.set_logical_device_configuration(
            tf.config.list_physical_devices("CPU")[0],
            [tf.config.LogicalDeviceConfiguration()] * args.logical_cpus)

    options = runtime.RuntimeOptions(
        distribution_strategy=args.strategy,
        save_checkpoints_steps=args.save_checkpoints_steps,
        keep_checkpoint_max=3, use_xla=args.use_xla)
    strategy = runtime.setup(options)  # first: before any other TF work
    if not runtime.is_multi_worker(strategy):
        # The global seed a multi-worker setup sets, so that the seeded
        # shuffle gives the same global batches here.
        import tensorflow as tf
        tf.random.set_seed(runtime.MULTI_WORKER_SEED)

    from bert_tf1.data.glue.features import classifier_dataset
    from bert_tf1.modeling import BertClassifier, BertConfig
    from bert_tf1.modeling.optimization import create_optimizer
    from bert_tf1.modeling.training import predict, run_training

    config = BertConfig.from_dict(dict(
        BertConfig.from_json_file(
            os.path.join(args.fixture_dir, "bert_config.json")).to_dict(),
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    with strategy.scope():
        model = BertClassifier(config, num_labels=3)
        model.dropout.rate = 0.0  # the head's fixed 0.1 (run_classifier's) too
        optimizer = create_optimizer(
            1e-3, args.num_train_steps, 1, optimizer_type=options.optimizer,
            gradient_accumulation_steps=options.gradient_accumulation_steps)
    dataset = classifier_dataset(
        args.train_file, args.seq_length, True, args.batch_size, seed=7).map(
            lambda features, labels, weights: (features, labels))
    result = run_training(model, optimizer, dataset, args.num_train_steps,
                          args.output_dir, options, args.batch_size,
                          strategy=strategy, init_checkpoint=args.fixture_dir,
                          verbose=0)
    logging.info("result: %s", result)
    features = classifier_dataset(args.train_file, args.seq_length, False,
                                  args.batch_size).map(lambda f, l, w: f)
    with runtime.worker_output_dir(strategy, args.output_dir) as folder:
        np.save(os.path.join(folder, "predictions.npy"),
                predict(model, features.take(1), strategy))


if __name__ == "__main__":
    from bert_tf1.modeling.training.preemption import TrainingInterrupted

    try:
        main()
    except TrainingInterrupted as stopped:  # As the scripts report it.
        print(f"STOPPED: {stopped}", flush=True)
        sys.exit(stopped.exit_status)
