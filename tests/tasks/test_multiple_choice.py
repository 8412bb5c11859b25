"""MultipleChoiceTask in-process: train / evaluate / predict on the shared
SWAG and HellaSwag slices and a TSV of our own, resume, TPU padding, and the
checks that run before anything is written.

The encoder is the tiny MRPC fixture (real uncased vocab, hidden 32); its
classifier head is unused and the multiple-choice head starts fresh. Labels
are read from the files with the csv/json modules (not our readers), and
the written numbers are recomputed from test_results.tsv and from the
written checkpoint.
"""
import csv
import json

import numpy as np
import pytest

from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.multiple_choice import MultipleChoiceConfig, MultipleChoiceTask

FIXTURE = "tf1_vocab_mrpc_classifier"

# Our own TSV: 3 choices, header in another order than the writer's.
TSV_ROWS = [
    ("The cat sat on the mat.", "It purred.", "Stocks fell.", "Rain is wet.", 0),
    ("She opened the door.", "The sky is far.", "A man walked in.", "Ice.", 1),
    ("He boiled the water.", "Nine is odd.", "Cars honk.", "He made tea.", 2),
    ("The band played loudly.", "People danced.", "Grass grew.", "Zero.", 0),
    ("It started to rain.", "Math is hard.", "She took an umbrella.", "No.", 1),
]


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


@pytest.fixture(scope="module")
def swag_file(data_dir):
    return data_dir / "multiple_choice/swag/swag.csv"


@pytest.fixture(scope="module")
def hellaswag_file(data_dir):
    return data_dir / "multiple_choice/hellaswag/hellaswag_val.jsonl"


