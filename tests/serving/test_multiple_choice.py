"""Serving a multiple-choice model (bert_tf1/serving/multiple_choice.py,
export_saved_model.py --model_type=multiple_choice).

A context and its endings as raw strings in: the packed ids must be exactly
those of `bert_tf1/data/multiple_choice/features.py` (the original's truncation,
including an ending without tokens), the logits those of the Keras model on
them (within 1e-5), the probabilities their softmax over the choices; an
export reloaded in a fresh process gives the same.
"""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.multiple_choice.features import (
    FEATURE_KEYS, convert_example_to_features)
from bert_tf1.data.multiple_choice.readers import read_examples
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.serving import build_serving_module
from tests.helpers.script_runner import run_script
from tests.helpers.task_checkpoints import write_multiple_choice_checkpoint
from tests.serving.test_export import run_signature

TOLERANCE = 1e-5
FIXTURE = "tf1_vocab_mrpc_classifier"
MAX_SEQ_LENGTH = 24   # short: most rows are truncated

EXTRA = [
    MultipleChoiceExample("long-context", " ".join(["The context goes on."] * 9),
                          ["short", "", "A much longer ending that needs "
                           "truncation as well, with punctuation!", "ok ok"]),
    MultipleChoiceExample("long-endings", "Hi.",
                          ["word " * 40, "Another, even longer, ending " * 5,
                           "x", "日本語のテキスト"]),
]


@pytest.fixture(scope="module")
def choice_dir(fixtures_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("choice_output_dir")
    write_multiple_choice_checkpoint(fixtures_dir / FIXTURE, folder, seed=2,
                                     scale=3.0)
    return folder


@pytest.fixture(scope="module")
def module(fixtures_dir, choice_dir):
    fixture = fixtures_dir / FIXTURE
    return build_serving_module(
        "multiple_choice", bert_config_file=str(fixture / "bert_config.json"),
        vocab_file=str(fixture / "vocab.txt"), init_checkpoint=str(choice_dir),
        do_lower_case=True, max_seq_length=MAX_SEQ_LENGTH)


@pytest.fixture(scope="module")
def examples(data_dir):
    swag = read_examples(data_dir / "multiple_choice" / "swag" / "swag.csv",
                         "swag")
    return swag + EXTRA


@pytest.mark.slow
def test_served_choices_equal_the_python_features(module, examples,
                                                  fixtures_dir):
    tokenizer = FullTokenizer(str(fixtures_dir / FIXTURE / "vocab.txt"), True)
    features = [convert_example_to_features(e, MAX_SEQ_LENGTH, tokenizer)
                for e in examples]
    arrays = {key: np.asarray([getattr(f, key) for f in features], np.int32)
              for key in FEATURE_KEYS}
    assert arrays["input_mask"][:, :, -1].any()       # truncated rows
    assert (arrays["input_mask"].sum(-1) < MAX_SEQ_LENGTH).any()
    outputs = module.multiple_choice(
        context=tf.constant([e.context for e in examples]),
        endings=tf.constant([e.endings for e in examples]))
    for key in ("input_ids", "input_mask", "segment_ids"):
        np.testing.assert_array_equal(outputs[key].numpy(), arrays[key])
    # The empty ending packs as one segment: [CLS] context [SEP], no B.
    row = arrays["segment_ids"][len(examples) - 2, 1]
    assert not row.any()

    expected = np.asarray(module.model(arrays, training=False))
    np.testing.assert_allclose(outputs["logits"].numpy(), expected, rtol=0,
                               atol=TOLERANCE)
    probabilities = np.exp(expected - expected.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    np.testing.assert_allclose(outputs["probabilities"].numpy(), probabilities,
                               rtol=0, atol=TOLERANCE)
    np.testing.assert_array_equal(outputs["choice"].numpy(),
                                  expected.argmax(-1))
    assert len(set(outputs["choice"].numpy())) > 1

    ids = module.multiple_choice_ids(
        **{key: tf.constant(arrays[key]) for key in arrays})
    np.testing.assert_allclose(ids["logits"].numpy(), expected, rtol=0,
                               atol=TOLERANCE)


@pytest.mark.slow
def test_any_number_of_choices(module, examples):
    two = module.multiple_choice(
        context=tf.constant([examples[0].context]),
        endings=tf.constant([examples[0].endings[:2]]))
    four = module.multiple_choice(
        context=tf.constant([examples[0].context]),
        endings=tf.constant([examples[0].endings]))
    assert two["probabilities"].shape == (1, 2)
    np.testing.assert_allclose(two["logits"].numpy()[0],
                               four["logits"].numpy()[0, :2], rtol=0,
                               atol=TOLERANCE)


@pytest.mark.slow
def test_export_reloaded_in_a_fresh_process_gives_the_same(
        fixtures_dir, choice_dir, module, examples, tmp_path):
    fixture = fixtures_dir / FIXTURE
    export_dir = tmp_path / "choice_export"
    run_script("export_saved_model.py", {
        "model_type": "multiple_choice", "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": choice_dir, "max_seq_length": MAX_SEQ_LENGTH,
        "export_dir": export_dir})
    inputs = {"context": [e.context for e in examples[:5]],
              "endings": [e.endings for e in examples[:5]]}
    served = run_signature(export_dir, "multiple_choice", tmp_path, **inputs)
    expected = module.multiple_choice(
        **{key: tf.constant(value) for key, value in inputs.items()})
    assert sorted(served) == sorted(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(served[key], value.numpy(), rtol=0,
                                   atol=TOLERANCE, err_msg=key)


def test_export_refuses_a_checkpoint_of_another_model(fixtures_dir):
    fixture = fixtures_dir / FIXTURE
    with pytest.raises(ValueError, match="cls/multiple_choice/output_weights"):
        build_serving_module(
            "multiple_choice", bert_config_file=str(fixture / "bert_config.json"),
            vocab_file=str(fixture / "vocab.txt"),
            init_checkpoint=str(fixture))
