"""Int8 (and bf16) against fp32 on every dev example of a fine-tuned classifier.

    TF_ENABLE_ONEDNN_OPTS=1 python benchmarks/int8_accuracy.py \
        --trained_dir=/tmp/bert_main --data_dir=../shared/data

`--trained_dir` is the `--output_dir` of a `run_classifier.py` fine-tuning run
(e.g. `bash run_main.sh`: SST-2, the small config, max_seq_length 64); its
newest checkpoint is evaluated on all dev examples three ways: the float32
model, `bert_tf1.modeling.inference.int8.quantize_int8(model)` and
`bert_tf1.modeling.inference.copies.bfloat16_inference_copy(model)`. Prints accuracy,
the share of examples whose predicted label equals the float32 one, and the
largest logit difference. Features are written to a temporary folder, not
into `--trained_dir`.
"""
import argparse
import os
import sys
import tempfile

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")  # int8 kernels (oneDNN)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bert_tf1.modeling.inference.copies import bfloat16_inference_copy  # noqa: E402
from bert_tf1.modeling.inference.int8 import quantize_int8  # noqa: E402
from bert_tf1.modeling.training import RuntimeOptions  # noqa: E402
from bert_tf1.tasks import ClassificationConfig, ClassificationTask  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _logits(call, dataset):
    return np.concatenate([np.asarray(call(x), np.float32)
                           for x, _, _ in dataset], axis=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trained_dir", required=True)
    parser.add_argument("--data_dir", default=os.path.join(REPO, "..", "shared", "data"))
    parser.add_argument("--task_name", default="SST-2")
    parser.add_argument("--bert_config_file", default=os.path.join(
        REPO, "configs", "bert_tiny_from_scratch.json"))
    parser.add_argument("--max_seq_length", type=int, default=64)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args(argv)
    checkpoint = tf.train.latest_checkpoint(args.trained_dir)
    if checkpoint is None:
        sys.exit(f"--trained_dir={args.trained_dir}: no checkpoint there.")
    with tempfile.TemporaryDirectory() as output_dir:
        task = ClassificationTask(ClassificationConfig(
            task_name=args.task_name,
            data_dir=os.path.join(args.data_dir, "glue", args.task_name),
            vocab_file=os.path.join(args.data_dir, "bert_models",
                                    "uncased_L-12_H-768_A-12", "vocab.txt"),
            bert_config_file=args.bert_config_file, init_checkpoint=checkpoint,
            max_seq_length=args.max_seq_length, eval_batch_size=args.batch_size,
            output_dir=output_dir, do_eval=True, dynamic_padding=False,
            runtime=RuntimeOptions()))
        task.prepare()
        task.restore_weights()
        with task.worker_folder() as folder:
            examples, count = task.inference_examples("eval", args.batch_size)
            dataset, _ = task.make_dataset("eval", examples, folder,
                                           args.batch_size)
            labels = np.concatenate([y.numpy() for _, y, _ in dataset])
            model = task.model
            fp32 = _logits(tf.function(lambda x: model(x, training=False)), dataset)
            int8 = _logits(quantize_int8(model), dataset)
            bf16_model = bfloat16_inference_copy(model)
            bf16 = _logits(tf.function(lambda x: bf16_model(x, training=False)), dataset)
    print(f"{args.task_name} dev, {count} examples, checkpoint {checkpoint}")
    print("| model | accuracy | labels equal to fp32 | max abs logit diff |")
    print("|---|---:|---:|---:|")
    for name, logits in (("fp32", fp32), ("int8", int8), ("bf16", bf16)):
        predicted = logits.argmax(-1)
        print(f"| {name} | {100 * (predicted == labels).mean():.2f}% "
              f"| {100 * (predicted == fp32.argmax(-1)).mean():.2f}% "
              f"| {np.abs(logits - fp32).max():.4f} |")


if __name__ == "__main__":
    main()
