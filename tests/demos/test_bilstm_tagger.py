"""demos/ner/bilstm_tagger.py: the NER demo's no-BERT baseline, against the
NumPy BiLSTM of tests/modeling/models/test_tagger.py; its .keras round trip."""
import keras
import numpy as np

from demos.ner.bilstm_tagger import WordPieceBiLSTMTagger
from bert_tf1.modeling.naming import tf1_name
from tests.modeling.models.test_tagger import (CONFIG, NUM_LABELS, UNITS,
                                               head_names, make_inputs,
                                               numpy_head)


def test_wordpiece_bilstm_baseline():
    model = WordPieceBiLSTMTagger(CONFIG, NUM_LABELS, lstm_units=UNITS)
    shapes = {tf1_name(w): tuple(w.shape) for w in model.weights}
    assert sorted(shapes) == sorted(["wordpiece_bilstm/embeddings"]
                                    + head_names())
    assert shapes["wordpiece_bilstm/embeddings"] == (50, 8)
    inputs = make_inputs(seed=3)
    table = model.embeddings.embeddings.numpy()
    expected = numpy_head(model.head, table[inputs["input_ids"]],
                          inputs["input_mask"])
    logits = np.asarray(model(inputs, training=False))
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    # Segment ids are not read.
    other = dict(inputs, segment_ids=np.ones_like(inputs["segment_ids"]))
    assert np.array_equal(np.asarray(model(other, training=False)), logits)



def test_keras_round_trip_is_exact(tmp_path):
    model = WordPieceBiLSTMTagger(CONFIG, NUM_LABELS, lstm_units=UNITS)
    inputs = make_inputs(seed=4)
    expected = np.asarray(model(inputs, training=False))
    model.save(tmp_path / "tagger.keras")
    loaded = keras.models.load_model(tmp_path / "tagger.keras")
    assert type(loaded) is type(model)
    assert loaded.get_config() == model.get_config()
    assert [tf1_name(w) for w in loaded.weights] == [
        tf1_name(w) for w in model.weights]
    assert np.array_equal(np.asarray(loaded(inputs, training=False)),
                          expected)
