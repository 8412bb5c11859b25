"""run_ner.py --lstm_units default: the encoder's hidden size for the
feature-based tagger (768 for BERT-Base, the paper's), 768 for the no-BERT
baseline; a given value wins."""
import pytest

from tasks.tagging import TaggingConfig, TaggingTask


@pytest.mark.parametrize("changes,expected", [
    ({"feature_layers": "sum_all"}, 32),          # the fixture's hidden size
    ({"feature_layers": "sum_all", "lstm_units": 4}, 4),
    ({"tagger": "wordpiece_bilstm"}, 768),
    ({"tagger": "wordpiece_bilstm", "lstm_units": 8}, 8),
])
def test_lstm_units_default(fixtures_dir, changes, expected):
    task = TaggingTask(TaggingConfig(
        bert_config_file=str(fixtures_dir / "tf1_vocab_mrpc_classifier" /
                             "bert_config.json"), **changes))
    assert task.lstm_units == expected
