"""bert_tf1.compat.BertModel: the original modeling.BertModel's calls and
getters give the original code's outputs (shared/fixtures'
reference_outputs.npz)."""
import numpy as np
import pytest

from bert_tf1 import compat
from bert_tf1.modeling import BertConfig, BertModel, checkpoints


@pytest.fixture(scope="module")
def tiny(fixtures_dir):
    return fixtures_dir / "tf1_tiny_classifier"


def test_getters_match_the_original(tiny):
    reference = np.load(tiny / "reference_outputs.npz")
    config = BertConfig.from_json_file(tiny / "bert_config.json")
    encoder = BertModel(config)
    checkpoints.load_tf1_checkpoint(encoder, tiny / "bert_model.ckpt",
                                    verbose=False)
    model = compat.BertModel(
        config=config, is_training=False,
        input_ids=reference["input_ids"], input_mask=reference["input_mask"],
        token_type_ids=reference["segment_ids"],
        use_one_hot_embeddings=True, encoder=encoder)
    for got, name in ((model.get_pooled_output(), "pooled_output"),
                      (model.get_sequence_output(), "sequence_output"),
                      (model.get_embedding_output(), "embedding_output")):
        np.testing.assert_allclose(got, reference[name], atol=1e-5,
                                   err_msg=name)
    layers = model.get_all_encoder_layers()
    assert len(layers) == config.num_hidden_layers
    for index, layer in enumerate(layers):
        np.testing.assert_allclose(layer, reference[f"encoder_layer_{index}"],
                                   atol=1e-5)
    table = model.get_embedding_table()
    assert tuple(table.shape) == (config.vocab_size, config.hidden_size)
    assert table.path.endswith("bert/embeddings/word_embeddings")


def test_is_training_applies_dropout(tiny):
    config = BertConfig.from_json_file(tiny / "bert_config.json")
    ids = np.array([[5, 6, 7, 8]], np.int32)
    encoder = BertModel(config)
    quiet = compat.BertModel(config, False, ids, encoder=encoder)
    again = compat.BertModel(config, False, ids, encoder=encoder)
    noisy = compat.BertModel(config, True, ids, encoder=encoder)
    np.testing.assert_array_equal(quiet.get_sequence_output(),
                                  again.get_sequence_output())
    assert not np.allclose(quiet.get_sequence_output(),
                           noisy.get_sequence_output())
