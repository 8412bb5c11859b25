"""Serving modules: an in-memory task model served from raw text by its
preprocessor (`serving_module`), one class per model type on the shared
`bert_tf1.serving.text_module`; the settings an export records
(`served_settings`). Tokenizing and packing run inside the graph; loading a
saved one needs `import tensorflow_text` first.

A `SentenceEmbedder` is served as model type `encoder`: its `BertModel`
with its own pooling and L2 normalisation (`served_encoder`), so every
format's `embedding` is the vector the embedder gives in memory.
"""
import os
import tempfile

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.data.tokenization.preprocessor import VOCAB_ASSET
from bert_tf1.data.tokenization.vocab import load_vocab, validate_vocab_size
from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.models import (BertClassifier, BertModel,
                                      BertMultipleChoice, BertSquad,
                                      BertTokenClassifier, SentenceEmbedder)
from bert_tf1.modeling.pooling import POOLINGS
from bert_tf1.serving.classifier import ClassifierServing
from bert_tf1.serving.encoder import EncoderServing
from bert_tf1.serving.entity_spans import label_tables
from bert_tf1.serving.formats.info import MODEL_TYPES, ServedSettings
from bert_tf1.serving.multiple_choice import MultipleChoiceServing
from bert_tf1.serving.squad import SquadServing
from bert_tf1.serving.tagger import TaggerServing

# Each model type's model class and the head it needs in a checkpoint
# (None: the encoder only).
MODELS = {"classifier": (BertClassifier, "output_weights"),
          "squad": (BertSquad, "cls/squad/output_weights"),
          "tagger": (BertTokenClassifier, "cls/tagging/output_weights"),
          "multiple_choice": (BertMultipleChoice,
                              "cls/multiple_choice/output_weights"),
          "encoder": (BertModel, None)}


def check_tagger_labels(label_list, rows, head):
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


def check_arguments(model_type, max_seq_length, max_query_length,
                     doc_stride, pooling):
    """The checks that need no model (before one is loaded)."""
    if model_type not in MODEL_TYPES:
        raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)}; "
                        f"got {model_type!r}.")
    if pooling is not None and pooling not in POOLINGS:
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


def model_type_of(model):
    """The model type (`MODEL_TYPES`) of one of the task model classes
    (a `SentenceEmbedder`: "encoder").

    Raises:
        UserError: another class (say which, and that `model_type=` takes a
            model of a type's contract).
    """
    if isinstance(model, SentenceEmbedder):
        return "encoder"
    found = next((name for name, (cls, _) in MODELS.items()
                  if isinstance(model, cls)), None)
    if found is None:
        raise UserError(
            f"Cannot export a {type(model).__name__}: expected "
            + ", ".join(cls.__name__ for cls, _ in MODELS.values())
            + ", SentenceEmbedder, or pass model_type= (one of "
            + ", ".join(MODEL_TYPES)
            + ") for a model of that type's contract (docs/serving.md).")
    return found


def served_encoder(model, pooling=None, l2_normalize=None):
    """What an `encoder` export serves of `model`: (the Keras model, its
    pooling, its l2_normalize).

    A `SentenceEmbedder` is served as its `BertModel` (`model.bert`, the
    weights shared) with the embedder's own `pooling` and `l2_normalize`:
    its vectors are `pool_sequence` of that encoder's last layer, which
    the encoder export's `embed_text` and the formats' `embedding` compute
    (`bert_tf1.serving.encoder`, `bert_tf1.serving.numeric`). Any other
    model is served as it is, pooled by `pooling` (None: "mean") and
    `l2_normalize` (None: False).

    Args:
        model: a `BertModel`, `SentenceEmbedder` or a model of the encoder
            contract (docs/serving.md).
        pooling: None or one of `bert_tf1.modeling.pooling.POOLINGS`;
            l2_normalize: None or bool.

    Raises:
        UserError: a pooling or l2_normalize given that differs from the
            SentenceEmbedder's own (one line naming both).
    """
    if not isinstance(model, SentenceEmbedder):
        return model, pooling or "mean", bool(l2_normalize)
    for name, given in (("pooling", pooling), ("l2_normalize", l2_normalize)):
        own = getattr(model, name)
        if given is not None and given != own:
            raise UserError(
                f"{name}={given!r} differs from the SentenceEmbedder's own "
                f"{name}={own!r} (the pooling it was trained with); leave "
                f"{name} out to serve its own.")
    return model.bert, model.pooling, model.l2_normalize


def _encoder_config(model):
    """The `BertConfig` of `model` (a task model's `config`, else the one of
    the `BertModel` layer inside it).

    Raises:
        UserError: neither.
    """
    config = getattr(model, "config", None)
    if isinstance(config, BertConfig):
        return config
    encoder = next((layer for layer in keras_internals.all_layers(model)
                    if isinstance(layer, BertModel)), None)
    if encoder is None:
        raise UserError(f"{type(model).__name__} holds no BertModel layer: "
                        "a served model is a BERT encoder with a head.")
    return encoder.config


