"""Fine-tuning the real pretrained BERT (all-MiniLM-L6-v2, as
fetch_pretrained.py fetches it) learns, through the scripts a user runs.

Skipped without network, failed with CI=true (tests/helpers/real_model.py).
"""
import os
import subprocess

import pytest

from tests.conftest import REPO_ROOT, SHARED_DIR
from tests.helpers.script_runner import run_script

SST2 = ("data", "glue", "SST-2")  # under ../shared
# This recipe (60 steps of 16 from the first 960 training sentences,
# max_seq_length 64, lr 5e-5, seed 1) reached 77.2% dev accuracy on the
# 2-core CPU machine (40 steps: 71.8%, too close to the bar; the earlier
# recipe's 100 steps: 78.8%); always answering the majority class gives
# 50.9% (428 of 872 are negative). Evaluated on the whole dev set.
LEARNED_ACCURACY = 0.70


def _sst2_subset(folder, train_lines, dev_lines=None):
    """glue/SST-2 under `folder` with the first lines of train.tsv and
    dev.tsv (header included); returns the SST-2 folder."""
    source = SHARED_DIR.joinpath(*SST2)
    target = folder.joinpath("glue", "SST-2")
    target.mkdir(parents=True)
    for name, lines in (("train.tsv", train_lines), ("dev.tsv", dev_lines)):
        text = source.joinpath(name).read_text(encoding="utf-8").splitlines(True)
        target.joinpath(name).write_text(
            "".join(text[:lines + 1] if lines else text), encoding="utf-8")
    return target


def _eval_results(output_dir):
    results = {}
    for line in (output_dir / "eval_results.txt").read_text().splitlines():
        key, value = line.split(" = ")
        results[key] = float(value)
    return results


@pytest.mark.slow
def test_sst2_fine_tuning_from_the_real_checkpoint_learns(
        real_model_dir, tmp_path):
    data_dir = _sst2_subset(tmp_path / "data", train_lines=960)
    output_dir = tmp_path / "out"
    run_script("run_classifier.py", {
        "task_name": "SST-2", "do_train": True, "do_eval": True,
        "data_dir": data_dir, "vocab_file": real_model_dir / "vocab.txt",
        "bert_config_file": real_model_dir / "bert_config.json",
        "init_checkpoint": real_model_dir / "bert_model.ckpt",
        "max_seq_length": 64, "train_batch_size": 16, "learning_rate": 5e-5,
        "num_train_epochs": 1.0, "eval_batch_size": 64, "seed": 1,
        "output_dir": output_dir})
    results = _eval_results(output_dir)
    assert results["global_step"] == 60
    assert results["eval_accuracy"] >= LEARNED_ACCURACY, results


@pytest.mark.slow
def test_run_main_fine_tunes_the_real_model_a_few_steps(
        real_model_dir, tmp_path):
    data_dir = tmp_path / "data"
    _sst2_subset(data_dir, train_lines=96, dev_lines=40)
    output_dir = tmp_path / "out"
    process = subprocess.run(
        ["bash", str(REPO_ROOT / "run_main.sh"), f"--data_dir={data_dir}",
         f"--output_dir={output_dir}"],
        cwd=tmp_path, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-4000:]
    # One epoch of 96 sentences in batches of 32, on the fetched model.
    results = _eval_results(output_dir)
    assert results["global_step"] == 3
    assert f"== {output_dir}/eval_results.txt" in process.stdout
    assert "eval_accuracy = " in process.stdout
    assert str(real_model_dir) in process.stderr


def test_hugging_face_snippet_on_the_real_checkpoint(real_model_dir):
    """docs/coming_from_hugging_face.md's six lines on all-MiniLM-L6-v2:
    from_checkpoint (no classifier head in it: initialised), the folder's
    preprocessor, a Keras loss and class_weight, fit and predict on text."""
    import keras
    import numpy as np

    from bert_tf1.data.tokenization import BertPreprocessor
    from bert_tf1.modeling import BertClassifier

    rows = [line.split("\t") for line in SHARED_DIR.joinpath(
        *SST2, "train.tsv").read_text(encoding="utf-8").splitlines()[1:17]]
    texts, labels = [r[0] for r in rows], [int(r[1]) for r in rows]
    path = str(real_model_dir)
    model = BertClassifier.from_checkpoint(path, num_labels=2, preprocessor=(
        BertPreprocessor.from_checkpoint(path, sequence_length=64)))
    model.compile(optimizer=keras.optimizers.Adam(2e-5),
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True), metrics=["accuracy"])
    history = model.fit(texts, labels, epochs=1, batch_size=8,
                        class_weight={0: 1.0, 1: 2.0}, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    logits = model.predict(["a gorgeous, witty film", "dull and lifeless"],
                           verbose=0)
    assert logits.shape == (2, 2) and np.all(np.isfinite(logits))
