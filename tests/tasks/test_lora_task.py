"""--lora_rank on a fine-tuning task: evaluation during training, best/,
dynamic padding, merged checkpoints that plain models and exports read."""
import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.tasks.classification import ClassificationConfig, ClassificationTask
from tests.tasks.test_classification import FIXTURE, make_config, mrpc_slice  # noqa: F401


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


@pytest.mark.slow  # trains 5 steps and evaluates 3 times: ~30 s
def test_lora_run_with_evaluation_best_and_dynamic_padding(
        fixture, mrpc_slice, tmp_path):  # noqa: F811
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints

    output_dir = tmp_path / "out"
    config = make_config(
        fixture, mrpc_slice, output_dir, do_train=True, do_eval=True,
        train_batch_size=8, eval_batch_size=5, num_train_epochs=2.0,
        learning_rate=1e-2, lora_rank=2, lora_targets="query,value,key",
        eval_steps=2, keep_best_checkpoint="eval_accuracy",
        dynamic_padding=True)
    task = ClassificationTask(config)
    results = task.run()
    assert results["train"]["global_step"] == 5
    assert task.dynamic_padding("train")
    names = {name for name, _ in tf.train.list_variables(
        str(output_dir / "model.ckpt-5"))}
    assert "lora/bert/encoder/layer_1/attention/self/key/lora_kernel_b" in names
    assert (output_dir / "lora_adapters.ckpt.index").exists()
    # The run's identity, checked when it resumes (model_folder).
    assert json.loads((output_dir / "training_settings.json").read_text()) == {
        "lora": {"rank": 2, "alpha": 2.0, "targets": "key,query,value"},
        "precision": "float32"}
    best = checkpoints.resolve_checkpoint(output_dir / "best")
    assert any(name.startswith("lora/") for name, _ in
               tf.train.list_variables(best))

    # The frozen encoder weights are the init checkpoint's, bit for bit;
    # the adapted kernels are merged (changed); the head trained.
    reader = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    trained = tf.train.load_checkpoint(str(output_dir / "model.ckpt-5"))
    layer = "bert/encoder/layer_0/"
    for name in ("attention/output/dense/kernel", "intermediate/dense/bias",
                 "attention/self/query/bias", "output/LayerNorm/gamma"):
        np.testing.assert_array_equal(trained.get_tensor(layer + name),
                                      reader.get_tensor(layer + name))
    np.testing.assert_array_equal(
        trained.get_tensor("bert/embeddings/word_embeddings"),
        reader.get_tensor("bert/embeddings/word_embeddings"))
    for name in (layer + "attention/self/query/kernel", "output_weights"):
        assert not np.array_equal(trained.get_tensor(name),
                                  reader.get_tensor(name)), name

    # --do_eval used best/; a plain classifier from best/ gives its numbers.
    plain = BertClassifier(BertConfig.from_json_file(
        fixture / "bert_config.json"), 2)
    checkpoints.load_tf1_checkpoint(plain, best, verbose=False)
    again = ClassificationTask(ClassificationConfig(**{
        **config.__dict__, "do_train": False, "lora_rank": 0,
        "lora_targets": None,
        "output_dir": str(tmp_path / "plain"), "init_checkpoint": best,
        "eval_steps": 0, "keep_best_checkpoint": None}))
    plain_eval = again.run()["eval"]
    for key in ("eval_accuracy", "eval_loss"):
        assert plain_eval[key] == pytest.approx(results["eval"][key],
                                                abs=1e-5), key


@pytest.mark.slow
@pytest.mark.parametrize("script", ["run_classifier.py", "run_ner.py",
                                    "run_squad.py", "run_multiple_choice.py"])
def test_helpfull_lists_the_lora_flags(script):
    from tests.helpers.script_runner import run_script

    # A fork of the warm script server (no TensorFlow import per run): its
    # --helpfull text is the same as a new interpreter's.
    help_text = run_script(script, {"helpfull": True},
                           check=False).stdout  # exits 1
    help_text = " ".join(help_text.split())  # absl wraps lines
    for name in ("--lora_rank:", "--lora_alpha:", "--lora_targets:",
                 "attention_output, intermediate, layer_output"):
        assert name in help_text, (script, name)
