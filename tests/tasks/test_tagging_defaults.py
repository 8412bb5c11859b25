"""run_ner.py --lstm_units default: the encoder's hidden size for the
feature-based tagger (768 for BERT-Base, the paper's), 768 for the no-BERT
baseline (demos/ner/task.py); a given value wins."""
import pytest

from demos.ner.task import WordPieceBiLSTMTaggingTask
from bert_tf1.tasks.tagging import TaggingConfig, TaggingTask


@pytest.mark.parametrize("task_class,changes,expected", [
    (TaggingTask, {"feature_layers": "sum_all"}, 32),  # the fixture's hidden size
    (TaggingTask, {"feature_layers": "sum_all", "lstm_units": 4}, 4),
    (WordPieceBiLSTMTaggingTask, {}, 768),
    (WordPieceBiLSTMTaggingTask, {"lstm_units": 8}, 8),
])
def test_lstm_units_default(fixtures_dir, task_class, changes, expected):
    task = task_class(TaggingConfig(
        bert_config_file=str(fixtures_dir / "tf1_vocab_mrpc_classifier" /
                             "bert_config.json"), **changes))
    assert task.lstm_units == expected
