"""demos/ner/task.py and demos/wordpiece_bilstm_ner.py: run_ner.py's task
with the no-BERT baseline, on the data and fixtures of tests/tasks/test_tagging.py."""
import pytest

from demos.ner.task import WordPieceBiLSTMTaggingTask
from bert_tf1.tasks.errors import UserError
from tests.helpers.script_runner import assert_one_line_error, run_script
from tests.tasks.test_tagging import (TRAIN, _write, fixture,  # noqa: F401
                                      make_config, wnut)


@pytest.mark.parametrize("fields, pattern", [
    ({}, "random embeddings; drop --init_checkpoint"),
    ({"init_checkpoint": None, "feature_layers": "last"},
     "no BERT encoder; drop --feature_layers"),
])
def test_bert_flags_are_refused_before_any_write(fields, pattern, fixture,
                                                 tmp_path):
    train = _write(tmp_path / "train.conll", TRAIN)
    output_dir = tmp_path / "out"
    task = WordPieceBiLSTMTaggingTask(make_config(
        fixture, output_dir, do_train=True, train_file=train, **fields))
    with pytest.raises(UserError, match=pattern):
        task.prepare()
    assert not output_dir.exists()


@pytest.mark.slow  # trains: ~30-60 s
def test_wordpiece_bilstm_baseline_trains_and_evaluates(fixture, wnut,
                                                        tmp_path):
    from bert_tf1.modeling import checkpoints

    train_file, dev_file = wnut
    output_dir = tmp_path / "out"
    task = WordPieceBiLSTMTaggingTask(make_config(
        fixture, output_dir, init_checkpoint=None,
        lstm_units=4, do_train=True, do_eval=True, train_file=train_file,
        eval_file=dev_file))
    results = task.run()
    assert results["eval"]["global_step"] == results["train"]["global_step"]
    names = checkpoints.list_checkpoint(str(output_dir))
    assert "wordpiece_bilstm/embeddings" in names
    assert not any(name.startswith("bert/") for name in names)



def test_script_is_run_ner_with_the_baseline(fixture, tmp_path):
    # One line naming the script; nothing written.
    train = _write(tmp_path / "train.conll", TRAIN)
    result = run_script("demos/wordpiece_bilstm_ner.py", dict(
        vocab_file=str(fixture / "vocab.txt"),
        bert_config_file=str(fixture / "bert_config.json"),
        init_checkpoint=str(fixture / "bert_model.ckpt"),
        train_file=str(train), do_train=True,
        output_dir=str(tmp_path / "out")), check=False)
    assert_one_line_error(result, "wordpiece_bilstm_ner.py: error:",
                          "drop --init_checkpoint")
    assert not (tmp_path / "out").exists()
