"""Issue #38: files of another kind than BERT are named, BERT variants the
readers take stay accepted (bert_tf1/modeling/checkpoints/model_kind.py and the
readers that call it). The bad-input table runs the scripts on such files;
here each check on its own, and the accepted BERT files end to end."""
import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from bert_tf1.data.glue.metrics import task_metric_names, task_metrics
from bert_tf1.modeling import BertPretrainer, checkpoints
from bert_tf1.modeling.checkpoints import model_kind
from bert_tf1.modeling.checkpoints.model_kind import OtherModelError
from bert_tf1.modeling.conversion.convert import convert, read_weights
from bert_tf1.serving.formats.info import open_export_folder
from bert_tf1.tasks.errors import UserError
from tests.helpers import foreign_models


@pytest.mark.parametrize("hf", [
    {"model_type": "bert", "architectures": ["BertForMaskedLM"]},
    {"model_type": "bert", "architectures": ["TFBertForSequenceClassification"]},
    {"architectures": ["FlaxBertForPreTraining"]},
    {"model_type": "bert"},
    {},  # older files have neither
])
def test_bert_configs_are_accepted(hf):
    model_kind.check_hf_config(hf, "config.json")


@pytest.mark.parametrize("hf, named", [
    ({"model_type": "roberta", "architectures": ["RobertaModel"]},
     "model_type 'roberta' (architectures RobertaModel)"),
    ({"model_type": "xlm-roberta"}, "model_type 'xlm-roberta'"),
    ({"model_type": "bert", "architectures": ["ElectraForPreTraining"]},
     "architectures ElectraForPreTraining"),
    ({"architectures": ["BertModel", "AlbertModel"]},
     "architectures AlbertModel"),
])
def test_other_configs_are_named(hf, named):
    with pytest.raises(OtherModelError, match="^x/config.json: ") as error:
        model_kind.check_hf_config(hf, "x/config.json")
    assert named in str(error.value)
    assert isinstance(error.value, UserError)


def test_tensor_prefixes():
    bert = ["bert.embeddings.word_embeddings.weight", "cls.predictions.bias",
            "classifier.weight", "qa_outputs.bias"]
    bare = ["embeddings.word_embeddings.weight", "pooler.dense.bias",
            "encoder.layer.0.output.dense.weight"]
    model_kind.check_hf_tensors(bert, "m.safetensors")
    model_kind.check_hf_tensors(bare, "m.safetensors")
    for other in ("roberta.", "distilbert.", "electra.", "lm_head."):
        with pytest.raises(OtherModelError, match=f"'{other}' of another"):
            model_kind.check_hf_tensors(bert + [other + "dense.weight"],
                                        "m.safetensors")


def test_keras_hub_backbone_class():
    model_kind.check_keras_hub_config({"class_name": "BertBackbone"}, "c")
    with pytest.raises(OtherModelError, match="a DistilBertBackbone preset"):
        model_kind.check_keras_hub_config(
            {"class_name": "DistilBertBackbone"}, "c")


def test_every_fixture_checkpoint_is_bert(fixtures_dir):
    folders = [path for path in fixtures_dir.glob("tf1_*") if path.is_dir()]
    assert len(folders) >= 4
    for folder in folders:
        prefix = checkpoints.resolve_checkpoint(folder)
        model_kind.check_tf1_names(checkpoints.list_checkpoint(prefix),
                                   prefix)


@pytest.mark.parametrize("names, what", [
    (foreign_models.ALBERT_VARIABLES, "ALBERT"),
    (foreign_models.ELECTRA_VARIABLES, "ELECTRA"),
    (["generator/embeddings/word_embeddings"], "ELECTRA"),
    (["bert/embeddings/word_embeddings", "roberta/encoder/x"], "roberta"),
])
def test_other_tf1_checkpoints_are_named(names, what):
    with pytest.raises(OtherModelError, match=f"ckpt: a checkpoint of {what}"):
        model_kind.check_tf1_names(names, "ckpt")


