"""A diverging run stops at the step its loss turns NaN/Inf, and the newest
checkpoint stays the last finite one."""
import numpy as np
import pytest

from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training import (latest_training_checkpoint, loop,
                                        run_training, save_training_checkpoint)
from bert_tf1.modeling.training.runtime import RuntimeOptions
from tests.helpers.fixture_models import random_classifier_batches


@pytest.mark.slow
def test_huge_learning_rate_stops_naming_the_step(fixtures_dir, tmp_path):
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BertClassifier(config, num_labels=3)
    # No warm-up: the first update already moves weights by ~1e6.
    optimizer = create_optimizer(1e6, 50, 0)
    with pytest.raises(loop.NonFiniteLossError) as error:
        run_training(model, optimizer, random_classifier_batches(config), 50, str(tmp_path),
                     RuntimeOptions(save_checkpoints_steps=1), batch_size=4,
                     init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"),
                     verbose=0)
    step = int(optimizer.iterations.numpy())
    message = str(error.value)
    assert f"at step {step}" in message and "\n" not in message
    # Every checkpoint written is finite; the newest is from before the NaN.
    newest = latest_training_checkpoint(str(tmp_path))
    assert newest == str(tmp_path / f"model.ckpt-{step - 1}")
    assert newest in message
    for index in tmp_path.glob("model.ckpt-*.index"):
        prefix = str(index)[:-len(".index")]
        names = list(checkpoints.list_checkpoint(prefix))
        checkpoints.check_finite_checkpoint(prefix, names)
    assert not (tmp_path / f"model.ckpt-{step}.index").exists()


def test_the_saver_refuses_nan_weights_and_keeps_the_state(fixtures_dir, tmp_path):
    from tests.helpers.fixture_models import build_model

    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    optimizer = create_optimizer(1e-3, 10, 1)
    optimizer.build(model.trainable_variables)
    first = save_training_checkpoint(model, optimizer, str(tmp_path))
    optimizer.iterations.assign(3)
    variable = model.trainable_weights[0]
    variable.assign(np.full(variable.shape, np.nan, np.float32))
    with pytest.raises(checkpoints.CheckpointNonFiniteError, match="model.ckpt-3 not written"):
        save_training_checkpoint(model, optimizer, str(tmp_path))
    assert latest_training_checkpoint(str(tmp_path)) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "checkpoint", "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index"]
