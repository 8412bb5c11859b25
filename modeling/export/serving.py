"""SavedModels that serve BERT from raw text: classifier, SQuAD and encoder.

    from modeling.export import export_saved_model
    export_saved_model(
        "export/mrpc", model_type="classifier",
        bert_config_file="bert_config.json", vocab_file="vocab.txt",
        init_checkpoint="/tmp/mrpc_output", do_lower_case=True,
        max_seq_length=128, label_list=["0", "1"])

    import tensorflow as tf, tensorflow_text  # registers the tokenizer ops
    served = tf.saved_model.load("export/mrpc")
    served.signatures["classify_pair"](text_a=tf.constant([...]),
                                       text_b=tf.constant([...]))

The tokenizer (`InGraphFullTokenizer`, the original `FullTokenizer`'s ids) and
packing (`[CLS] A [SEP] B [SEP]`, the original's truncation) run inside the
graph, so a served text gets the same input_ids as `run_classifier.py` /
`run_squad.py` give it. Each export also has a signature taking
already-tokenized `input_ids`/`input_mask`/`segment_ids` int32
[batch_size, seq_length]. Loading needs `import tensorflow_text` first (the
tokenizer uses its ops).
"""
import os

import keras_hub
import tensorflow as tf
from absl import logging

from data.tokenization import full_tokenizer
from data.tokenization.in_graph import InGraphFullTokenizer
from data.tokenization.packing import InGraphPacker
from modeling import checkpoints
from modeling.bert_model import BertModel
from modeling.config import BertConfig
from modeling.models import BertClassifier, BertSquad
from data.io.atomic import write_directory_atomically
from modeling.export.squad_span import best_spans, span_text

MODEL_TYPES = ("classifier", "squad", "encoder")


def _ids_signature(function):
    """Wraps `function(self, input_ids, input_mask, segment_ids)` as a
    tf.function over int32 [batch_size, seq_length] ids."""
    return tf.function(input_signature=[
        tf.TensorSpec([None, None], tf.int32, name="input_ids"),
        tf.TensorSpec([None, None], tf.int32, name="input_mask"),
        tf.TensorSpec([None, None], tf.int32, name="segment_ids")])(function)


class _TextServing(tf.Module):
    """Common part: the in-graph tokenizer, packer and the Keras model."""

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id):
        super().__init__()
        self.model = model
        # Listed explicitly so tf.saved_model saves every weight, whatever
        # Keras' own object tracking exposes.
        self.model_variables = list(model.variables)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.packer = InGraphPacker(max_seq_length, cls_id, sep_id)
        # A copy of the vocab in the export's assets/, for users who tokenize
        # outside and call the *_ids signature.
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)

    def _pack(self, text_a, text_b=None):
        ids_b = None if text_b is None else self.tokenizer(text_b)
        return self.packer(self.tokenizer(text_a), ids_b)


class ClassifierServing(_TextServing):
    """Signatures of a `BertClassifier` (run_classifier.py).

    - `classify_text(text)`, `classify_pair(text_a, text_b)`: tf.string [batch];
    - `classify_ids(input_ids, input_mask, segment_ids)`: int32
      [batch, seq_length].
    Outputs (classification): `logits`, `probabilities` float32
    [batch, num_labels] (softmax, the values of `test_results.tsv`),
    `label_id` int32 [batch] (argmax) and `label` tf.string [batch].
    Outputs (regression, num_labels 1): `score` float32 [batch].
    """

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 label_list):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self.label_list = tf.constant(list(label_list or []), tf.string)
        self.is_regression = model.num_labels == 1 and not label_list

    def _outputs(self, features):
        logits = self.model(features, training=False)
        if self.is_regression:
            return {"score": logits[:, 0]}
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {"logits": logits, "probabilities": tf.nn.softmax(logits),
                "label_id": label_id,
                "label": tf.gather(self.label_list, label_id)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def classify_text(self, text):
        return self._outputs(self._pack(text))

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string, name="text_a"),
        tf.TensorSpec([None], tf.string, name="text_b")])
    def classify_pair(self, text_a, text_b):
        return self._outputs(self._pack(text_a, text_b))

    @_ids_signature
    def classify_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs({"input_ids": input_ids, "input_mask": input_mask,
                              "segment_ids": segment_ids})

    def signatures(self):
        return {"serving_default": self.classify_text,
                "classify_text": self.classify_text,
                "classify_pair": self.classify_pair,
                "classify_ids": self.classify_ids}


