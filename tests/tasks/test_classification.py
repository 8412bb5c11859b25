"""ClassificationTask in-process: train / evaluate / predict, checks, checkpoint rule.

Ground truth: shared/fixtures/tf1_vocab_mrpc_classifier (the original's
test_results.tsv for 64 MRPC test rows) and small slices of GLUE MRPC.
"""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.tasks.classification import ClassificationConfig, ClassificationTask
from bert_tf1.tasks.errors import UserError

FIXTURE = "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


@pytest.fixture
def mrpc_slice(tmp_path, data_dir, fixture):
    """train.tsv (header + 20 rows), dev.tsv (header + 12 rows), test.tsv (64)."""
    folder = tmp_path / "mrpc"
    folder.mkdir()
    for name, rows in (("train.tsv", 20), ("dev.tsv", 12)):
        lines = (data_dir / "glue/MRPC" / name).read_text(
            encoding="utf-8").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:rows + 1]), encoding="utf-8")
    (folder / "test.tsv").write_bytes((fixture / "mrpc_test64.tsv").read_bytes())
    return folder


def make_config(fixture, data, output_dir, **fields):
    values = dict(task_name="MRPC", data_dir=str(data),
                  vocab_file=str(fixture / "vocab.txt"),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  output_dir=str(output_dir), max_seq_length=64)
    values.update(fields)
    return ClassificationConfig(**values)


@pytest.mark.slow  # trains (model.fit compiles): ~10-20 s
def test_train_then_evaluate_in_process(fixture, mrpc_slice, tmp_path):
    from bert_tf1.data.glue.features import classifier_dataset
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints

    output_dir = tmp_path / "out"
    config = make_config(fixture, mrpc_slice, output_dir, do_train=True,
                         do_eval=True, train_batch_size=8, eval_batch_size=5,
                         num_train_epochs=1.0, learning_rate=1e-3)
    results = ClassificationTask(config).run()
    # 20 examples / 8 * 1 epoch -> 2 steps, as the original counts.
    assert results["train"]["global_step"] == 2
    evaluation = results["eval"]
    assert set(evaluation) == {"eval_accuracy", "eval_f1", "eval_loss",
                               "global_step", "loss"}
    assert evaluation["global_step"] == 2

    # The same numbers from the written checkpoint, computed independently.
    model = BertClassifier(BertConfig.from_json_file(fixture / "bert_config.json"), 2)
    checkpoints.load_tf1_checkpoint(model, output_dir, verbose=False)
    dataset = classifier_dataset(str(output_dir / "eval.tf_record"), 64, False, 5)
    logits = model.predict(dataset.map(lambda x, y, w: x), verbose=0)
    labels = np.concatenate([y for _, y, _ in dataset.as_numpy_iterator()])
    log_probs = tf.nn.log_softmax(logits).numpy()
    per_example = -log_probs[np.arange(len(labels)), labels]
    assert len(labels) == 12
    assert evaluation["eval_loss"] == pytest.approx(per_example.mean(), abs=1e-5)
    batch_means = [per_example[i:i + 5].mean() for i in range(0, 12, 5)]
    assert evaluation["loss"] == pytest.approx(np.mean(batch_means), abs=1e-5)
    assert evaluation["eval_accuracy"] == pytest.approx(
        (logits.argmax(-1) == labels).mean())
    written = dict(line.split(" = ") for line in
                   (output_dir / "eval_results.txt").read_text().splitlines())
    assert float(written["eval_loss"]) == pytest.approx(evaluation["eval_loss"],
                                                        abs=1e-6)
    assert (output_dir / "init_checkpoint.txt").read_text().strip() == str(
        fixture / "bert_model.ckpt")


@pytest.mark.slow  # trains (model.fit compiles): ~10-20 s
def test_rerun_resumes_and_conflicting_init_checkpoint_is_refused(
        fixture, fixtures_dir, mrpc_slice, tmp_path):
    output_dir = tmp_path / "out"
    train = dict(do_train=True, train_batch_size=10, num_train_epochs=1.0)
    first = ClassificationTask(make_config(fixture, mrpc_slice, output_dir, **train))
    assert first.run()["train"]["global_step"] == 2

    # The same command again: resumes (nothing left to do), no error.
    again = ClassificationTask(make_config(fixture, mrpc_slice, output_dir,
                                           num_train_epochs=2.0, do_train=True,
                                           train_batch_size=10))
    assert again.run()["train"]["global_step"] == 4
    assert again.checkpoint.source == "output_dir"

    # Another --init_checkpoint with that output_dir: which one wins is
    # ambiguous, so it is an error naming both and the way out.
    other = tmp_path / "other"
    other.mkdir()
    for path in (fixture).glob("bert_model.ckpt.*"):
        (other / path.name).write_bytes(path.read_bytes())
    conflicting = ClassificationTask(make_config(
        fixture, mrpc_slice, output_dir, do_eval=True,
        init_checkpoint=str(other / "bert_model.ckpt")))
    with pytest.raises(UserError, match=r"model\.ckpt-4.*fresh --output_dir.*"
                                        r"drop --init_checkpoint"):
        conflicting.run()
    assert not (output_dir / "eval_results.txt").exists()

    # Without --init_checkpoint the output_dir's checkpoint is used.
    evaluation = ClassificationTask(make_config(
        fixture, mrpc_slice, output_dir, do_eval=True,
        init_checkpoint=None)).run()["eval"]
    assert evaluation["global_step"] == 4


