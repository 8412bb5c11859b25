"""bert_tf1.serving.export_model: a task model fine-tuned in Python, exported with
its preprocessor in one line, serves raw text with the model's logits."""
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the exports' tokenizer ops)

from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.modeling import BertClassifier, BertModel
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.serving import export_model

TEXTS_A = ["The cat sat on the mat.", "He said so, twice!", "Paris is big.",
           "A completely unrelated sentence about tokens.", "Yes", "No way"]
TEXTS_B = ["A cat was on the mat.", "He said it once.", "Paris is large.",
           "Tokens are pieces.", "yes", "no"]


@pytest.mark.slow  # fine-tunes 3 steps, writes a SavedModel: ~30-60 s
def test_fine_tuned_classifier_serves_its_logits(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    model = BertClassifier.from_checkpoint(
        fixture, preprocessor=BertPreprocessor.from_checkpoint(
            fixture, sequence_length=32))
    pairs = (np.array(TEXTS_A), np.array(TEXTS_B))
    before = model.predict(pairs, verbose=0)
    model.compile(optimizer=create_optimizer(1e-3, 3, 0))
    model.fit(pairs, np.array([1, 0, 1, 0, 1, 0]), batch_size=2, epochs=1,
              verbose=0)
    export_dir = export_model(model, tmp_path / "export")

    expected = model.predict(pairs, verbose=0)
    assert np.abs(expected - before).max() > 1e-3  # training changed it
    served = tf.saved_model.load(export_dir).signatures["classify_pair"](
        text_a=tf.constant(TEXTS_A), text_b=tf.constant(TEXTS_B))
    np.testing.assert_allclose(served["logits"].numpy(), expected, rtol=0,
                               atol=1e-6)
    assert [label.decode() for label in served["label"].numpy()] == [
        str(i) for i in expected.argmax(-1)]


def test_export_model_needs_a_preprocessor_and_a_known_model(fixtures_dir,
                                                            tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    model = BertClassifier.from_checkpoint(fixture)
    with pytest.raises(ValueError, match="needs a BertPreprocessor"):
        export_model(model, tmp_path / "a")
    with pytest.raises(ValueError, match="Cannot export a BertPreprocessor"):
        export_model(BertPreprocessor(fixture / "vocab.txt"), tmp_path / "b")
    encoder = BertModel.from_checkpoint(fixture)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        export_model(encoder, tmp_path / "c", preprocessor=BertPreprocessor(
            fixture / "vocab.txt", sequence_length=4096))
    assert not any(tmp_path.iterdir())
