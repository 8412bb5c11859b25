"""Every fine-tuning script and export_saved_model.py takes a Hugging Face
or keras-hub folder as --init_checkpoint (made from the fixture by
convert_checkpoint.py) with the same results as the TF1 checkpoint.

A keras-hub preset holds the encoder only: its runs are compared with the
TF1 checkpoint convert_checkpoint.py writes back from it (encoder only too),
under one --seed, so the fresh heads start equal.

Where the fixture holds the TF1 checkpoint's own outputs (run_classifier.py
and run_squad.py predictions), the Hugging Face run is compared with those
files instead of with a fresh run of the TF1 checkpoint: that very run is
tests/scripts/test_script_smoke.py's, and tests/tasks/test_run_classifier.py
and tests/tasks/test_squad.py hold its numbers to the same files (1e-5).
run_ner.py and run_multiple_choice.py start fresh heads from every kind
(the MRPC fixture's classifier head is not theirs), so the keras-hub
preset's runs are compared with the TF1 fixture's own run, the run the
written-back checkpoint would repeat: one run fewer per script, and a
claim one step stronger.
"""
import numpy as np
import pytest

from tests.helpers.script_runner import run_script

pytestmark = pytest.mark.slow

MRPC = "tf1_vocab_mrpc_classifier"
SQUAD = "tf1_vocab_squad"


def _convert(fixture, output_format, path, input_format="tf1"):
    run_script("convert_checkpoint.py", {
        "input_format": input_format, "input_path": fixture,
        "output_format": output_format, "output_path": path})
    return path


@pytest.fixture(scope="module")
def kinds(fixtures_dir, tmp_path_factory):
    """{fixture: {kind: init_checkpoint}}: "tf1", "huggingface" (heads
    included) and the encoder-only pair "keras_hub" / "tf1_encoder"."""
    root = tmp_path_factory.mktemp("kinds")
    found = {}
    for name in (MRPC, SQUAD):
        fixture = fixtures_dir / name
        hub = _convert(fixture, "keras_hub", root / f"{name}_hub")
        found[name] = {
            "tf1": fixture / "bert_model.ckpt",
            "huggingface": _convert(fixture, "huggingface", root / f"{name}_hf"),
            "keras_hub": hub,
            "tf1_encoder": _convert(hub, "tf1", root / f"{name}_tf1",
                                    input_format="keras_hub")}
    return found


def _numbers(path):
    return np.array([[float(x) for x in line.split("\t")]
                     for line in path.read_text().splitlines()])


def _fresh_head_runs(kinds, name):
    """(the TF1 fixture, the kinds whose runs must equal its run): for the
    scripts whose heads start fresh (module docstring)."""
    return kinds[name]["tf1"], (kinds[name]["huggingface"],
                                kinds[name]["keras_hub"])


def _pairs(kinds, name):
    return [(kinds[name]["tf1"], kinds[name]["huggingface"]),
            (kinds[name]["tf1_encoder"], kinds[name]["keras_hub"])]


def test_run_classifier(fixtures_dir, kinds, tmp_path):
    fixture = fixtures_dir / MRPC
    data = tmp_path / "data"
    data.mkdir()
    lines = (fixture / "mrpc_test64.tsv").read_text().splitlines(keepends=True)
    (data / "test.tsv").write_text("".join(lines[:9]))
    # The TF1 checkpoint's side of the first pair: its outputs in the fixture
    # (module docstring).
    expected = _numbers(fixture / "mrpc_test64_test_results.tsv")[:8]
    for i, pair in enumerate(_pairs(kinds, MRPC)):
        results = [expected] if i == 0 else []
        for j, init in enumerate(pair):
            if i == 0 and j == 0:
                continue
            out = tmp_path / f"out{i}{j}"
            run_script("run_classifier.py", {
                "task_name": "MRPC", "data_dir": data,
                "vocab_file": fixture / "vocab.txt",
                "bert_config_file": fixture / "bert_config.json",
                "init_checkpoint": init, "output_dir": out, "seed": 3,
                "do_predict": True, "max_seq_length": 128})
            results.append(_numbers(out / "test_results.tsv"))
        assert results[0].shape == results[1].shape == (8, 2)
        # First pair: the fine-tuned head came through Hugging Face, the
        # fixture's numbers; second: the keras-hub preset, the TF1 encoder
        # written back from it.
        np.testing.assert_allclose(results[1], results[0], atol=1e-5)


