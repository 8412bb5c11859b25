"""A fine-tuned output_dir is a model folder (bert_tf1/tasks/model_folder.py), and
evaluation during training is wired into the fine-tuning tasks."""
import json

import pytest

from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.modeling.training import evaluation
from bert_tf1.tasks import model_folder
from bert_tf1.tasks.configs import FineTuningConfig
from bert_tf1.tasks.errors import UserError
from tests.tasks.test_classification import make_config, mrpc_slice  # noqa: F401

FIXTURE = "tf1_vocab_mrpc_classifier"


@pytest.fixture
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


def _config(fixture, output_dir, **fields):
    return FineTuningConfig(bert_config_file=str(fixture / "bert_config.json"),
                            vocab_file=str(fixture / "vocab.txt"),
                            output_dir=str(output_dir), **fields)


def test_training_writes_config_vocab_and_case(fixture, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    config = _config(fixture, out, do_lower_case=False)
    model_folder.check_model_files(config, trains=True)
    model_folder.write_model_files(config)
    assert (out / "vocab.txt").read_bytes() == (fixture / "vocab.txt").read_bytes()
    assert json.loads((out / "bert_config.json").read_text()) == json.loads(
        (fixture / "bert_config.json").read_text())
    assert read_lower_case(out) is False
    # The same files again: accepted (a rerun resumes).
    model_folder.check_model_files(config, trains=True)


@pytest.mark.parametrize("name", ["bert_config.json", "vocab.txt"])
def test_another_models_file_is_refused(fixture, tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text('{"hidden_size": 3}\n' if name.endswith(".json")
                            else "[PAD]\nother\n")
    with pytest.raises(UserError, match=f"{name} differs from"):
        model_folder.check_model_files(_config(fixture, out), trains=True)
    # Without training nothing is written, so nothing is checked.
    model_folder.check_model_files(_config(fixture, out), trains=False)


def test_another_lower_casing_is_refused(fixture, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    model_folder.write_model_files(_config(fixture, out, do_lower_case=True))
    with pytest.raises(UserError, match="records do_lower_case=true"):
        model_folder.check_model_files(
            _config(fixture, out, do_lower_case=False), trains=True)


def test_lora_settings_and_precision_are_the_runs_identity(fixture,
                                                          tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    lora = _config(fixture, out, lora_rank=4, lora_targets="value,query")
    model_folder.write_model_files(lora, "bfloat16")
    # The same settings, targets in another order, alpha left at the rank.
    model_folder.check_model_files(
        _config(fixture, out, lora_rank=4, lora_alpha=4.0,
                lora_targets="query,value"), True, "bfloat16")
    model_folder.check_model_files(lora, False, "float32")  # no training
    for config, words in [
            (_config(fixture, out), "not --lora_rank=0 (no LoRA)"),
            (_config(fixture, out, lora_rank=4, lora_alpha=8.0),
             "alpha=4, targets=query,value, not --lora_rank=4 --lora_alpha=8"),
            (_config(fixture, out, lora_rank=2), "--lora_rank=2")]:
        with pytest.raises(UserError, match=words.replace("(", r"\(")
                           .replace(")", r"\)")):
            model_folder.check_model_files(config, True, "bfloat16")
    with pytest.raises(UserError, match="records precision bfloat16, not "
                       "float32"):
        model_folder.check_model_files(lora, True, "float32")


def test_keep_best_needs_evaluation_during_training(fixture, mrpc_slice,  # noqa: F811
                                                    tmp_path):
    from bert_tf1.tasks.classification import ClassificationTask

    task = ClassificationTask(make_config(
        fixture, mrpc_slice, tmp_path / "out", do_train=True,
        keep_best_checkpoint="eval_accuracy"))
    with pytest.raises(UserError, match="need --eval_every_epoch or "
                                        "--eval_steps"):
        task.prepare()
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # trains 4 steps with 2 evaluations: ~30-60 s
def test_best_checkpoint_is_used_after_training(fixture, mrpc_slice,  # noqa: F811
                                                tmp_path):
    from bert_tf1.tasks.classification import ClassificationTask

    out = tmp_path / "out"
    task = ClassificationTask(make_config(
        fixture, mrpc_slice, out, do_train=True, do_eval=True,
        train_batch_size=10, num_train_epochs=2.0, eval_every_epoch=True,
        keep_best_checkpoint="eval_loss", learning_rate=1e-3))
    results = task.run()
    history = evaluation.read_history(out)
    # 20 examples / 10 = 2 steps an epoch: evaluations at steps 2 and 4.
    assert [record["global_step"] for record in history] == [2, 4]
    best = min(history, key=lambda record: record["eval_loss"])
    assert evaluation.best_checkpoint(out).endswith(
        f"model.ckpt-{best['global_step']}")
    written = dict(line.split(" = ") for line in
                   (out / "eval_results.txt").read_text().splitlines())
    assert int(written["global_step"]) == best["global_step"]
    assert results["eval"]["eval_loss"] == pytest.approx(best["eval_loss"],
                                                         abs=1e-6)
    for name in ("bert_config.json", "vocab.txt", "tokenizer_config.json"):
        assert (out / name).is_file()
    # What export_saved_model.py reads from the folder alone.
    record = json.loads((out / "tokenizer_config.json").read_text())
    assert record["max_seq_length"] == task.config.max_seq_length
    assert (out / "label_list.txt").read_text().split() == ["0", "1"]
