"""bert_tf1/modeling/inference/copies.py: the bfloat16 copy keeps names, rounds values."""
import ml_dtypes
import numpy as np

from bert_tf1.modeling import BertClassifier, BertConfig
from bert_tf1.modeling.inference.copies import bfloat16_inference_copy
from bert_tf1.modeling.naming import tf1_name


def test_copy_has_the_same_tf1_names_and_rounded_values():
    config = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=24,
                        max_position_embeddings=16, type_vocab_size=2)
    model = BertClassifier(config, num_labels=2)
    copy = bfloat16_inference_copy(model)
    source = {tf1_name(w): np.asarray(w.numpy(), np.float32) for w in model.weights}
    copied = {tf1_name(w): w for w in copy.weights}
    assert sorted(copied) == sorted(source)
    for name, weight in copied.items():
        assert weight.dtype == "bfloat16", name
        expected = source[name].astype(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(
            np.asarray(weight.numpy()).astype(np.float32), expected, err_msg=name)
    ids = np.random.default_rng(0).integers(1, 40, (3, 10)).astype("int32")
    inputs = {"input_ids": ids, "input_mask": np.ones_like(ids),
              "segment_ids": np.zeros_like(ids)}
    reference = model(inputs, training=False).numpy()
    logits = np.asarray(copy(inputs, training=False), np.float32)
    assert logits.shape == reference.shape
    # bfloat16 keeps 8 significant bits: a few percent of the logits' scale.
    assert np.abs(logits - reference).max() < 0.05 * np.abs(reference).max() + 1e-3
