"""Exporting a served model (docs/serving.md, docs/deploying.md): one road
from any model to every runtime. `export_model` writes an in-memory model
(built, fine-tuned with `fit`, LoRA merged, or loaded; a serving module of
`bert_tf1.serving.modules`) as the raw-text SavedModel, or as any of the
formats (`bert_tf1.serving.formats.FORMATS`: saved_model, numeric,
openvino, litert, onnx), each folder with its `export_info.json`;
`export_saved_model` does the same for the model of a checkpoint
(export_saved_model.py). `bert_tf1.serving.predictions` reads every format.
"""
import os

from bert_tf1.data.io.errors import OutputExistsError, UserError
from bert_tf1.data.tokenization import BertPreprocessor, full_tokenizer
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.interop import sources
from bert_tf1.serving import formats as formats_module
from bert_tf1.serving.formats.writer import write_formats, write_saved_model
from bert_tf1.serving.modules import (MODELS, check_arguments,
                                      check_tagger_labels, model_type_of,
                                      preprocessor_of, served_settings,
                                      serving_module)


class ExportExistsError(OutputExistsError):
    """The export directory exists; an export never replaces one."""


def _load_model(model_type, config, init_checkpoint, label_list,
                num_labels=None):
    """The task model with every weight from `init_checkpoint` (any folder
    `bert_tf1.modeling.interop.sources.find_checkpoint` reads); a weight it lacks is
    a UserError."""
    source = sources.find_checkpoint(init_checkpoint, config)
    model_class, head_name = MODELS[model_type]
    if model_type == "tagger":
        check_tagger_labels(label_list,
                            sources.head_size(source, head_name),
                            f"{head_name} in {source.path}")
    labels = ({"num_labels": len(label_list) if label_list
               else num_labels or 1}
              if model_type in ("classifier", "tagger") else {})
    model = model_class(config=source.config, **labels)
    status = sources.load_weights_from(model, source)
    if status.missing:
        hint = ""
        if head_name and head_name in status.missing:
            hint = (f" It has no `{head_name}`: export a checkpoint fine-tuned "
                    "for this task (the output_dir of run_classifier.py, "
                    "run_squad.py, run_ner.py or run_multiple_choice.py), or "
                    "export it as model_type encoder; a model of your own "
                    "create_model is exported by its run's --export_dir "
                    "(docs/custom_models.md).")
        raise UserError(
            f"Checkpoint {status.checkpoint} lacks {len(status.missing)} "
            f"weight(s) of the {model.name} model, e.g. "
            f"{', '.join(status.missing[:3])}.{hint}")
    foreign = [name for name in status.unused if not _stock_name(name)] if (
        source.kind == "tf1") else []
    if foreign:
        # A checkpoint of a create_model of your own (e.g. an embedder with
        # a projection layer): rebuilding the stock model would drop them.
        raise UserError(
            f"Checkpoint {status.checkpoint} holds {len(foreign)} weight(s) "
            f"no stock model has, e.g. {', '.join(foreign[:3])}: a model of "
            "your own create_model, which the stock "
            f"{model.name} model would silently leave out; export it with "
            "its run's --export_dir (docs/custom_models.md).")
    return model


def _stock_name(name):
    """True for a TF1 weight name some stock model or its run writes (the
    encoder, the heads, the step counter)."""
    return (name.startswith(("bert/", "cls/")) or name in (
        "output_weights", "output_bias", "global_step"))


#: The arguments of `load_served_model` that only loading takes.
_LOADING = ("model_type", "bert_config_file", "vocab_file", "init_checkpoint",
            "do_lower_case", "max_seq_length", "label_list", "num_labels")


def load_served_model(model_type, bert_config_file, vocab_file,
                      init_checkpoint, do_lower_case=True,
                      max_seq_length=128, label_list=None, num_labels=None,
                      **rules):
    """(task model, `BertPreprocessor`) of the model in `init_checkpoint`,
    given the paths and settings of training (export_saved_model.py's
    flags); `rules`, the other arguments of `serving_module`, are checked
    before anything is loaded.

    Args:
        model_type: one of `MODEL_TYPES`.
        bert_config_file, vocab_file, do_lower_case, max_seq_length: as
            used for training; init_checkpoint: a prefix or folder.
        label_list: classifier labels in id order (None with `num_labels` 1:
            regression; else `num_labels` names them "0", "1", ...); a
            tagger's tags in id order (required).

    Raises:
        UserError: unknown model_type or pooling, missing or unfitting
            labels, max_seq_length out of range, doc_stride < 1, a missing
            vocab, config or checkpoint, a checkpoint lacking weights, a
            vocab that does not fit the config.
        bert_tf1.modeling.checkpoints.CheckpointMismatchError: shapes differ.
    """
    check_arguments(model_type, max_seq_length,
                     rules.get("max_query_length", 64),
                     rules.get("doc_stride", 128),
                     rules.get("pooling", "mean"))
    config = BertConfig.from_json_file(bert_config_file)
    config.check_sequence_length(max_seq_length, "--max_seq_length",
                                 bert_config_file, minimum=3)
    full_tokenizer.tokenizer_for_model(vocab_file, do_lower_case,
                                       config.vocab_size, bert_config_file)
    preprocessor = BertPreprocessor(vocab_file, do_lower_case, max_seq_length)
    if model_type == "classifier" and label_list is None and not num_labels:
        raise UserError("A classifier export needs label_list or "
                        "num_labels (e.g. --task_name=MRPC).")
    # The model first: a checkpoint that does not fit fails fast.
    model = _load_model(model_type, config, init_checkpoint, label_list,
                        num_labels)
    return model, preprocessor


