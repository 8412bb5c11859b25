"""`Model.from_checkpoint(path)`: config, build and load in one call, from a
Google folder, a prefix, a fine-tuned output_dir (and its best/ folder), a
Hugging Face folder and a keras-hub preset; compared with the fixtures'
reference outputs as the parity tests do."""
import shutil

import numpy as np
import pytest
from absl import logging

from bert_tf1.modeling import (BertClassifier, BertConfig, BertModel,
                               BertMultipleChoice, BertPretrainer, BertSquad,
                               BertTokenClassifier, checkpoints)
from bert_tf1.modeling.checkpoints import (CheckpointMismatchError,
                                           CheckpointNotFoundError)
from bert_tf1.modeling.conversion.convert import convert
from tests.helpers.fixture_models import compute_outputs, reference_outputs

TOLERANCE = 1e-5


def assert_matches_reference(model, fixture_dir, keys):
    reference = reference_outputs(fixture_dir)
    if isinstance(model, (BertClassifier, BertSquad, BertPretrainer)):
        ours = compute_outputs(model, reference)
    else:  # the encoder's outputs only
        ours = {key: np.asarray(value) for key, value in model.bert(
            {key: reference[key] for key in ("input_ids", "input_mask",
                                             "segment_ids")}).items()
            if key != "encoder_outputs"}
    for key in keys:
        diff = float(np.max(np.abs(ours[key] - reference[key])))
        assert diff <= TOLERANCE, f"{key}: max abs diff {diff}"


@pytest.mark.parametrize("fixture, model_class, keys", [
    ("tf1_tiny_classifier", BertClassifier,
     ["classifier_logits", "pooled_output"]),
    ("tf1_vocab_mrpc_classifier", BertClassifier, ["classifier_logits"]),
    ("tf1_tiny_squad", BertSquad, ["start_logits", "end_logits"]),
    ("tf1_tiny_pretraining", BertPretrainer,
     ["masked_lm_log_probs", "next_sentence_log_probs"]),
])
def test_google_folder_and_prefix(fixtures_dir, fixture, model_class, keys):
    folder = fixtures_dir / fixture
    model = model_class.from_checkpoint(folder)
    assert_matches_reference(model, folder, keys)
    if model_class is BertClassifier:
        # num_labels came from the checkpoint's head.
        assert model.num_labels == reference_outputs(
            folder)["classifier_logits"].shape[1]
    prefix = model_class.from_checkpoint(str(folder / "bert_model.ckpt"))
    assert_matches_reference(prefix, folder, keys)


def test_encoder_from_a_task_checkpoint(fixtures_dir):
    folder = fixtures_dir / "tf1_tiny_squad"
    encoder = BertModel.from_checkpoint(folder)
    reference = reference_outputs(folder)
    outputs = encoder({key: reference[key] for key in
                       ("input_ids", "input_mask", "segment_ids")})
    assert np.max(np.abs(np.asarray(outputs["sequence_output"])
                         - reference["sequence_output"])) <= TOLERANCE


def test_missing_head_is_initialised_and_logged(fixtures_dir, monkeypatch):
    warnings = []
    monkeypatch.setattr(logging, "warning",
                        lambda message, *args: warnings.append(
                            message % args))
    folder = fixtures_dir / "tf1_tiny_pretraining"
    model = BertTokenClassifier.from_checkpoint(folder, num_labels=5)
    assert model.num_labels == 5
    assert any("cls/tagging/output_weights" in w for w in warnings)
    assert_matches_reference(model, folder, ["sequence_output"])
    with pytest.raises(TypeError, match="pass num_labels="):
        BertClassifier.from_checkpoint(folder)
    choice = BertMultipleChoice.from_checkpoint(folder)
    assert_matches_reference(choice, folder, ["pooled_output"])


