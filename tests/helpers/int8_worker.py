"""Run by tests/modeling/inference/test_int8.py in a process with oneDNN on.

    TF_ENABLE_ONEDNN_OPTS=1 python tests/helpers/int8_worker.py

Prints one JSON object: the oneDNN int8 matmul's products against NumPy's
integer matmul, and a small classifier's int8 logits against its float32 ones.
"""
import json
import os
import sys

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from modeling import BertClassifier, BertConfig, BertModel  # noqa: E402
from modeling.inference import int8 as int8_inference  # noqa: E402


def main():
    result = {"onednn": int8_inference.onednn_enabled()}
    rng = np.random.default_rng(0)
    # Worst case for saturation: every code 127, every weight +-127.
    codes = np.full((5, 96), 127, np.uint8)
    codes[1:] = rng.integers(0, 128, (4, 96))
    kernel = rng.choice(np.array([-127, 127], np.int8), (96, 7))
    kernel[:, 3] = rng.integers(-127, 128, 96)
    products = tf.function(lambda c: int8_inference._int8_matmul(c, kernel))(
        tf.constant(codes))
    expected = codes.astype(np.int64) @ kernel.astype(np.int64)
    result["products_max_error"] = float(np.abs(products.numpy() - expected).max())

    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=48,
                        max_position_embeddings=40, type_vocab_size=2)
    classifier = BertClassifier(config, num_labels=3)
    ids = rng.integers(1, 64, (4, 20)).astype("int32")
    mask = np.ones_like(ids)
    mask[2, 12:] = 0
    inputs = {"input_ids": tf.constant(ids), "input_mask": tf.constant(mask),
              "segment_ids": tf.constant((np.arange(20) >= 10).astype("int32")[None]
                                         .repeat(4, 0))}
    fp32 = classifier(inputs, training=False).numpy()
    int8_module = int8_inference.quantize_int8(classifier)
    int8 = int8_module(inputs).numpy()
    result["classifier_max_error"] = float(np.abs(fp32 - int8).max())
    result["classifier_scale"] = float(np.abs(fp32).max())
    result["num_labels"] = int8_module.num_labels
    encoder = BertModel(config)
    reference = encoder(inputs, training=False)
    quantized = int8_inference.quantize_int8(encoder)(inputs)
    result["sequence_max_error"] = float(np.abs(
        reference["sequence_output"].numpy() - quantized["sequence_output"].numpy()).max())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
