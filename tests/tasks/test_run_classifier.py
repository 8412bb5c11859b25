"""run_classifier.py's work (bert_tf1.tasks.classification) against the original's outputs.

Runs in-process from the script's flags (tests/helpers/task_runner.py); the script
itself is run once in tests/scripts/test_script_smoke.py.
"""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.tasks.errors import UserError, one_line
from tests.helpers.task_runner import fixture_flags, run_task


@pytest.fixture
def mrpc_fixture(fixtures_dir):
    return fixtures_dir / "tf1_vocab_mrpc_classifier"


def _base_flags(fixture, data_dir, output_dir, **extra):
    return fixture_flags(fixture, output_dir, **{
        "task_name": "MRPC", "data_dir": data_dir, **extra})


def test_predict_reproduces_original_test_results(mrpc_fixture, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "test.tsv").write_bytes((mrpc_fixture / "mrpc_test64.tsv").read_bytes())
    results = run_task("run_classifier.py", _base_flags(
        mrpc_fixture, data_dir, tmp_path / "out", do_predict=True, max_seq_length=128))
    ours = (tmp_path / "out/test_results.tsv").read_text().splitlines()
    # str(float32) round-trips: the file holds exactly the returned values.
    np.testing.assert_array_equal(
        np.array([line.split("\t") for line in ours], np.float32),
        results["predict"])
    original = (mrpc_fixture / "mrpc_test64_test_results.tsv").read_text().splitlines()
    assert len(ours) == len(original) == 64
    for line_number, (mine, theirs) in enumerate(zip(ours, original), 1):
        mine = np.array(mine.split("\t"), float)
        theirs = np.array(theirs.split("\t"), float)
        assert mine.shape == theirs.shape == (2,)
        assert np.max(np.abs(mine - theirs)) <= 1e-5, f"line {line_number}"


@pytest.mark.slow  # the real MRPC files: 11 steps, 408 + 1725 predictions
def test_train_eval_predict_on_real_mrpc(mrpc_fixture, data_dir, tmp_path):
    from bert_tf1.data.glue.features import classifier_dataset
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints

    output_dir = tmp_path / "out"
    run_task("run_classifier.py", _base_flags(
        mrpc_fixture, data_dir / "glue/MRPC", output_dir, do_train=True,
        do_eval=True, do_predict=True, max_seq_length=64, train_batch_size=32,
        num_train_epochs=0.1, save_checkpoints_steps=5, eval_batch_size=32,
        predict_batch_size=64))
    # 3668 train examples / 32 * 0.1 epochs -> 11 steps, as the original counts.
    results = dict(line.split(" = ") for line in
                   (output_dir / "eval_results.txt").read_text().splitlines())
    assert list(results) == sorted(results)
    assert set(results) == {"eval_accuracy", "eval_f1", "eval_loss", "global_step", "loss"}
    assert results["global_step"] == "11"
    assert 0.0 <= float(results["eval_accuracy"]) <= 1.0
    assert np.isfinite(float(results["eval_loss"]))

    # Every one of the 408 dev examples was evaluated.
    eval_count = sum(1 for _ in tf.data.TFRecordDataset(str(output_dir / "eval.tf_record")))
    assert eval_count == 408
    # test_results.tsv: one line per test example (1725), none dropped.
    lines = (output_dir / "test_results.tsv").read_text().splitlines()
    assert len(lines) == 1725

    # The written checkpoint reloads and predicts what the in-memory model did.
    prefix = checkpoints.resolve_checkpoint(output_dir)
    assert prefix.endswith("model.ckpt-11")
    reader = tf.train.load_checkpoint(prefix)
    assert reader.has_tensor("output_weights/adam_m") and int(reader.get_tensor("global_step")) == 11
    model = BertClassifier(BertConfig.from_json_file(mrpc_fixture / "bert_config.json"), 2)
    checkpoints.load_tf1_checkpoint(model, output_dir, verbose=False)
    dataset = classifier_dataset(str(output_dir / "predict.tf_record"), 64, False, 64)
    logits = model.predict(dataset, verbose=0)
    probabilities = tf.nn.softmax(logits).numpy()
    written = np.array([line.split("\t") for line in lines], float)
    np.testing.assert_allclose(probabilities, written, atol=1e-6)


@pytest.mark.parametrize("extra, message", [
    ({"task_name": "nosuchtask", "do_eval": True}, "known tasks"),
    ({"do_eval": True, "max_seq_length": 600}, "max_position_embeddings"),
    ({}, "At least one of `do_train`, `do_eval` or `do_predict' must be True"),
    ({"do_train": True, "data_dir": "/nonexistent/glue"}, "/nonexistent/glue/train.tsv"),
    ({"do_eval": True, "bert_config_file": "TINY_CONFIG", "max_seq_length": 64},
     "has 30522 tokens but the BERT config"),
])
def test_bad_input_gets_clear_error(mrpc_fixture, tmp_path, extra, message):
    flags = _base_flags(mrpc_fixture, tmp_path, tmp_path / "out")
    flags.update(extra)
    if flags["bert_config_file"] == "TINY_CONFIG":
        flags["bert_config_file"] = mrpc_fixture.parent / "tf1_tiny_classifier/bert_config.json"
    # A user error: the script prints it as one line and exits with 1.
    with pytest.raises(UserError) as error:
        run_task("run_classifier.py", flags)
    assert message in one_line(error.value)


def test_case_check_against_released_checkpoint_name(mrpc_fixture, tmp_path):
    flags = _base_flags(mrpc_fixture, tmp_path, tmp_path / "out", do_eval=True,
                        do_lower_case=False,
                        init_checkpoint="/models/uncased_L-12_H-768_A-12/bert_model.ckpt")
    with pytest.raises(UserError) as error:
        run_task("run_classifier.py", flags)
    assert "--do_lower_case=True" in one_line(error.value)


def test_result_files_get_the_usual_mode(tmp_path):
    import os
    from bert_tf1.data.io.results import write_key_value_file

    old = os.umask(0o022)
    try:
        write_key_value_file(tmp_path / "eval_results.txt", {"b": 2, "a": 0.5})
    finally:
        os.umask(old)
    path = tmp_path / "eval_results.txt"
    assert path.read_text() == "a = 0.5\nb = 2\n"
    assert path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["eval_results.txt"]