def test_head_of_another_shape_is_an_error(fixtures_dir):
    with pytest.raises(CheckpointMismatchError, match="output_bias"):
        BertClassifier.from_checkpoint(fixtures_dir / "tf1_tiny_classifier",
                                       num_labels=2)


def _without(source, tmp_path, dropped):
    """A TF1 copy of `source` without the weights `dropped(name)` selects."""
    import tensorflow as tf

    from bert_tf1.modeling.checkpoints.saving import write_tensors

    reader = checkpoints.resolve_checkpoint(source)
    values = tf.train.load_checkpoint(reader)
    return write_tensors(str(tmp_path / "part/model.ckpt"), {
        name: tf.constant(values.get_tensor(name)) for name in checkpoints.list_checkpoint(
            reader) if not dropped(name)})


def test_lora_adapters_file_is_no_encoder(fixtures_dir, tmp_path):
    """An adapters file (adapters, pooler, head): the encoder would be
    random; refused in the scripts' words unless allow_partial=True."""
    folder = fixtures_dir / "tf1_tiny_classifier"
    lora_model = BertClassifier.from_checkpoint(folder)
    lora_model.enable_lora(2)
    prefix = str(tmp_path / "lora_adapters.ckpt")
    checkpoints.save_lora_adapters(lora_model, prefix)
    config = folder / "bert_config.json"
    with pytest.raises(CheckpointMismatchError, match=(
            rf"Checkpoint {prefix} lacks \d+ weight\(s\) of the "
            r"bert_classifier\w* model, e.g. bert/.*allow_partial=True")):
        BertClassifier.from_checkpoint(prefix, config=config)
    assert BertClassifier.from_checkpoint(prefix, config=config,
                                          allow_partial=True).num_labels == 3


@pytest.mark.parametrize("model_class, kwargs", [
    (BertModel, {}), (BertClassifier, {"num_labels": 2}),
    (BertSquad, {})])
def test_one_missing_encoder_weight_is_an_error(fixtures_dir, tmp_path,
                                                 model_class, kwargs):
    folder = fixtures_dir / "tf1_tiny_classifier"
    name = "bert/encoder/layer_1/output/LayerNorm/gamma"
    prefix = _without(folder, tmp_path, lambda n: n == name)
    with pytest.raises(CheckpointMismatchError,
                       match=rf"{prefix} lacks 1 weight\(s\) .*e.g. {name}\."):
        model_class.from_checkpoint(prefix, config=folder / "bert_config.json",
                                    **kwargs)


def test_nothing_there_is_named(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match=str(tmp_path)):
        BertClassifier.from_checkpoint(tmp_path, num_labels=2)


