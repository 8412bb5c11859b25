"""PretrainingTask and FeatureExtractionTask in-process.

Ground truth: shared/fixtures/tf1_tiny_pretraining (the original model's
log-probabilities for three reference rows; eval values as
tests/test_run_pretraining.py derives them) and tf1_vocab_mrpc_classifier
(encoder layers for extract_features).
"""
import json

import numpy as np
import pytest
import tensorflow as tf

from tasks.errors import UserError
from tasks.feature_extraction import FeatureExtractionConfig, FeatureExtractionTask
from tasks.pretraining import PretrainingConfig, PretrainingTask
from tests.test_run_pretraining import (EVAL_KEYS, expected_eval_results,
                                        read_eval_results,
                                        write_reference_records)

FIXTURE = "tf1_tiny_pretraining"


@pytest.fixture(scope="module")
def reference(fixtures_dir):
    return dict(np.load(fixtures_dir / FIXTURE / "reference_outputs.npz"))


@pytest.fixture
def records(tmp_path, reference):
    path = tmp_path / "reference.tfrecord"
    write_reference_records(reference, path)
    return path


def make_config(fixtures_dir, records, output_dir, **fields):
    fixture = fixtures_dir / FIXTURE
    values = dict(input_file=str(records), output_dir=str(output_dir),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  max_seq_length=24, max_predictions_per_seq=4)
    values.update(fields)
    return PretrainingConfig(**values)


def test_evaluate_reproduces_original_metrics(fixtures_dir, reference, records,
                                              tmp_path):
    task = PretrainingTask(make_config(fixtures_dir, records, tmp_path / "out",
                                       do_eval=True, eval_batch_size=2,
                                       max_eval_steps=3))
    result = task.evaluate()
    assert set(result) == EVAL_KEYS and result["global_step"] == 0
    # The eval input repeats in file order: batches rows [0,1], [2,0], [1,2].
    expected = expected_eval_results(
        reference, [np.array([0, 1]), np.array([2, 0]), np.array([1, 2])])
    for key, value in expected.items():
        assert result[key] == pytest.approx(value, abs=1e-5), key
    written = read_eval_results(tmp_path / "out/eval_results.txt")
    assert written == pytest.approx(result, abs=1e-6)


@pytest.mark.slow  # trains (model.fit compiles): ~10-20 s
def test_train_moves_weights_and_evaluates(fixtures_dir, records, tmp_path):
    out = tmp_path / "out"
    task = PretrainingTask(make_config(
        fixtures_dir, records, out, do_train=True, do_eval=True,
        train_batch_size=2, eval_batch_size=3, max_eval_steps=1,
        num_train_steps=2, num_warmup_steps=1, learning_rate=1e-3))
    results = task.run()
    assert results["train"]["global_step"] == 2
    assert results["eval"]["global_step"] == 2
    assert all(np.isfinite(v) for v in results["eval"].values())
    reader = tf.train.load_checkpoint(str(out / "model.ckpt-2"))
    start = tf.train.load_checkpoint(
        str(fixtures_dir / FIXTURE / "bert_model.ckpt"))
    name = "cls/seq_relationship/output_weights"
    assert not np.allclose(reader.get_tensor(name), start.get_tensor(name))


def test_input_checks(fixtures_dir, records, tmp_path):
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    cases = [
        (dict(input_file=str(tmp_path / "none*.tfrecord")), "matches no file"),
        (dict(input_file=str(empty)), "empty.tfrecord: file is empty"),
        # Records written at 24 read with 16: named file, feature, lengths.
        (dict(max_seq_length=16), r"reference\.tfrecord.*input_ids.* 24"),
        (dict(dynamic_masking=True, do_train=True), "needs --vocab_file"),
    ]
    for fields, message in cases:
        fields.setdefault("do_eval", True)
        task = PretrainingTask(make_config(fixtures_dir, records,
                                           tmp_path / "out", **fields))
        with pytest.raises(ValueError, match=message):
            task.prepare()
    assert not (tmp_path / "out").exists()


def test_feature_extraction_in_process(fixtures_dir, tmp_path):
    from data.extraction.features import (compute_layer_outputs,
                                          convert_examples_to_features,
                                          read_examples)
    from data.tokenization import FullTokenizer
    from modeling import BertConfig, BertModel, checkpoints

    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    input_file = tmp_path / "input.txt"
    input_file.write_text("Hello world ||| How are you?\nOne more line.\n",
                          encoding="utf-8")
    output_file = tmp_path / "out" / "features.jsonl"
    config = FeatureExtractionConfig(
        input_file=str(input_file), output_file=str(output_file),
        vocab_file=str(fixture / "vocab.txt"),
        bert_config_file=str(fixture / "bert_config.json"),
        init_checkpoint=str(fixture / "bert_model.ckpt"), layers="-1,0",
        max_seq_length=16, batch_size=1)
    assert FeatureExtractionTask(config).run() == {"predict": 2}
    lines = output_file.read_text(encoding="ascii").splitlines()
    assert [p.name for p in output_file.parent.iterdir()] == ["features.jsonl"]

    features = convert_examples_to_features(
        read_examples(str(input_file)), 16,
        FullTokenizer(fixture / "vocab.txt", True))
    model = BertModel(BertConfig.from_json_file(fixture / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, fixture / "bert_model.ckpt",
                                    verbose=False)
    expected = list(compute_layer_outputs(model, features, [-1, 0], 2))
    assert len(lines) == len(expected) == 2
    for line, (feature, outputs) in zip(lines, expected):
        parsed = json.loads(line)
        assert [t["token"] for t in parsed["features"]] == feature.tokens
        for position, token in enumerate(parsed["features"]):
            for layer, output in zip(token["layers"], outputs):
                np.testing.assert_allclose(layer["values"], output[position],
                                           atol=1e-5)

    bad = FeatureExtractionTask(FeatureExtractionConfig(
        **dict(vars(config), layers="2", output_file=str(tmp_path / "x.jsonl"))))
    with pytest.raises(UserError, match="--layers=2: layer index 2 is out of range"):
        bad.run()
    assert not (tmp_path / "x.jsonl").exists()
