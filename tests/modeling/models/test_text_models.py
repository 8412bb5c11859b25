"""Task models built with `preprocessor=` train and predict on raw text
(the Hugging Face TF user's snippet, in our names), and a `.keras` file
holding the preprocessor reloads in a fresh process."""
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.modeling import BertClassifier, BertMultipleChoice

TEXTS = np.array(["a good movie", "a bad movie", "great fun, really",
                  "awful acting"])
LABELS = np.array([1, 0, 1, 0])


@pytest.fixture(scope="module")
def path(fixtures_dir):
    return str(fixtures_dir / "tf1_vocab_mrpc_classifier")


@pytest.fixture(scope="module")
def preprocessor(path):
    return BertPreprocessor.from_checkpoint(path, sequence_length=16)


def test_hugging_face_snippet_in_our_names(path):
    """TFBertForSequenceClassification.from_pretrained + compile + fit(
    class_weight=) as six lines (the dataset from texts included)."""
    texts, labels = TEXTS, LABELS
    # --- the snippet (docs/coming_from_hugging_face.md) ---
    model = BertClassifier.from_checkpoint(
        path, num_labels=2, preprocessor=BertPreprocessor.from_checkpoint(path))
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True), metrics=["accuracy"])
    history = model.fit(texts, labels, epochs=2, batch_size=2,
                        class_weight={0: 1.0, 1: 3.0})
    # ---
    assert len(history.history["loss"]) == 2
    assert np.all(np.isfinite(history.history["loss"]))
    assert set(history.history) == {"loss", "accuracy"}


def test_predict_on_text_equals_predict_on_ids(path, preprocessor):
    model = BertClassifier.from_checkpoint(path, preprocessor=preprocessor)
    ids = {key: np.asarray(value) for key, value in
           preprocessor(list(TEXTS)).items()}
    from_text = model.predict(TEXTS, batch_size=3, verbose=0)
    np.testing.assert_allclose(from_text, model.predict(ids, verbose=0),
                               atol=1e-6)
    pairs = model.predict((TEXTS, TEXTS[::-1]), verbose=0)
    pair_ids = {key: np.asarray(value) for key, value in preprocessor(
        (list(TEXTS), list(TEXTS[::-1]))).items()}
    np.testing.assert_allclose(pairs, model(pair_ids), atol=1e-6)
    # evaluate on text, with the default (original) loss
    model.compile(optimizer="sgd")
    loss = model.evaluate(TEXTS, LABELS, verbose=0)
    assert np.isfinite(loss) and loss > 0


@pytest.mark.slow  # a second Python process imports TensorFlow
def test_keras_file_with_preprocessor_reloads_in_a_fresh_process(
        path, preprocessor, tmp_path, repo_root):
    model = BertClassifier.from_checkpoint(path, preprocessor=preprocessor)
    expected = model.predict(TEXTS, verbose=0)
    saved = tmp_path / "model.keras"
    model.save(saved)
    loaded = keras.models.load_model(saved)
    assert loaded.preprocessor.get_config() == preprocessor.get_config()
    np.testing.assert_array_equal(loaded.predict(TEXTS, verbose=0), expected)
    code = (
        "import sys, keras, numpy as np\n"
        "import bert_tf1.modeling, bert_tf1.data.tokenization.preprocessor\n"
        "model = keras.models.load_model(sys.argv[1])\n"
        "np.save(sys.argv[2], model.predict(np.array(sys.argv[3:]), "
        "verbose=0))\n")
    process = subprocess.run(
        [sys.executable, "-c", code, str(saved), str(tmp_path / "out.npy"),
         *TEXTS], cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo_root),
             "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2",
             "TF_ENABLE_ONEDNN_OPTS": os.environ.get(
                 "TF_ENABLE_ONEDNN_OPTS", "1")})
    assert process.returncode == 0, process.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected,
                               atol=1e-6)


def test_multiple_choice_fits_on_ids_with_class_weight(path):
    """class_weight on BertMultipleChoice through fit (ids, no text)."""
    model = BertMultipleChoice.from_checkpoint(path)
    ids = BertPreprocessor.from_checkpoint(path, sequence_length=8)(
        (list(TEXTS), list(TEXTS[::-1])))
    x = {key: np.asarray(value).reshape(2, 2, 8) for key, value in
         ids.items()}
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    history = model.fit(x, np.array([0, 1]), class_weight={0: 0.0, 1: 0.0},
                        verbose=0)
    assert history.history["loss"] == [0.0]