def test_python_api_refuses_an_albert_checkpoint(tmp_path):
    from bert_tf1.modeling import BertClassifier

    prefix = foreign_models.tf1_checkpoint(tmp_path / "albert/model.ckpt",
                                           foreign_models.ALBERT_VARIABLES)
    with pytest.raises(OtherModelError, match="a checkpoint of ALBERT"):
        BertClassifier.from_checkpoint(prefix, num_labels=2)
    with pytest.raises(OtherModelError, match=str(prefix)):
        read_weights("tf1", str(prefix))


def test_masked_lm_folder_is_read_and_roberta_is_refused(fixtures_dir,
                                                          tmp_path):
    """A BertForMaskedLM folder (no pooler, no next-sentence head) is still
    read, each tensor as it was; the same file called RoBERTa, or with roberta.* tensors, and
    the Python API's from_checkpoint of it, are refused."""
    folder = fixtures_dir / "tf1_tiny_pretraining"
    full = convert("tf1", str(folder), "huggingface", str(tmp_path / "full"))
    tensors = {name: value for name, value in load_file(
        f"{full}/model.safetensors").items()
        if not name.startswith(("cls.seq_relationship", "bert.pooler"))}
    config = json.loads((tmp_path / "full" / "config.json").read_text())
    mlm = tmp_path / "mlm"
    mlm.mkdir()
    save_file(tensors, str(mlm / "model.safetensors"))
    (mlm / "config.json").write_text(json.dumps(
        dict(config, architectures=["BertForMaskedLM"])))
    original, _ = read_weights("tf1", str(folder))
    weights, _ = read_weights("huggingface", str(mlm))
    assert sorted(weights) == sorted(
        name for name in original if not name.startswith(
            ("bert/pooler", "cls/seq_relationship")))
    for name in weights:
        np.testing.assert_array_equal(weights[name], original[name])
    BertPretrainer.from_checkpoint(mlm)  # loads (next-sentence head new)

    roberta = tmp_path / "roberta"
    roberta.mkdir()
    save_file(tensors, str(roberta / "model.safetensors"))
    (roberta / "config.json").write_text(json.dumps(
        dict(config, model_type="roberta", architectures=["RobertaForMaskedLM"])))
    with pytest.raises(OtherModelError, match="model_type 'roberta'"):
        BertPretrainer.from_checkpoint(roberta)
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    save_file({name.replace("bert.", "roberta.", 1): value
               for name, value in tensors.items()},
              str(renamed / "model.safetensors"))
    (renamed / "config.json").write_text((mlm / "config.json").read_text())
    with pytest.raises(OtherModelError, match="'roberta.' of another model"):
        convert("huggingface", str(renamed), "tf1", str(tmp_path / "no"))
    assert not (tmp_path / "no").exists()


def test_an_export_of_another_type_than_the_flag(tmp_path):
    (tmp_path / "export_info.json").write_text(json.dumps({
        "format": "onnx", "model_type": "tagger", "max_seq_length": 16,
        "do_lower_case": True, "labels": ["O", "B-X", "I-X"], "files": {}}))
    with pytest.raises(UserError, match=f"{tmp_path} serves a tagger model, "
                       "not --model_type=classifier"):
        open_export_folder(tmp_path, "classifier")


@pytest.mark.parametrize("task", ["MRPC", "QQP", "CoLA", "STS-B", "SST-2",
                                  "RTE"])
def test_glue_metric_names_are_those_computed(task):
    """--keep_best_checkpoint is checked against these names before
    training; they must be the keys `task_metrics` returns."""
    logits = np.array([[0.2, 0.8], [0.9, 0.1], [0.3, 0.7]], np.float32)
    labels = np.array([1, 0, 0])
    if task == "STS-B":
        logits, labels = np.array([[0.5], [2.0], [4.0]]), np.array(
            [1.0, 2.5, 3.0])
    assert sorted(task_metrics(task, logits, labels)) == sorted(
        task_metric_names(task))
