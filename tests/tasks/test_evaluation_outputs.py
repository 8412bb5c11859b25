"""What an evaluation leaves besides eval_results.txt: eval_predictions.tsv,
TensorBoard scalars in output_dir/eval, and training_curves.png."""
import csv

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.tasks.classification import ClassificationTask
from tests.tasks.test_classification import make_config, mrpc_slice  # noqa: F401

FIXTURE = "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


def _eval_scalars(logdir):
    # TensorBoard's own reader.
    from tensorboard.backend.event_processing import event_accumulator
    accumulator = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={event_accumulator.TENSORS: 0})
    accumulator.Reload()
    return {tag: [(e.step, float(tf.make_ndarray(e.tensor_proto)))
                  for e in accumulator.Tensors(tag)]
            for tag in accumulator.Tags()["tensors"]}


def _softmax(logits):
    shifted = np.exp(logits - logits.max(-1, keepdims=True))
    return shifted / shifted.sum(-1, keepdims=True)


def test_eval_predictions_and_eval_scalars(fixture, mrpc_slice, tmp_path):  # noqa: F811
    from bert_tf1.data.glue.features import classifier_dataset
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints

    output_dir = tmp_path / "out"
    config = make_config(fixture, mrpc_slice, output_dir, do_eval=True,
                         eval_batch_size=5)
    result = ClassificationTask(config).run()["eval"]

    rows = list(csv.reader((output_dir / "eval_predictions.tsv").open(),
                           delimiter="\t"))
    assert rows[0] == ["guid", "gold_label", "predicted_label",
                       "probability_0", "probability_1"]
    # The gold labels as dev.tsv states them (column 0, header skipped).
    dev = list(csv.reader((mrpc_slice / "dev.tsv").open(encoding="utf-8-sig"),
                          delimiter="\t", quotechar=None))[1:]
    assert [row[1] for row in rows[1:]] == [line[0] for line in dev]
    assert [row[0] for row in rows[1:]] == [f"dev-{i}" for i in range(1, 13)]

    # Probabilities of the fixture checkpoint, computed here.
    model = BertClassifier(BertConfig.from_json_file(fixture / "bert_config.json"), 2)
    checkpoints.load_tf1_checkpoint(model, fixture, verbose=False)
    dataset = classifier_dataset(str(output_dir / "eval.tf_record"), 64, False, 5)
    expected = _softmax(model.predict(dataset.map(lambda x, y, w: x), verbose=0)
                        .astype(np.float64))
    written = np.array([[float(v) for v in row[3:]] for row in rows[1:]])
    np.testing.assert_allclose(written, expected, atol=1e-6)
    assert [row[2] for row in rows[1:]] == [str(i) for i in expected.argmax(-1)]
    accuracy = np.mean([row[1] == row[2] for row in rows[1:]])
    assert result["eval_accuracy"] == pytest.approx(accuracy)

    # Evaluation numbers in TensorBoard at the checkpoint's step (0: the
    # init checkpoint), once per step even when evaluated again.
    ClassificationTask(config).run()
    scalars = _eval_scalars(output_dir / "eval")
    assert {"eval_accuracy", "eval_loss", "eval_f1", "loss"} <= set(scalars)
    assert "global_step" not in scalars
    assert scalars["eval_accuracy"] == [(0, pytest.approx(accuracy))]
    assert scalars["eval_loss"] == [(0, pytest.approx(result["eval_loss"], rel=1e-6))]
    # No training: no training events, no curves.
    assert not list(output_dir.glob("events.out.tfevents.*"))
    assert not (output_dir / "training_curves.png").exists()


def test_regression_eval_predictions(tmp_path, fixture):
    from bert_tf1.tasks.classification import ClassificationConfig

    task = ClassificationTask(ClassificationConfig(
        task_name="STS-B", data_dir=str(tmp_path), vocab_file=str(fixture / "vocab.txt"),
        bert_config_file=str(fixture / "bert_config.json"), output_dir=str(tmp_path),
        do_eval=True))
    from bert_tf1.data.glue.processors import InputExample
    task.examples["dev"] = [InputExample("dev-1", "a", "b", "1.5"),
                            InputExample("dev-2", "c", "d", "4.0")]
    task.write_eval_predictions(np.array([[2.25], [3.5]], np.float32),
                                np.array([1.5, 4.0], np.float32))
    assert (tmp_path / "eval_predictions.tsv").read_text().splitlines() == [
        "guid\tgold_score\tpredicted_score", "dev-1\t1.5\t2.25", "dev-2\t4.0\t3.5"]


@pytest.mark.slow
def test_train_and_eval_draw_curves_with_eval_scalars(fixture, mrpc_slice, tmp_path):  # noqa: F811
    pytest.importorskip("matplotlib", reason="training_curves.png needs the [plots] extra (pip install -e '.[plots]'; run_tests.sh installs it)")
    output_dir = tmp_path / "out"
    config = make_config(fixture, mrpc_slice, output_dir, do_train=True, do_eval=True,
                         train_batch_size=8, num_train_epochs=1.0)
    config.runtime.log_steps = 1
    ClassificationTask(config).run()
    scalars = _eval_scalars(output_dir / "eval")
    assert [step for step, _ in scalars["eval_accuracy"]] == [2]
    assert (output_dir / "training_curves.png").read_bytes()[:4] == b"\x89PNG"