def build_serving_module(model_type, **kwargs):
    """`serving_module` of `load_served_model(model_type, **kwargs)` (its
    arguments and the other ones of `serving_module`).

    Raises:
        The errors of `load_served_model` and `serving_module`.
    """
    model, preprocessor = load_served_model(model_type, **kwargs)
    rules = {key: value for key, value in kwargs.items()
             if key not in _LOADING}
    return serving_module(model, kwargs.get("label_list"), preprocessor,
                          model_type=model_type, **rules)


def _check_new(export_dir):
    export_dir = os.fspath(export_dir).rstrip("/")
    if os.path.exists(export_dir):
        raise ExportExistsError(
            f"Export directory {export_dir} already exists; not overwriting "
            "it. Choose a new directory.")
    return export_dir


def export_model(model, export_dir, label_list=None, formats=None,
                 quantize=None, serving_version=None, preprocessor=None,
                 model_type=None, **kwargs):
    """Writes an in-memory model as an export; returns export_dir.

    Args:
        model, label_list, preprocessor, model_type, **kwargs: as
            `serving_module` (a model of any type, fine-tuned with `fit`,
            LoRA merged, loaded, or your own of a type's contract; a
            `SentenceEmbedder` exports as an encoder with its own pooling
            and L2 normalisation).
        formats: None: the raw-text SavedModel at export_dir (with its
            export_info.json); else a list of `FORMATS`: one folder each
            under export_dir (docs/deploying.md).
        quantize: None or "int8": each format's own int8 (the numeric
            SavedModel stays float32).
        serving_version: with formats, TF Serving's layout `N/` for the two
            SavedModels.

    Raises:
        ExportExistsError: export_dir already exists (never overwritten).
        UserError: the errors of `serving_module`, an unknown format or a
            converter's library not installed, a converter refusing the
            model.
    """
    export_dir = _check_new(export_dir)
    if formats is not None:
        formats_module.check_formats(list(formats), serving_version)
    elif serving_version is not None:
        raise UserError("serving_version sets the TF Serving layout of "
                        "formats=[\"saved_model\", \"numeric\"]; give formats.")
    model_type = model_type or model_type_of(model)
    preprocessor = preprocessor_of(model, preprocessor)
    arguments = dict(kwargs, label_list=label_list, preprocessor=preprocessor,
                     model_type=model_type)
    module = serving_module(model, **arguments)
    settings = served_settings(module, model_type, preprocessor.do_lower_case)
    # SQuAD's windows advance by doc_stride in Python (the raw-text graph
    # reads one window and does not keep it).
    settings.doc_stride = kwargs.get("doc_stride", settings.doc_stride)
    quantized = (serving_module(model, quantize=quantize, **arguments)
                 if quantize else None)
    vocab_file = preprocessor.tokenizer.vocab_file
    if formats is None:
        write_saved_model(export_dir, quantized or module, settings,
                          vocab_file, quantized=bool(quantize))
    else:
        write_formats(export_dir, list(formats), module, settings, vocab_file,
                      quantized, serving_version)
    return export_dir


def export_saved_model(export_dir, formats=None, quantize=None,
                       serving_version=None, **kwargs):
    """`export_model` of the model in a checkpoint
    (`load_served_model(**kwargs)`: export_saved_model.py's flags);
    returns export_dir.

    Raises:
        ExportExistsError: export_dir already exists (never overwritten).
        The errors of `load_served_model` and `export_model`.
    """
    export_dir = _check_new(export_dir)
    if formats is not None:
        formats_module.check_formats(list(formats), serving_version)
    model, preprocessor = load_served_model(**kwargs)
    rules = {key: value for key, value in kwargs.items()
             if key not in _LOADING}
    return export_model(model, export_dir, kwargs.get("label_list"),
                        formats=formats, quantize=quantize,
                        serving_version=serving_version,
                        preprocessor=preprocessor,
                        model_type=kwargs["model_type"], **rules)
