"""BertConfig reads, validates and writes the original JSON."""
import json

import pytest

from bert_tf1.modeling import BertConfig, BertConfigError, BertModel
from bert_tf1.modeling.config import REQUIRED_KEYS

SMALL = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "intermediate_size": 64,
         "max_position_embeddings": 40, "type_vocab_size": 2}


def test_reads_released_base_config(data_dir):
    config = BertConfig.from_json_file(
        data_dir / "bert_models/uncased_L-12_H-768_A-12/bert_config.json")
    assert (config.vocab_size, config.hidden_size, config.num_hidden_layers,
            config.num_attention_heads, config.intermediate_size) == (30522, 768, 12, 12, 3072)
    assert config.type_vocab_size == 2 and config.hidden_act == "gelu"


def test_keeps_unknown_keys_of_chinese_config(data_dir, tmp_path):
    source = data_dir / "bert_models/chinese_L-12_H-768_A-12/bert_config.json"
    config = BertConfig.from_json_file(source)
    assert config.extra["directionality"] == "bidi"
    assert config.extra["pooler_type"] == "first_token_transform"
    config.to_json_file(tmp_path / "out.json")
    assert json.loads((tmp_path / "out.json").read_text()) == json.loads(source.read_text())


def test_json_string_is_sorted_indented_with_newline():
    text = BertConfig(vocab_size=99, hidden_size=37, num_attention_heads=1).to_json_string()
    assert text.endswith("}\n")
    parsed = json.loads(text)
    assert list(parsed) == sorted(parsed)
    assert parsed["vocab_size"] == 99 and parsed["hidden_size"] == 37
    assert text.splitlines()[1].startswith('  "')


def test_constructor_default_type_vocab_size_is_16():
    assert BertConfig(vocab_size=10).type_vocab_size == 16


@pytest.mark.parametrize("changes, fragment", [
    ({"hidden_size": 768, "num_attention_heads": 7}, "not a multiple"),
    ({"hidden_act": "swishy"}, "unknown `hidden_act`"),
    ({"num_hidden_layers": 0}, "`num_hidden_layers` must be a positive integer"),
    ({"vocab_size": -5}, "`vocab_size` must be a positive integer"),
    ({"hidden_dropout_prob": 1.5}, "`hidden_dropout_prob` must be a probability"),
    ({"intermediate_size": 3.5}, "`intermediate_size` must be a positive integer"),
])
def test_rejects_bad_values_naming_file_and_field(tmp_path, changes, fragment):
    values = dict(SMALL)
    values.update(changes)
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(values))
    with pytest.raises(BertConfigError) as error:
        BertConfig.from_json_file(path)
    assert fragment in str(error.value)
    assert str(path) in str(error.value)


def test_missing_file_and_bad_json(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        BertConfig.from_json_file(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"vocab_size": 3,')
    with pytest.raises(BertConfigError, match="not valid JSON"):
        BertConfig.from_json_file(bad)
    missing = tmp_path / "missing.json"
    missing.write_text('{"hidden_size": 32}')
    with pytest.raises(BertConfigError, match="vocab_size"):
        BertConfig.from_json_file(missing)


def test_model_rejects_non_config():
    with pytest.raises(TypeError, match="BertConfig"):
        BertModel({"vocab_size": 10})


@pytest.mark.parametrize("key", REQUIRED_KEYS)
def test_missing_shape_key_names_file_and_key(tmp_path, key):
    # The original's from_dict would silently use the constructor default
    # (768 for hidden_size, 12 for num_hidden_layers, 16 for type_vocab_size).
    values = {k: v for k, v in SMALL.items() if k != key}
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(values))
    with pytest.raises(BertConfigError) as error:
        BertConfig.from_json_file(path)
    message = str(error.value)
    assert message.startswith(f"{path}: required key(s) `{key}` missing")
    assert "hidden_size, num_hidden_layers" in message  # says what is expected


def test_lists_every_missing_key(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({"vocab_size": 100, "hidden_size": 32}))
    with pytest.raises(BertConfigError, match="`num_hidden_layers`, "
                       "`num_attention_heads`, `intermediate_size`, "
                       "`max_position_embeddings`, `type_vocab_size` missing"):
        BertConfig.from_json_file(path)


def test_optional_keys_keep_the_original_defaults(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(SMALL))
    config = BertConfig.from_json_file(path)
    assert (config.hidden_act, config.hidden_dropout_prob,
            config.attention_probs_dropout_prob, config.initializer_range) == (
        "gelu", 0.1, 0.1, 0.02)


def test_every_shipped_config_loads(data_dir, fixtures_dir):
    paths = sorted(data_dir.glob("**/bert_config.json")) + sorted(
        fixtures_dir.glob("*/bert_config.json"))
    assert len(paths) >= 10
    for path in paths:
        # Every key read back as written: nothing defaulted, nothing lost.
        assert BertConfig.from_json_file(path).to_dict() == json.loads(
            path.read_text()), path