@pytest.mark.parametrize("dev_text", ["", "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"])
def test_empty_or_header_only_dev_fails_before_training(fixture, mrpc_slice,
                                                        tmp_path, dev_text):
    (mrpc_slice / "dev.tsv").write_text(dev_text, encoding="utf-8")
    output_dir = tmp_path / "out"
    task = ClassificationTask(make_config(fixture, mrpc_slice, output_dir,
                                          do_train=True, do_eval=True))
    # A user error (the data layer's ClassifierDataError or UserError; both
    # are ValueErrors that bert_tf1.tasks.cli prints as one line).
    with pytest.raises(ValueError, match=r"dev\.tsv: no examples"):
        task.run()
    assert not output_dir.exists()


def test_too_few_examples_for_one_step(fixture, mrpc_slice, tmp_path):
    task = ClassificationTask(make_config(fixture, mrpc_slice, tmp_path / "out",
                                          do_train=True, train_batch_size=64,
                                          num_train_epochs=1.0))
    with pytest.raises(UserError, match=r"train\.tsv: 20 examples / "
                                        r"--train_batch_size=64"):
        task.run()
    assert not (tmp_path / "out").exists()


def test_config_with_fewer_layers_than_checkpoint(fixture, mrpc_slice, tmp_path):
    import json

    config = json.loads((fixture / "bert_config.json").read_text())
    config["num_hidden_layers"] = 1
    one_layer = tmp_path / "one_layer.json"
    one_layer.write_text(json.dumps(config))
    fields = dict(do_train=True, bert_config_file=str(one_layer))
    task = ClassificationTask(make_config(fixture, mrpc_slice, tmp_path / "out",
                                          **fields))
    with pytest.raises(UserError, match="2 encoder layers .* num_hidden_layers=1"):
        task.prepare()
    assert not (tmp_path / "out").exists()
    # Said to be intended: accepted.
    task = ClassificationTask(make_config(fixture, mrpc_slice, tmp_path / "out",
                                          allow_partial_checkpoint=True, **fields))
    task.prepare()
    assert task.checkpoint.source == "init_checkpoint"


def test_unknown_task_and_no_mode(fixture, mrpc_slice, tmp_path):
    with pytest.raises(UserError, match="known tasks"):
        ClassificationTask(make_config(fixture, mrpc_slice, tmp_path,
                                       task_name="nosuchtask"))
    with pytest.raises(UserError, match="At least one of `do_train`"):
        ClassificationTask(make_config(fixture, mrpc_slice, tmp_path)).prepare()


def test_a_bert_config_object_in_place_of_its_file(fixture, mrpc_slice,
                                                   tmp_path):
    # TaskConfig.bert_config_file takes the BertConfig itself: same
    # predictions as the file, and training would copy the same JSON.
    from bert_tf1.modeling import BertConfig
    from bert_tf1.tasks import model_folder

    config_object = BertConfig.from_json_file(fixture / "bert_config.json")
    outputs = []
    for name, value in (("file", str(fixture / "bert_config.json")),
                        ("object", config_object)):
        config = make_config(fixture, mrpc_slice, tmp_path / name,
                             do_predict=True, bert_config_file=value)
        ClassificationTask(config).run()
        outputs.append(np.loadtxt(tmp_path / name / "test_results.tsv"))
    assert outputs[0].shape == (64, 2)
    np.testing.assert_array_equal(outputs[1], outputs[0])
    written = tmp_path / "object"
    model_folder.write_model_files(make_config(
        fixture, mrpc_slice, written, bert_config_file=config_object))
    assert BertConfig.from_json_file(written / "bert_config.json") == \
        config_object
    with pytest.raises(UserError, match="num_attention_heads"):
        bad = BertConfig.from_json_file(fixture / "bert_config.json")
        bad.num_attention_heads = 7
        ClassificationTask(make_config(fixture, mrpc_slice, tmp_path / "bad",
                                       do_predict=True, bert_config_file=bad))