def _num_labels(model, model_type, max_seq_length):
    """A classifier's or tagger's label count: `model.num_labels`, else the
    last axis of its output on one probe row."""
    if hasattr(model, "num_labels"):
        return int(model.num_labels)
    import numpy as np

    shape = [1, max_seq_length]
    probe = {name: np.zeros(shape, np.int32) for name in (
        "input_ids", "input_mask", "segment_ids")}
    outputs = model(probe, training=False)
    if not hasattr(outputs, "shape") or len(outputs.shape) != (
            2 if model_type == "classifier" else 3):
        raise UserError(
            f"A {model_type} model gives one tensor of logits, [batch, "
            "num_labels]" + (", per position" if model_type == "tagger"
                             else "") + f"; {type(model).__name__} gives "
            f"{getattr(outputs, 'shape', type(outputs).__name__)}.")
    return int(outputs.shape[-1])


def serving_module(model, label_list=None, preprocessor=None,
                   max_query_length=64, max_answer_length=30, n_best_size=20,
                   doc_stride=128, quantize=None, pooling=None,
                   l2_normalize=None, model_type=None):
    """The tf.Module that `export_model` saves: an in-memory model served
    from raw text by its preprocessor; usable eagerly too.

    Args:
        model: a `BertClassifier`, `BertSquad`, `BertTokenClassifier`,
            `BertMultipleChoice`, `BertModel` (the encoder) or
            `SentenceEmbedder` (an encoder pooled its own way:
            `served_encoder`), its weights as they are now (shared, not
            copied); or any Keras model of such a type's contract with
            `model_type` (docs/serving.md, "Your own model").
        label_list: classifier labels in id order (None: "0", "1", ...,
            or a regression for `num_labels` 1); a tagger's tags in id
            order (required).
        preprocessor: a `bert_tf1.data.tokenization.BertPreprocessor` with a
            `sequence_length` (its vocab, casing and length are served);
            default `model.preprocessor`.
        max_query_length, max_answer_length, n_best_size, doc_stride: as
            run_squad.py's and run_ner.py's flags.
        quantize: None, or "int8" (`bert_tf1.modeling.inference.int8`).
        pooling, l2_normalize: an encoder's `embed_text` and `embedding`
            (`bert_tf1.modeling.pooling`); None: a SentenceEmbedder's own,
            else "mean" and False.
        model_type: one of `MODEL_TYPES` (default: by the model's class).

    Returns:
        ClassifierServing, SquadServing, EncoderServing, TaggerServing or
        MultipleChoiceServing; `.signatures()` maps names to tf.functions.

    Raises:
        UserError: another kind of model, no preprocessor, labels missing
            or not fitting the head, a vocab or length that does not fit
            the config, an unknown pooling or quantization, a pooling that
            differs from a SentenceEmbedder's own.
    """
    if model_type is not None and model_type not in MODEL_TYPES:
        raise UserError(f"model_type must be one of {', '.join(MODEL_TYPES)}; "
                        f"got {model_type!r}.")
    model_type = model_type or model_type_of(model)
    if isinstance(model, SentenceEmbedder) and model_type != "encoder":
        raise UserError(f"A SentenceEmbedder is served as model_type "
                        f"encoder, not {model_type}.")
    preprocessor = preprocessor_of(model, preprocessor)
    if model_type == "encoder":
        model, pooling, l2_normalize = served_encoder(model, pooling,
                                                      l2_normalize)
    max_seq_length = preprocessor.sequence_length
    check_arguments(model_type, max_seq_length, max_query_length,
                     doc_stride, pooling)
    config = _encoder_config(model)
    config.check_sequence_length(max_seq_length, "sequence_length", minimum=3)
    vocab = load_vocab(preprocessor.tokenizer.vocab_file)
    validate_vocab_size(vocab, config.vocab_size,
                        preprocessor.tokenizer.vocab_file, "of the model")
    num_labels = (_num_labels(model, model_type, max_seq_length)
                  if model_type in ("classifier", "tagger") else None)
    if model_type == "tagger":
        check_tagger_labels(label_list, num_labels, "the model's head")
    if model_type == "classifier" and label_list is None:
        label_list = ([str(i) for i in range(num_labels)]
                      if num_labels > 1 else None)
    elif model_type == "classifier" and len(label_list) != num_labels:
        raise UserError(f"The label list has {len(label_list)} labels but "
                        f"the classifier's head gives {num_labels} scores: "
                        "give the labels it was trained with.")
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
                                 label_list=label_list, num_labels=num_labels,
                                 **special)
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


def served_settings(module, model_type, do_lower_case):
    """The `ServedSettings` of a serving module (recorded in each
    export_info.json)."""
    labels = getattr(module, "label_list", None)
    labels = ([value.decode("utf-8") for value in labels.numpy()]
              if labels is not None else None) or None
    rules = {key: getattr(module, key) for key in (
        "max_query_length", "max_answer_length", "n_best_size", "doc_stride",
        "pooling", "l2_normalize") if hasattr(module, key)}
    return ServedSettings(model_type=model_type,
                          max_seq_length=int(module.max_seq_length),
                          do_lower_case=bool(do_lower_case), labels=labels,
                          **rules)
