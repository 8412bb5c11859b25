"""SavedModels that serve BERT from raw text: classifier, SQuAD, encoder,
tagger (NER) and multiple choice (use from Python: docs/serving.md and
docs/python_api.md). Tokenizing and packing run inside the graph
(`bert_tf1.serving.text_module`); loading an export needs `import
tensorflow_text` first (`bert_tf1.serving.predictions`).
"""
import os
import tempfile

import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import write_directory_atomically
from bert_tf1.data.io.errors import OutputExistsError, UserError
from bert_tf1.data.tokenization import BertPreprocessor, full_tokenizer
from bert_tf1.data.tokenization.preprocessor import VOCAB_ASSET
from bert_tf1.data.tokenization.vocab import load_vocab, validate_vocab_size
from bert_tf1.modeling.interop import sources
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.pooling import POOLINGS
from bert_tf1.modeling.models import (BertClassifier, BertModel, BertMultipleChoice,
                                      BertSquad, BertTokenClassifier)
from bert_tf1.serving.classifier import ClassifierServing
from bert_tf1.serving.entity_spans import label_tables
from bert_tf1.serving.encoder import EncoderServing
from bert_tf1.serving.multiple_choice import MultipleChoiceServing
from bert_tf1.serving.squad import SquadServing
from bert_tf1.serving.tagger import TaggerServing

MODEL_TYPES = ("classifier", "squad", "encoder", "tagger", "multiple_choice")
# Each model type's model class and the head it needs in the checkpoint
# (None: the encoder only).
_MODELS = {"classifier": (BertClassifier, "output_weights"),
           "squad": (BertSquad, "cls/squad/output_weights"),
           "tagger": (BertTokenClassifier, "cls/tagging/output_weights"),
           "multiple_choice": (BertMultipleChoice,
                               "cls/multiple_choice/output_weights"),
           "encoder": (BertModel, None)}


class ExportExistsError(OutputExistsError):
    """The export directory exists; an export never replaces one."""



def _load_model(model_type, config, init_checkpoint, label_list,
                num_labels=None):
    """The task model with every weight from `init_checkpoint` (any folder
    `bert_tf1.modeling.interop.sources.find_checkpoint` reads); a weight it lacks is
    a UserError."""
    source = sources.find_checkpoint(init_checkpoint, config)
    model_class, head_name = _MODELS[model_type]
    if model_type == "tagger":
        _check_tagger_labels(label_list,
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
                    "export it as model_type encoder.")
        raise UserError(
            f"Checkpoint {status.checkpoint} lacks {len(status.missing)} "
            f"weight(s) of the {model.name} model, e.g. "
            f"{', '.join(status.missing[:3])}.{hint}")
    return model


def _check_tagger_labels(label_list, rows, head):
    """A tagger's label list is given and fits its head of `rows` labels."""
    if not label_list:
        raise UserError("A tagger export needs its label list (the "
                        "label_list.txt run_ner.py writes; "
                        "--label_list_file).")
    try:
        label_tables(label_list)
    except ValueError as error:
        raise UserError(f"Tagger label list: {error}.") from None
    if rows is not None and rows != len(label_list):
        raise UserError(
            f"The label list has {len(label_list)} labels but {head} has "
            f"{rows} rows: use the label_list.txt of the run that wrote "
            "this checkpoint.")


def _check_arguments(model_type, max_seq_length, max_query_length,
                     doc_stride, pooling):
    """The checks that need no model (before one is loaded)."""
    if model_type not in MODEL_TYPES:
        raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)}; "
                        f"got {model_type!r}.")
    if pooling not in POOLINGS:
        raise UserError(f"pooling must be one of {', '.join(POOLINGS)}; got "
                        f"{pooling!r}.")
    if model_type == "squad" and max_seq_length <= max_query_length + 3:
        raise UserError(
            f"max_seq_length ({max_seq_length}) must be greater than "
            f"max_query_length ({max_query_length}) + 3, as in run_squad.py.")
    if model_type == "tagger" and doc_stride < 1:
        raise UserError(f"doc_stride={doc_stride}: the windows would not "
                        "advance; use at least 1.")


QUANTIZATIONS = ("int8",)


