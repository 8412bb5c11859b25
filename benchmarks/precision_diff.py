"""How far bf16 and int8 outputs are from float32 (and from the original's fixtures).

    TF_ENABLE_ONEDNN_OPTS=1 python benchmarks/precision_diff.py [--base_config=...]

For every fixture classifier/SQuAD/pretraining model in `../shared/fixtures`
(loaded from its original TF1 checkpoint) and for a random-weight BERT-Base
encoder (8 x 128 random ids), prints the max abs difference of
`sequence_output` and `pooled_output` from the reference (the fixture's
original outputs; for BERT-Base our own float32 run) for: float32,
`mixed_bfloat16` (float32 weights, bfloat16 compute), the bfloat16 copy
(`bert_tf1.modeling.inference.copies`) and int8 (`bert_tf1.modeling.inference.int8`).
"""
import argparse
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, REPO)

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bert_tf1.modeling import BertConfig, BertModel, checkpoints  # noqa: E402
from bert_tf1.modeling.inference.copies import bfloat16_inference_copy  # noqa: E402
from bert_tf1.modeling.inference.int8 import quantize_int8  # noqa: E402
from tests.helpers.fixture_models import (INPUT_KEYS, build_model,  # noqa: E402
                                  reference_outputs)

KEYS = ("sequence_output", "pooled_output")


def _encoder_outputs(call, inputs):
    outputs = call(inputs)
    return {key: np.asarray(outputs[key], np.float32) for key in KEYS}


def variants(encoder, inputs):
    """{name: {key: float32 array}} of the encoder's outputs per precision."""
    results = {"fp32": _encoder_outputs(
        tf.function(lambda x: encoder(x, training=False)), inputs)}
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        mixed = BertModel(encoder.config)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for target, source in zip(mixed.weights, encoder.weights):
        target.assign(source)
    results["mixed_bf16"] = _encoder_outputs(
        tf.function(lambda x: mixed(x, training=False)), inputs)
    copy = bfloat16_inference_copy(encoder)
    results["bf16_copy"] = _encoder_outputs(
        tf.function(lambda x: copy(x, training=False)), inputs)
    results["int8"] = _encoder_outputs(quantize_int8(encoder), inputs)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures_dir", default=os.path.join(REPO, "..", "shared", "fixtures"))
    parser.add_argument("--base_config", default=os.path.join(
        REPO, "..", "shared", "data", "bert_models", "uncased_L-12_H-768_A-12",
        "bert_config.json"))
    args = parser.parse_args(argv)
    print("| model | reference | variant | max abs sequence_output | "
          "max abs pooled_output |")
    print("|---|---|---|---:|---:|")
    for name in ("tf1_tiny_classifier", "tf1_tiny_squad", "tf1_tiny_pretraining",
                 "tf1_vocab_mrpc_classifier"):
        fixture_dir = __import__("pathlib").Path(args.fixtures_dir) / name
        model = build_model(fixture_dir)
        checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
        reference = reference_outputs(fixture_dir)
        inputs = {key: tf.constant(reference[key]) for key in INPUT_KEYS}
        for variant, outputs in variants(model.bert, inputs).items():
            cells = [f"{np.abs(outputs[k] - reference[k]).max():.2e}" for k in KEYS]
            print(f"| {name} | original | {variant} | {cells[0]} | {cells[1]} |",
                  flush=True)
    config = BertConfig.from_json_file(args.base_config)
    rng = np.random.default_rng(0)
    inputs = {"input_ids": tf.constant(rng.integers(
                  1, config.vocab_size, (8, 128)).astype("int32")),
              "input_mask": tf.ones((8, 128), tf.int32),
              "segment_ids": tf.zeros((8, 128), tf.int32)}
    results = variants(BertModel(config), inputs)
    for variant, outputs in results.items():
        cells = [f"{np.abs(outputs[k] - results['fp32'][k]).max():.2e}" for k in KEYS]
        print(f"| BERT-Base random | our fp32 | {variant} | {cells[0]} | {cells[1]} |",
              flush=True)


if __name__ == "__main__":
    main()