def test_fine_tuned_output_dir_and_best(fixtures_dir, tmp_path):
    """A scripts' output_dir: newest model.ckpt-N per its state file; the
    config found through init_checkpoint.txt; best/ one level down."""
    folder = fixtures_dir / "tf1_tiny_classifier"
    model = BertClassifier.from_checkpoint(folder)
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    (output_dir / "init_checkpoint.txt").write_text(
        str(folder / "bert_model.ckpt") + "\n")
    older = BertClassifier(model.config, 3)  # random weights, step 1
    checkpoints.save_tf1_checkpoint(older, str(output_dir / "model.ckpt-1"))
    checkpoints.save_tf1_checkpoint(model, str(output_dir / "model.ckpt-2"))
    (output_dir / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "model.ckpt-1"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n')
    loaded = BertClassifier.from_checkpoint(output_dir)
    assert_matches_reference(loaded, folder, ["classifier_logits"])
    best = output_dir / "best"
    best.mkdir()
    for path in output_dir.glob("model.ckpt-2.*"):
        shutil.copy(path, best / path.name)
    (best / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-2"\n')
    assert_matches_reference(BertClassifier.from_checkpoint(best), folder,
                             ["classifier_logits"])
    # Without any config to be found, the error says to pass config=.
    (output_dir / "init_checkpoint.txt").unlink()
    with pytest.raises(FileNotFoundError, match="pass config="):
        BertClassifier.from_checkpoint(output_dir)
    explicit = BertClassifier.from_checkpoint(
        output_dir, config=folder / "bert_config.json")
    assert_matches_reference(explicit, folder, ["classifier_logits"])


def test_hugging_face_and_keras_hub_folders(fixtures_dir, tmp_path):
    folder = fixtures_dir / "tf1_tiny_classifier"
    hf = convert("tf1", str(folder), "huggingface", str(tmp_path / "hf"))
    model = BertClassifier.from_checkpoint(hf)
    assert_matches_reference(model, folder, ["classifier_logits"])
    hub = convert("tf1", str(folder), "keras_hub", str(tmp_path / "hub"),
                  encoder_only=True)
    encoder = BertModel.from_checkpoint(hub)
    classifier = BertClassifier.from_checkpoint(hub, num_labels=3)
    assert_matches_reference(classifier, folder, ["pooled_output"])
    assert encoder.config.hidden_size == 64


def test_masked_lm_only_checkpoint_loads_into_the_pretrainer(
        fixtures_dir, tmp_path, monkeypatch):
    """transformers' BertForMaskedLM: no next-sentence head, no pooler."""
    import json

    from safetensors.numpy import load_file, save_file

    folder = fixtures_dir / "tf1_tiny_pretraining"
    hf = tmp_path / "mlm"
    convert("tf1", str(folder), "huggingface", str(tmp_path / "full"))
    tensors = {name: value for name, value in load_file(
        tmp_path / "full" / "model.safetensors").items()
        if not name.startswith(("cls.seq_relationship", "bert.pooler"))}
    hf.mkdir()
    save_file(tensors, str(hf / "model.safetensors"))
    config = json.loads((tmp_path / "full" / "config.json").read_text())
    config["architectures"] = ["BertForMaskedLM"]
    (hf / "config.json").write_text(json.dumps(config))
    warnings = []
    monkeypatch.setattr(logging, "warning",
                        lambda message, *args: warnings.append(
                            message % args))
    model = BertPretrainer.from_checkpoint(hf)
    assert any("cls/seq_relationship/output_weights" in w for w in warnings)
    assert_matches_reference(model, folder, ["masked_lm_log_probs"])


def test_encoder_is_shared(fixtures_dir):
    folder = fixtures_dir / "tf1_tiny_classifier"
    encoder = BertModel(BertConfig.from_json_file(folder / "bert_config.json"))
    model = BertClassifier.from_checkpoint(folder, encoder=encoder)
    assert model.bert is encoder
    assert_matches_reference(model, folder, ["classifier_logits"])
    # The encoder now holds the checkpoint's weights too.
    reference = reference_outputs(folder)
    out = encoder({key: reference[key] for key in
                   ("input_ids", "input_mask", "segment_ids")})
    assert np.max(np.abs(np.asarray(out["pooled_output"])
                         - reference["pooled_output"])) <= TOLERANCE
    squad = BertSquad(encoder=encoder)
    assert squad.bert is encoder and squad.config is encoder.config
    with pytest.raises(TypeError, match="encoder= must be a BertModel"):
        BertSquad(encoder=model)


def test_pytorch_folder_says_save_as_safetensors_first(tmp_path):
    """config.json with pytorch_model.bin only: the project's own words,
    not a missing TF1 checkpoint."""
    from bert_tf1.data.io.errors import MissingFileError

    (tmp_path / "config.json").write_text(
        '{"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2, '
        '"num_attention_heads": 2, "intermediate_size": 64, '
        '"vocab_size": 99}')
    (tmp_path / "pytorch_model.bin").write_bytes(b"not read")
    with pytest.raises(MissingFileError, match=(
            f"in {tmp_path}; a pytorch_model.bin must first be saved as "
            "safetensors")):
        BertModel.from_checkpoint(tmp_path)