def write_tsv(path, rows, labelled=True):
    lines = ["label\tending0\tcontext\tending1\tending2\tid"]
    for index, (context, e0, e1, e2, label) in enumerate(rows):
        lines.append("\t".join([str(label) if labelled else "", e0, context,
                                e1, e2, f"row{index}"]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def swag_labels(path):
    with open(path, newline="", encoding="utf-8") as reader:
        return [int(row["label"]) for row in csv.DictReader(reader)]


def hellaswag_labels(path):
    with open(path, encoding="utf-8") as reader:
        return [json.loads(line)["label"] for line in reader if line.strip()]


def make_config(fixture, output_dir, **fields):
    values = dict(vocab_file=str(fixture / "vocab.txt"),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  output_dir=str(output_dir), max_seq_length=48)
    values.update({key: str(value) if hasattr(value, "__fspath__") else value
                   for key, value in fields.items()})
    return MultipleChoiceConfig(**values)


def read_eval_results(output_dir):
    return dict(line.split(" = ") for line in
                (output_dir / "eval_results.txt").read_text().splitlines())


def read_probabilities(output_dir):
    lines = (output_dir / "test_results.tsv").read_text().splitlines()
    return np.array([line.split("\t") for line in lines], np.float64)


def check_written_results(output_dir, results, labels, num_choices):
    """test_results.tsv: one row per example summing to 1; eval_results.txt:
    the accuracy and loss of those probabilities against the labels."""
    probabilities = read_probabilities(output_dir)
    assert probabilities.shape == (len(labels), num_choices)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(probabilities.astype(np.float32),
                                  results["predict"])
    written = read_eval_results(output_dir)
    assert set(written) == {"eval_accuracy", "eval_loss", "global_step", "loss"}
    accuracy = np.mean(probabilities.argmax(axis=1) == np.asarray(labels))
    assert float(written["eval_accuracy"]) == pytest.approx(accuracy, abs=1e-6)
    loss = -np.log(probabilities[np.arange(len(labels)), labels]).mean()
    assert float(written["eval_loss"]) == pytest.approx(loss, abs=1e-5)
    assert int(written["global_step"]) == results["eval"]["global_step"]


# -- end to end ---------------------------------------------------------------

@pytest.fixture(scope="module")
def swag_run(fixture, swag_file, tmp_path_factory):
    """(output_dir, results, config) of one SWAG run: train 2 steps (batch 4,
    lr 1e-3), evaluate, predict. test_rerun_resumes_and_tpu_padding_changes_
    nothing resumes a copy of it instead of training its own first 2 steps."""
    output_dir = tmp_path_factory.mktemp("swag_run") / "out"
    config = make_config(
        fixture, output_dir, data_format="swag", train_file=swag_file,
        eval_file=swag_file, predict_file=swag_file, do_train=True,
        do_eval=True, do_predict=True, train_batch_size=4,
        num_train_epochs=1.0, learning_rate=1e-3, eval_batch_size=4,
        predict_batch_size=5)
    return output_dir, MultipleChoiceTask(config).run(), config


@pytest.mark.slow  # trains (model.fit compiles): ~20-40 s
def test_swag_train_eval_predict(fixture, swag_file, swag_run):
    from bert_tf1.data.multiple_choice.records import multiple_choice_dataset
    from bert_tf1.modeling import BertConfig, BertMultipleChoice, checkpoints

    output_dir, results, config = swag_run
    # 11 examples / 4 * 1 epoch -> 2 steps, as the original counts.
    assert results["train"]["global_step"] == 2
    assert results["eval"]["global_step"] == 2
    labels = swag_labels(swag_file)
    assert len(labels) == 11
    check_written_results(output_dir, results, labels, 4)

    # The written checkpoint gives the written probabilities.
    model = BertMultipleChoice(BertConfig.from_json_file(
        fixture / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, output_dir, verbose=False)
    dataset = multiple_choice_dataset(str(output_dir / "predict.tf_record"),
                                      4, 48, False, 3)
    logits = np.asarray(model.predict(dataset.map(lambda x, y: x), verbose=0),
                        np.float64)
    softmax = np.exp(logits - logits.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    np.testing.assert_allclose(read_probabilities(output_dir), softmax,
                               atol=1e-6)
    # Served (export_saved_model.py --model_type=multiple_choice's module)
    # from the same output_dir, on the same rows' text: the probabilities of
    # --do_predict's test_results.tsv.
    import tensorflow as tf

    from bert_tf1.data.multiple_choice.readers import read_examples
    from bert_tf1.serving import build_serving_module

    module = build_serving_module(
        "multiple_choice", bert_config_file=str(fixture / "bert_config.json"),
        vocab_file=str(fixture / "vocab.txt"), init_checkpoint=str(output_dir),
        do_lower_case=config.do_lower_case, max_seq_length=48)
    examples = read_examples(str(swag_file), "swag")
    served = module.multiple_choice(
        context=tf.constant([example.context for example in examples]),
        endings=tf.constant([list(example.endings) for example in examples]))
    np.testing.assert_allclose(served["probabilities"].numpy(),
                               read_probabilities(output_dir), rtol=0,
                               atol=1e-5)
    # The Estimator's `loss`: mean over eval batches (4, 4, 3) of batch means.
    per_example = -np.log(softmax[np.arange(11), labels])
    batch_means = [per_example[i:i + 4].mean() for i in (0, 4, 8)]
    assert results["eval"]["loss"] == pytest.approx(np.mean(batch_means),
                                                    abs=1e-5)


@pytest.mark.slow  # trains: ~20-40 s
def test_hellaswag_train_eval_predict(fixture, hellaswag_file, tmp_path):
    output_dir = tmp_path / "out"
    config = make_config(
        fixture, output_dir, data_format="hellaswag",
        train_file=hellaswag_file, eval_file=hellaswag_file,
        predict_file=hellaswag_file, do_train=True, do_eval=True,
        do_predict=True, train_batch_size=2, num_train_epochs=1.0)
    results = MultipleChoiceTask(config).run()
    assert results["train"]["global_step"] == 1
    check_written_results(output_dir, results, hellaswag_labels(hellaswag_file),
                          4)


@pytest.mark.slow  # trains: ~20-40 s
def test_tsv_with_three_choices_and_an_unlabelled_predict_file(fixture,
                                                               tmp_path):
    labelled = write_tsv(tmp_path / "dev.tsv", TSV_ROWS)
    unlabelled = write_tsv(tmp_path / "test.tsv", TSV_ROWS, labelled=False)
    output_dir = tmp_path / "out"
    config = make_config(
        fixture, output_dir, data_format="tsv", num_choices=3,
        train_file=labelled, eval_file=labelled, predict_file=unlabelled,
        do_train=True, do_eval=True, do_predict=True, train_batch_size=2,
        num_train_epochs=2.0, learning_rate=1e-3, eval_batch_size=2,
        predict_batch_size=2)
    results = MultipleChoiceTask(config).run()
    assert results["train"]["global_step"] == 5  # int(5 / 2 * 2)
    # The unlabelled file holds the same rows: the same probabilities.
    check_written_results(output_dir, results, [row[-1] for row in TSV_ROWS],
                          3)


@pytest.mark.slow  # resumes swag_run's copy for 3 more steps: ~20-40 s
def test_rerun_resumes_and_tpu_padding_changes_nothing(fixture, swag_file,
                                                       swag_run, tmp_path,
                                                       monkeypatch):
    import shutil

    from bert_tf1.modeling.training import runtime

    # The first run: swag_run's 2 steps of the same training flags (its
    # folder copied, so that its own test reads it unchanged).
    output_dir = tmp_path / "out"
    shutil.copytree(swag_run[0], output_dir)
    assert swag_run[1]["train"]["global_step"] == 2
    train = dict(data_format="swag", train_file=swag_file, do_train=True,
                 train_batch_size=4, learning_rate=1e-3)
    again = MultipleChoiceTask(make_config(fixture, output_dir,
                                           num_train_epochs=2.0, **train))
    # int(11 / 4 * 2) = 5 steps in all: 3 more from model.ckpt-2.
    assert again.run()["train"]["global_step"] == 5
    assert again.checkpoint.source == "output_dir"

    inference = dict(data_format="swag", eval_file=swag_file,
                     predict_file=swag_file, do_eval=True, do_predict=True,
                     eval_batch_size=4, predict_batch_size=4)
    plain = MultipleChoiceTask(make_config(fixture, output_dir,
                                           init_checkpoint=None, **inference))
    plain_results = plain.run()
    assert plain_results["eval"]["global_step"] == 5
    plain_written = read_eval_results(output_dir)

    # As on a TPU: 11 examples padded to 12 (one all-zero example of weight
    # 0); the metrics and the 11 probability rows are the same.
    padded = MultipleChoiceTask(make_config(fixture, output_dir,
                                            init_checkpoint=None, **inference))
    padded.prepare()
    monkeypatch.setattr(runtime, "is_tpu_strategy", lambda strategy: True)
    logits, labels, weights, num_actual = padded.predict_logits("eval", 4)
    assert (logits.shape, num_actual) == ((12, 4), 11)
    np.testing.assert_array_equal(weights, [1.0] * 11 + [0.0])
    padded_results = padded.run()
    padded_written = read_eval_results(output_dir)
    for key in ("eval_accuracy", "global_step"):
        assert padded_written[key] == plain_written[key]
    # The padded example adds a 0 to the weighted sum, but in batches of
    # 4, 4, 4 instead of 4, 4, 3: float32 may round the mean's last digit
    # differently (1.3792182 against 1.3792181 was seen).
    np.testing.assert_allclose(float(padded_written["eval_loss"]),
                               float(plain_written["eval_loss"]), rtol=1e-6)
    np.testing.assert_allclose(padded_results["predict"],
                               plain_results["predict"], atol=1e-6)
    assert len(read_probabilities(output_dir)) == 11


# -- checks before any work ----------------------------------------------------

def _prepare_fails(config, pattern, output_dir):
    with pytest.raises(UserError, match=pattern):
        MultipleChoiceTask(config).prepare()
    assert not output_dir.exists()


def test_defaults_are_the_papers():
    config = MultipleChoiceConfig()
    assert (config.num_train_epochs, config.learning_rate,
            config.train_batch_size) == (3.0, 2e-5, 16)
    assert (config.data_format, config.num_choices) == ("swag", 4)


def test_no_mode_and_a_mode_without_its_file(fixture, swag_file, tmp_path):
    out = tmp_path / "out"
    _prepare_fails(make_config(fixture, out), "At least one of `do_train`",
                   out)
    _prepare_fails(make_config(fixture, out, do_train=True,
                               train_file=swag_file, do_eval=True),
                   "--do_eval needs --eval_file", out)
    missing = tmp_path / "none.csv"
    _prepare_fails(make_config(fixture, out, do_predict=True,
                               predict_file=missing),
                   rf"{missing}: file not found \(needed by --predict_file\)",
                   out)


def test_bad_format_choices_and_batch_size(fixture, swag_file, tmp_path):
    out = tmp_path / "out"
    base = dict(do_eval=True, eval_file=swag_file)
    _prepare_fails(make_config(fixture, out, data_format="csv", **base),
                   "--data_format=csv: expected one of swag, hellaswag, tsv",
                   out)
    _prepare_fails(make_config(fixture, out, num_choices=1, **base),
                   "--num_choices=1: expected an integer >= 2", out)
    _prepare_fails(make_config(fixture, out, eval_batch_size=0, **base),
                   "--eval_batch_size=0", out)
    # The SWAG header names 4 endings.
    _prepare_fails(make_config(fixture, out, num_choices=5, **base),
                   rf"{swag_file}, line 1: found 4 ending columns in the "
                   r"header, expected num_choices=5", out)


def test_rows_with_other_choice_counts_or_labels(fixture, tmp_path):
    out = tmp_path / "out"
    rows = [json.dumps({"ctx_a": "A man sits.", "ctx_b": "he",
                        "endings": ["a", "b", "c", "d"], "label": 1}),
            json.dumps({"ctx_a": "A dog runs.", "ctx_b": "it",
                        "endings": ["a", "b", "c"], "label": 0})]
    three = tmp_path / "three.jsonl"
    three.write_text("\n".join(rows) + "\n")
    _prepare_fails(make_config(fixture, out, data_format="hellaswag",
                               do_eval=True, eval_file=three),
                   rf"{three}, line 2: found 3 endings, expected "
                   r"num_choices=4", out)
    bad_label = write_tsv(tmp_path / "bad.tsv",
                          TSV_ROWS[:2] + [TSV_ROWS[2][:-1] + (3,)])
    _prepare_fails(make_config(fixture, out, data_format="tsv",
                               num_choices=3, do_train=True,
                               train_file=bad_label),
                   rf"{bad_label}, line 4: label 3 is outside 0..2", out)


def test_train_or_eval_file_without_labels(fixture, tmp_path):
    out = tmp_path / "out"
    unlabelled = write_tsv(tmp_path / "test.tsv", TSV_ROWS, labelled=False)
    _prepare_fails(make_config(fixture, out, data_format="tsv",
                               num_choices=3, do_eval=True,
                               eval_file=unlabelled),
                   rf"{unlabelled}: no labels .*--do_eval needs", out)


def test_too_few_examples_for_one_step(fixture, swag_file, tmp_path):
    out = tmp_path / "out"
    _prepare_fails(make_config(fixture, out, do_train=True,
                               train_file=swag_file, train_batch_size=32,
                               num_train_epochs=1.0),
                   r"swag\.csv: 11 examples / --train_batch_size=32", out)