class EncoderServing(_TextServing):
    """Signatures of a `BertModel`.

    - `encode_text(text)`, `encode_pair(text_a, text_b)`: tf.string [batch];
    - `encode_ids(input_ids, input_mask, segment_ids)`.
    Outputs: `pooled_output` float32 [batch, hidden_size], `sequence_output`
    float32 [batch, max_seq_length, hidden_size], and (text signatures) the
    packed `input_ids`, `input_mask`, `segment_ids` int32
    [batch, max_seq_length], so padding rows can be told apart.
    """

    def _outputs(self, features):
        outputs = self.model(features, training=False)
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"]}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def encode_text(self, text):
        features = self._pack(text)
        return dict(self._outputs(features), **features)

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string, name="text_a"),
        tf.TensorSpec([None], tf.string, name="text_b")])
    def encode_pair(self, text_a, text_b):
        features = self._pack(text_a, text_b)
        return dict(self._outputs(features), **features)

    @_ids_signature
    def encode_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs({"input_ids": input_ids, "input_mask": input_mask,
                              "segment_ids": segment_ids})

    def signatures(self):
        return {"serving_default": self.encode_text,
                "encode_text": self.encode_text,
                "encode_pair": self.encode_pair,
                "encode_ids": self.encode_ids}


class SquadServing(_TextServing):
    """Signatures of a `BertSquad` (run_squad.py), one window per question.

    The features are the original's first window: `[CLS] question [SEP]
    context [SEP]` with the question cut to `max_query_length` tokens and
    the context to what is left of `max_seq_length` (the original slides
    further windows over longer contexts with `doc_stride`; a served context
    gets only the first).

    - `squad(question, context)`: tf.string [batch] -> `start_logits`,
      `end_logits` float32 [batch, max_seq_length] and the packed
      `input_ids`, `input_mask`, `segment_ids`;
    - `squad_answer(question, context)`: the best span (see
      `modeling.squad_span.best_spans`): `start_position`, `end_position`
      int32 [batch] (token positions in the packed sequence), `score`
      float32 [batch] and `answer_text` tf.string [batch], the span's
      WordPiece tokens joined as the original's `tok_text` (lower-cased for
      uncased models; the original's `get_final_text` maps it back to the
      context's own characters, which needs offsets the in-graph tokenizer
      does not give);
    - `squad_ids(input_ids, input_mask, segment_ids)`: the logits.
    """

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 vocab_tokens, max_query_length, max_answer_length,
                 n_best_size):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self.max_query_length = int(max_query_length)
        self.max_answer_length = int(max_answer_length)
        self.n_best_size = int(n_best_size)
        self.vocab_tokens = tf.constant(vocab_tokens, tf.string)
        # Question first in full (already cut to max_query_length), then
        # the context gets what is left: the original's budget rule.
        self.squad_packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=max_seq_length, start_value=cls_id,
            end_value=sep_id, pad_value=-1, truncate="waterfall",
            dtype="int32")

    def _pack_squad(self, question, context):
        question_ids = self.tokenizer(question)[:, :self.max_query_length]
        token_ids, segment_ids = self.squad_packer(
            (question_ids, self.tokenizer(context)))
        real = tf.not_equal(token_ids, -1)
        return {"input_ids": tf.where(real, token_ids, 0),
                "input_mask": tf.cast(real, tf.int32),
                "segment_ids": tf.where(real, tf.cast(segment_ids, tf.int32), 0)}

    def _logits(self, features):
        return self.model(features, training=False)

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string, name="question"),
        tf.TensorSpec([None], tf.string, name="context")])
    def squad(self, question, context):
        features = self._pack_squad(question, context)
        return dict(self._logits(features), **features)

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string, name="question"),
        tf.TensorSpec([None], tf.string, name="context")])
    def squad_answer(self, question, context):
        features = self._pack_squad(question, context)
        logits = self._logits(features)
        # Context tokens: segment 1 before the final [SEP].
        last = tf.reduce_sum(features["input_mask"], axis=1, keepdims=True) - 1
        is_context = tf.logical_and(
            tf.equal(features["segment_ids"], 1),
            tf.range(self.max_seq_length)[tf.newaxis, :] < last)
        start, end, score = best_spans(
            logits["start_logits"], logits["end_logits"], is_context,
            self.max_answer_length, self.n_best_size)
        return {"start_position": start, "end_position": end, "score": score,
                "answer_text": span_text(features["input_ids"], start, end,
                                         self.vocab_tokens)}

    @_ids_signature
    def squad_ids(self, input_ids, input_mask, segment_ids):
        return self._logits({"input_ids": input_ids, "input_mask": input_mask,
                             "segment_ids": segment_ids})

    def signatures(self):
        return {"serving_default": self.squad, "squad": self.squad,
                "squad_answer": self.squad_answer, "squad_ids": self.squad_ids}


def _restore(model, init_checkpoint, head_name):
    """Loads every weight of `model`; a missing one is an error here (a
    served model with a freshly initialised head would answer at random)."""
    status = checkpoints.load_tf1_checkpoint(model, init_checkpoint,
                                             verbose=False)
    if status.missing:
        hint = ""
        if head_name and head_name in status.missing:
            hint = (f" It has no `{head_name}`: export a checkpoint fine-tuned "
                    "for this task (the output_dir of run_classifier.py / "
                    "run_squad.py), or export it as model_type encoder.")
        raise ValueError(
            f"Checkpoint {status.checkpoint} lacks {len(status.missing)} "
            f"weight(s) of the {model.name} model, e.g. "
            f"{', '.join(status.missing[:3])}.{hint}")
    logging.info("Loaded %d weights from %s.", len(status.loaded),
                 status.checkpoint)
    return status


