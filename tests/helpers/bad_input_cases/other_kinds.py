"""Bad inputs of issue #38's second sweep: a model file of another kind
than BERT (RoBERTa, DistilBERT, ELECTRA, ALBERT, ...) is named with what it
is and what was expected, never converted or loaded as BERT. The files are
tiny ones written by tests/helpers/foreign_models.py."""
from tests.helpers import foreign_models
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    MRPC_HEADER, MRPC_ROWS, _classifier, _convert, _export, _mrpc_data)

_HF_TO_TF1 = {"input_format": "huggingface", "output_format": "tf1"}


@case("convert_checkpoint.py")
def convert_hugging_face_roberta_config(folder):
    hf = foreign_models.hf_folder(
        folder / "roberta", dict(foreign_models.HF_BERT, model_type="roberta",
                                 architectures=["RobertaModel"]),
        foreign_models.ROBERTA_TENSORS)
    return (_convert(folder, input_path=hf, output_path=folder / "tf1",
                     **_HF_TO_TF1),
            [str(hf / "config.json"), "model_type 'roberta'",
             "RobertaModel", "'bert'"])


@case("convert_checkpoint.py")
def convert_hugging_face_architecture_of_another_model(folder):
    # No model_type (older files): `architectures` says what it is.
    hf = foreign_models.hf_folder(
        folder / "distil", dict(foreign_models.HF_BERT,
                                architectures=["DistilBertForMaskedLM"]),
        ["distilbert.embeddings.word_embeddings.weight"])
    return (_convert(folder, input_path=hf, output_path=folder / "tf1",
                     **_HF_TO_TF1),
            [str(hf / "config.json"), "DistilBertForMaskedLM", "Bert"])


@case("convert_checkpoint.py")
def convert_hugging_face_tensors_of_another_model(folder):
    # The config says BERT, the weights are ELECTRA's.
    hf = foreign_models.hf_folder(
        folder / "electra", dict(foreign_models.HF_BERT, model_type="bert"),
        ["electra.embeddings.word_embeddings.weight",
         "discriminator_predictions.dense.weight"])
    return (_convert(folder, input_path=hf, output_path=folder / "tf1",
                     **_HF_TO_TF1),
            [str(hf / "model.safetensors"),
             "'discriminator_predictions.' of another model", "bert.*"])


@case("convert_checkpoint.py")
def convert_keras_hub_preset_of_another_backbone(folder):
    preset = foreign_models.keras_hub_preset(folder / "hub",
                                             "RobertaBackbone")
    return (_convert(folder, input_format="keras_hub", input_path=preset,
                     output_path=folder / "hf"),
            [str(preset / "config.json"), "RobertaBackbone", "BertBackbone"])


@case("convert_checkpoint.py")
def convert_albert_tf1_checkpoint(folder):
    prefix = foreign_models.tf1_checkpoint(
        folder / "albert/model.ckpt", foreign_models.ALBERT_VARIABLES)
    return (_convert(folder, input_path=prefix),
            [str(prefix), "ALBERT", "bert/encoder/layer_"])


@case("convert_checkpoint.py")
def convert_electra_tf1_checkpoint(folder):
    prefix = foreign_models.tf1_checkpoint(
        folder / "electra/model.ckpt", foreign_models.ELECTRA_VARIABLES)
    return (_convert(folder, input_path=prefix),
            [str(prefix), "ELECTRA", "bert/"])


@case("run_classifier.py")
def classifier_init_checkpoint_is_albert(folder):
    prefix = foreign_models.tf1_checkpoint(
        folder / "albert/model.ckpt", foreign_models.ALBERT_VARIABLES)
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, init_checkpoint=prefix),
            [str(prefix), "ALBERT"])


@case("export_saved_model.py")
def export_init_checkpoint_is_electra(folder):
    prefix = foreign_models.tf1_checkpoint(
        folder / "electra/model.ckpt", foreign_models.ELECTRA_VARIABLES)
    return (_export(folder, init_checkpoint=prefix),
            [str(prefix), "ELECTRA"])