def preprocessor_of(model, preprocessor=None):
    """`preprocessor`, else `model.preprocessor`: a `BertPreprocessor` with
    a `sequence_length` (it holds the vocab, casing and max_seq_length).

    Raises:
        UserError: neither is such a preprocessor.
    """
    preprocessor = preprocessor or getattr(model, "preprocessor", None)
    if not isinstance(preprocessor, BertPreprocessor) or (
            preprocessor.sequence_length is None):
        raise UserError(
            "This needs a BertPreprocessor with a sequence_length (the "
            "model's preprocessor= or preprocessor=), e.g. "
            "BertPreprocessor.from_checkpoint(path, sequence_length=128).")
    if not os.path.isfile(preprocessor.tokenizer.vocab_file):
        # Loaded from a .keras file, whose assets folder Keras removed.
        folder = tempfile.mkdtemp(prefix="bert_vocab_")
        preprocessor.save_assets(folder)
        preprocessor.tokenizer.vocab_file = os.path.join(folder, VOCAB_ASSET)
    return preprocessor


def serving_module(model, label_list=None, preprocessor=None,
                   max_query_length=64, max_answer_length=30, n_best_size=20,
                   doc_stride=128, quantize=None, pooling="mean",
                   l2_normalize=False):
    """The tf.Module that `export_model` saves: an in-memory model served
    from raw text by its preprocessor; usable eagerly too.

    Args:
        model: a `BertClassifier`, `BertSquad`, `BertTokenClassifier`,
            `BertMultipleChoice` or `BertModel` (the encoder), its weights
            as they are now (shared, not copied).
        label_list: classifier labels in id order (None: "0", "1", ...,
            or a regression for `num_labels` 1); a tagger's tags in id
            order (required).
        preprocessor: a `bert_tf1.data.tokenization.BertPreprocessor` with a
            `sequence_length` (its vocab, casing and length are served);
            default `model.preprocessor`.
        max_query_length, max_answer_length, n_best_size, doc_stride: as
            run_squad.py's and run_ner.py's flags.
        quantize: None, or "int8" (`bert_tf1.modeling.inference.int8`).
        pooling, l2_normalize: an encoder's `embed_text` (`bert_tf1.modeling.pooling`).

    Returns:
        ClassifierServing, SquadServing, EncoderServing, TaggerServing or
        MultipleChoiceServing; `.signatures()` maps names to tf.functions.

    Raises:
        UserError: another kind of model, no preprocessor, labels missing
            or not fitting the head, a vocab or length that does not fit
            the config, an unknown pooling or quantization.
    """
    model_type = next((name for name, (cls, _) in _MODELS.items()
                       if isinstance(model, cls)), None)
    if model_type is None:
        raise UserError(f"Cannot export a {type(model).__name__}: expected "
                        + ", ".join(cls.__name__ for cls, _ in
                                    _MODELS.values()) + ".")
    preprocessor = preprocessor_of(model, preprocessor)
    max_seq_length = preprocessor.sequence_length
    _check_arguments(model_type, max_seq_length, max_query_length,
                     doc_stride, pooling)
    model.config.check_sequence_length(max_seq_length, "sequence_length",
                                       minimum=3)
    vocab = load_vocab(preprocessor.tokenizer.vocab_file)
    validate_vocab_size(vocab, model.config.vocab_size,
                        preprocessor.tokenizer.vocab_file, "of the model")
    if model_type == "tagger":
        _check_tagger_labels(label_list, model.num_labels, "the model's head")
    if model_type == "classifier" and label_list is None:
        label_list = ([str(i) for i in range(model.num_labels)]
                      if model.num_labels > 1 else None)
    if quantize:
        if quantize not in QUANTIZATIONS:
            raise UserError(f"--quantize={quantize}: expected one of "
                            f"{', '.join(QUANTIZATIONS)}")
        from bert_tf1.modeling.inference.int8 import quantize_int8

        model = quantize_int8(model)

    tokenizer = preprocessor.tokenizer
    special = dict(cls_id=preprocessor.cls_id, sep_id=preprocessor.sep_id)
    if model_type == "classifier":
        return ClassifierServing(model, tokenizer, max_seq_length,
                                 label_list=label_list, **special)
    if model_type == "squad":
        inverse = {index: token for token, index in vocab.items()}
        return SquadServing(model, tokenizer, max_seq_length,
                            vocab_tokens=[inverse.get(i, "")
                                          for i in range(max(inverse) + 1)],
                            max_query_length=max_query_length,
                            max_answer_length=max_answer_length,
                            n_best_size=n_best_size, **special)
    if model_type == "tagger":
        return TaggerServing(model, tokenizer, max_seq_length, doc_stride,
                             unk_id=tokenizer.unk_id, label_list=label_list,
                             **special)
    if model_type == "multiple_choice":
        return MultipleChoiceServing(model, tokenizer, max_seq_length,
                                     **special)
    return EncoderServing(model, tokenizer, max_seq_length,
                          pooling=pooling, l2_normalize=l2_normalize,
                          **special)