def test_run_squad(fixtures_dir, kinds, tmp_path):
    import json

    fixture = fixtures_dir / SQUAD
    folder = fixture / "squad_v1_windows"
    # The TF1 checkpoint's side of the first pair: its outputs in the fixture
    # (module docstring).
    expected = json.loads((folder / "nbest_predictions.json").read_text())
    for i, pair in enumerate(_pairs(kinds, SQUAD)):
        results = [expected] if i == 0 else []
        for j, init in enumerate(pair):
            if i == 0 and j == 0:
                continue
            out = tmp_path / f"out{i}{j}"
            run_script("run_squad.py", {
                "vocab_file": fixture / "vocab.txt",
                "bert_config_file": fixture / "bert_config.json",
                "init_checkpoint": init, "output_dir": out, "seed": 3,
                "do_predict": True, "predict_file": folder / "input.json",
                "max_seq_length": 128, "doc_stride": 48})
            results.append(json.loads((out / "nbest_predictions.json")
                                      .read_text()))
        assert results[1].keys() == results[0].keys()
        for qid, entries in results[0].items():
            assert [e["text"] for e in results[1][qid]] == [
                e["text"] for e in entries]
            np.testing.assert_allclose(
                [e["probability"] for e in results[1][qid]],
                [e["probability"] for e in entries], atol=1e-5)
    assert (tmp_path / "out01/predictions.json").read_text() == (
        folder / "predictions.json").read_text()


def test_run_ner(fixtures_dir, kinds, tmp_path):
    fixture = fixtures_dir / MRPC
    train = tmp_path / "train.conll"
    train.write_text("-DOCSTART- O\n\nJohn B-PER\nlives O\nin O\n"
                     "New B-LOC\nYork I-LOC\n\nHe O\nleft O\n\n",
                     encoding="utf-8")
    tf1, others = _fresh_head_runs(kinds, MRPC)
    results = []
    for j, init in enumerate((tf1, *others)):
        out = tmp_path / f"out{j}"
        run_script("run_ner.py", {
            "vocab_file": fixture / "vocab.txt",
            "bert_config_file": fixture / "bert_config.json",
            "init_checkpoint": init, "do_lower_case": True,
            "output_dir": out, "train_file": train, "eval_file": train,
            "do_train": True, "do_eval": True, "seed": 3,
            "max_seq_length": 8, "doc_stride": 3, "train_batch_size": 2})
        results.append(dict(
            line.split(" = ") for line in
            (out / "eval_results.txt").read_text().splitlines()))
    for other in results[1:]:
        assert other.keys() == results[0].keys()
        for key, value in results[0].items():
            assert float(other[key]) == pytest.approx(float(value),
                                                      abs=1e-5), key


def test_run_multiple_choice(fixtures_dir, data_dir, kinds, tmp_path):
    fixture = fixtures_dir / MRPC
    swag = data_dir / "multiple_choice/swag/swag.csv"
    tf1, others = _fresh_head_runs(kinds, MRPC)
    results = []
    for j, init in enumerate((tf1, *others)):
        out = tmp_path / f"out{j}"
        run_script("run_multiple_choice.py", {
            "data_format": "swag", "train_file": swag,
            "predict_file": swag, "do_train": True, "do_predict": True,
            "vocab_file": fixture / "vocab.txt",
            "bert_config_file": fixture / "bert_config.json",
            "init_checkpoint": init, "output_dir": out, "seed": 3,
            "max_seq_length": 32, "train_batch_size": 4,
            "num_train_epochs": 1})
        results.append(_numbers(out / "test_results.tsv"))
    assert results[0].shape == (11, 4)
    for other in results[1:]:
        np.testing.assert_allclose(other, results[0], atol=1e-5)


def test_export_saved_model(fixtures_dir, kinds, tmp_path):
    import tensorflow as tf

    from bert_tf1.serving.runners import load_saved_model

    fixture = fixtures_dir / MRPC
    sentences = tf.constant(["The cat sat on the mat.", "Nothing here."])
    # The classifier from Hugging Face serves the TF1 checkpoint's own
    # probabilities (the fixture's, as in test_run_classifier; the export of
    # the TF1 checkpoint itself is held to the same file by
    # tests/serving/test_export.py::test_classifier_export_matches_run_classifier_predictions).
    export = tmp_path / "huggingface"
    run_script("export_saved_model.py", {
        "export_dir": export, "model_type": "classifier",
        "task_name": "MRPC", "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": kinds[MRPC]["huggingface"], "max_seq_length": 128})
    pairs = [line.split("\t") for line in (fixture / "mrpc_test64.tsv")
             .read_text(encoding="utf-8").splitlines()[1:9]]
    served = load_saved_model(str(export)).signatures["classify_pair"]
    probabilities = served(text_a=tf.constant([pair[3] for pair in pairs]),
                           text_b=tf.constant([pair[4] for pair in pairs]))
    expected = _numbers(fixture / "mrpc_test64_test_results.tsv")[:8]
    assert expected.shape == (8, 2)
    np.testing.assert_allclose(probabilities["probabilities"].numpy(),
                               expected, atol=1e-5)
    # An encoder from a keras-hub preset serves the same vectors.
    outputs = []
    for kind in ("tf1_encoder", "keras_hub"):
        export = tmp_path / f"enc_{kind}"
        run_script("export_saved_model.py", {
            "export_dir": export, "model_type": "encoder",
            "vocab_file": fixture / "vocab.txt",
            "bert_config_file": fixture / "bert_config.json",
            "init_checkpoint": kinds[MRPC][kind], "max_seq_length": 64})
        served = load_saved_model(str(export)).signatures["serving_default"]
        outputs.append(served(text=sentences)["pooled_output"].numpy())
    np.testing.assert_allclose(outputs[1], outputs[0], atol=1e-5)