def build_serving_module(model_type, bert_config_file, vocab_file,
                         init_checkpoint, do_lower_case=True,
                         max_seq_length=128, label_list=None, num_labels=None,
                         max_query_length=64, max_answer_length=30,
                         n_best_size=20):
    """The tf.Module that `export_saved_model` saves; usable eagerly too.

    Args:
        model_type: "classifier", "squad" or "encoder".
        bert_config_file, vocab_file, do_lower_case, max_seq_length: as used
            for training (the flags of run_classifier.py / run_squad.py).
        init_checkpoint: a checkpoint prefix, an output_dir (its newest
            `model.ckpt-N`), or a directory holding `bert_model.ckpt`.
        label_list: classifier labels, index = label id (e.g. ["0", "1"]);
            None with `num_labels` 1 means regression.
        num_labels: used when `label_list` is None; labels are then "0",
            "1", ...
        max_query_length, max_answer_length, n_best_size: SQuAD, as
            run_squad.py.

    Returns:
        ClassifierServing, SquadServing or EncoderServing; `.signatures()`
        maps signature names to tf.functions.

    Raises:
        ValueError: unknown model_type, no labels for a classifier,
            max_seq_length above max_position_embeddings (or, SQuAD, not
            above max_query_length + 3), the checkpoint
            lacks weights the model needs, the vocab does not fit the config.
        FileNotFoundError: vocab, config or checkpoint missing.
        modeling.checkpoints.CheckpointMismatchError: shapes differ.
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {', '.join(MODEL_TYPES)}; "
                         f"got {model_type!r}.")
    config = BertConfig.from_json_file(bert_config_file)
    if max_seq_length > config.max_position_embeddings:
        raise ValueError(
            f"max_seq_length {max_seq_length} exceeds max_position_embeddings "
            f"{config.max_position_embeddings} in {bert_config_file}.")
    if model_type == "squad" and max_seq_length <= max_query_length + 3:
        raise ValueError(
            f"max_seq_length ({max_seq_length}) must be greater than "
            f"max_query_length ({max_query_length}) + 3, as in run_squad.py.")
    python_tokenizer = full_tokenizer.tokenizer_for_model(
        vocab_file, do_lower_case, config.vocab_size, bert_config_file)
    vocab = python_tokenizer.vocab
    for token in ("[CLS]", "[SEP]"):
        if token not in vocab:
            raise ValueError(f"Vocab file {vocab_file} has no {token} token.")
    special = dict(cls_id=vocab["[CLS]"], sep_id=vocab["[SEP]"])

    # The model first: a checkpoint that does not fit fails in a second,
    # before the tokenizer's tables are built.
    if model_type == "classifier":
        if label_list is None:
            if not num_labels:
                raise ValueError("A classifier export needs label_list or "
                                 "num_labels (e.g. --task_name=MRPC).")
            label_list = ([str(i) for i in range(num_labels)]
                          if num_labels > 1 else None)
        model = BertClassifier(config, len(label_list) if label_list else 1)
        _restore(model, init_checkpoint, "output_weights")
    elif model_type == "squad":
        model = BertSquad(config)
        _restore(model, init_checkpoint, "cls/squad/output_weights")
    else:
        model = BertModel(config)
        _restore(model, init_checkpoint, None)

    tokenizer = InGraphFullTokenizer(vocab_file, do_lower_case=do_lower_case)
    if model_type == "classifier":
        return ClassifierServing(model, tokenizer, max_seq_length,
                                 label_list=label_list, **special)
    if model_type == "squad":
        vocab_tokens = [""] * (max(vocab.values()) + 1)
        for token, index in vocab.items():
            vocab_tokens[index] = token
        return SquadServing(model, tokenizer, max_seq_length,
                            vocab_tokens=vocab_tokens,
                            max_query_length=max_query_length,
                            max_answer_length=max_answer_length,
                            n_best_size=n_best_size, **special)
    return EncoderServing(model, tokenizer, max_seq_length, **special)


def export_saved_model(export_dir, **kwargs):
    """Writes a SavedModel serving raw text (see `build_serving_module`).

    Written to a temporary sibling directory, then renamed, so `export_dir`
    is either complete or absent. The vocab file is stored in the export's
    `assets/`.

    Args:
        export_dir: the SavedModel directory to create; must not exist.
        **kwargs: `build_serving_module` arguments.

    Returns:
        str, export_dir.

    Raises:
        FileExistsError: export_dir already exists (never overwritten).
        The errors of `build_serving_module`.
    """
    export_dir = os.fspath(export_dir).rstrip("/")
    if tf.io.gfile.exists(export_dir):
        raise FileExistsError(
            f"Export directory {export_dir} already exists; not overwriting "
            "it. Choose a new directory.")
    module = build_serving_module(**kwargs)
    write_directory_atomically(
        export_dir, lambda tmp_dir: tf.saved_model.save(
            module, tmp_dir, signatures=module.signatures()))
    logging.info("Wrote SavedModel %s with signatures %s.", export_dir,
                 ", ".join(sorted(module.signatures())))
    return export_dir
