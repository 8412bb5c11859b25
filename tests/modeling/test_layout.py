"""Our weights carry exactly the names and shapes of Google's released checkpoints."""
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertConfig, BertModel, BertPretrainer, checkpoints
from bert_tf1.modeling.naming import tf1_name


@pytest.mark.parametrize("model_dir", ["chinese_L-12_H-768_A-12", "uncased_L-4_H-256_A-4"])
def test_pretrainer_names_and_shapes_equal_released_index(data_dir, model_dir):
    folder = data_dir / "bert_models" / model_dir
    config = BertConfig.from_json_file(folder / "bert_config.json")
    model = BertPretrainer(config)
    ours = {tf1_name(v): list(v.shape) for v in model.weights}
    released = dict(tf.train.list_variables(str(folder / "bert_model.ckpt")))
    assert ours == released
    expected_count = 5 + 16 * config.num_hidden_layers + 2 + 7
    assert len(ours) == expected_count
    if model_dir.startswith("chinese"):
        assert expected_count == 206


def test_encoder_has_199_bert_weights_for_base(data_dir):
    config = BertConfig.from_json_file(
        data_dir / "bert_models/uncased_L-12_H-768_A-12/bert_config.json")
    model = BertModel(config)
    names = [tf1_name(v) for v in model.weights]
    assert len(names) == len(set(names)) == 199
    assert all(name.startswith("bert/") for name in names)
    assert model.count_params() == 109_482_240


def test_paths_do_not_depend_on_where_model_is_called(fixtures_dir):
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BertModel(config, name="my_encoder")
    before = [tf1_name(v) for v in model.weights]
    # Calling inside another name scope must not change any weight's path.
    import keras
    with keras.name_scope("outer"):
        model({"input_ids": tf.zeros((1, 4), tf.int32)})
    assert [tf1_name(v) for v in model.weights] == before
    assert before[0] == "bert/embeddings/word_embeddings"


def test_index_only_shape_check_rejects_base_config_against_mini(data_dir):
    # Shapes are checked from the .index alone, before any tensor is read.
    base = BertConfig.from_json_file(
        data_dir / "bert_models/uncased_L-12_H-768_A-12/bert_config.json")
    model = BertPretrainer(base)
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.check_compatible(
            model, data_dir / "bert_models/uncased_L-4_H-256_A-4/bert_model.ckpt")
    message = str(error.value)
    assert "bert/embeddings/word_embeddings: checkpoint [30522, 256] vs model [30522, 768]" in message
    assert "Likely cause: hidden_size: the checkpoint has 256, the config 768" in message
    assert "vocab_size" not in message


def test_reloaded_pretrainer_keeps_released_names(data_dir, tmp_path):
    # The naming rule (TF1 name = path minus its first component) holds for a
    # model rebuilt by keras.models.load_model, and the MLM decoder stays tied.
    import keras
    folder = data_dir / "bert_models" / "uncased_L-4_H-256_A-4"
    model = BertPretrainer(BertConfig.from_json_file(folder / "bert_config.json"))
    model.save(tmp_path / "pretrainer.keras")
    loaded = keras.models.load_model(tmp_path / "pretrainer.keras")
    names = [tf1_name(v) for v in loaded.weights]
    assert names == [tf1_name(v) for v in model.weights]
    released = dict(tf.train.list_variables(str(folder / "bert_model.ckpt")))
    assert {name: list(v.shape) for name, v in zip(names, loaded.weights)} == released


@pytest.mark.parametrize("layers, types", [(1, 2), (3, 16)])
def test_weight_shapes_without_a_model_equal_the_encoders(layers, types):
    # The converters' template (no model built) against a built BertModel:
    # same names, shapes and order.
    from bert_tf1.modeling.naming import encoder_weight_shapes

    config = BertConfig(vocab_size=37, hidden_size=12, num_hidden_layers=layers,
                        num_attention_heads=3, intermediate_size=20,
                        max_position_embeddings=24, type_vocab_size=types)
    built = [(tf1_name(v), tuple(v.shape)) for v in BertModel(config).weights]
    assert list(encoder_weight_shapes(config).items()) == built