def build_serving_module(model_type, bert_config_file, vocab_file,
                         init_checkpoint, do_lower_case=True,
                         max_seq_length=128, label_list=None, num_labels=None,
                         **kwargs):
    """`serving_module` of the model in `init_checkpoint`, given the paths
    and settings of training (export_saved_model.py's flags).

    Args:
        model_type: one of `MODEL_TYPES`.
        bert_config_file, vocab_file, do_lower_case, max_seq_length: as
            used for training; init_checkpoint: a prefix or folder.
        label_list: classifier labels in id order (None with `num_labels` 1:
            regression; else `num_labels` names them "0", "1", ...); a
            tagger's tags in id order (required).
        **kwargs: the other arguments of `serving_module`.

    Returns:
        as `serving_module`.

    Raises:
        UserError: unknown model_type or pooling, missing or unfitting
            labels, max_seq_length out of range, doc_stride < 1, a missing
            vocab, config or checkpoint, a checkpoint lacking weights, a
            vocab that does not fit the config.
        bert_tf1.modeling.checkpoints.CheckpointMismatchError: shapes differ.
    """
    _check_arguments(model_type, max_seq_length,
                     kwargs.get("max_query_length", 64),
                     kwargs.get("doc_stride", 128),
                     kwargs.get("pooling", "mean"))
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
    return serving_module(model, label_list, preprocessor, **kwargs)


def track_captured_variables(module, signatures):
    """Tracks the tf.Variables the signatures capture on `module`, as
    `keras.export.ExportArchive` does, so loaders that run the TF1 graph
    (`saved_model_cli run`, TensorFlow Serving) find them (tensorflow/tensorflow
    issue 72963)."""
    seen, captured = set(), []
    for function in signatures.values():
        for variable in function.get_concrete_function().variables:
            if id(variable) not in seen:
                seen.add(id(variable))
                captured.append(variable)
    module.captured_variables = captured


def _write(export_dir, build):
    """Writes the SavedModel of `build()` (a `serving_module`) at export_dir,
    atomically (the vocab in `assets/`), after checking that it is new."""
    export_dir = os.fspath(export_dir).rstrip("/")
    if tf.io.gfile.exists(export_dir):
        raise ExportExistsError(
            f"Export directory {export_dir} already exists; not overwriting "
            "it. Choose a new directory.")
    module = build()
    signatures = module.signatures()
    track_captured_variables(module, signatures)
    write_directory_atomically(
        export_dir, lambda tmp_dir: tf.saved_model.save(
            module, tmp_dir, signatures=signatures))
    logging.info("Wrote SavedModel %s with signatures %s.", export_dir,
                 ", ".join(sorted(signatures)))
    return export_dir


def export_model(model, export_dir, label_list=None, **kwargs):
    """Writes `serving_module(model, label_list, **kwargs)`, an in-memory
    model and its preprocessor, as the raw-text SavedModel of
    export_saved_model.py; returns export_dir.

    Raises:
        ExportExistsError: export_dir already exists (never overwritten).
        The errors of `serving_module`.
    """
    return _write(export_dir,
                  lambda: serving_module(model, label_list, **kwargs))


def export_saved_model(export_dir, **kwargs):
    """`export_model` of the model loaded from paths by
    `build_serving_module(**kwargs)` (export_saved_model.py's flags);
    returns export_dir.

    Raises:
        ExportExistsError: export_dir already exists (never overwritten).
        The errors of `build_serving_module`.
    """
    return _write(export_dir, lambda: build_serving_module(**kwargs))
