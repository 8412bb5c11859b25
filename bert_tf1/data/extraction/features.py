"""Inputs, model run and JSON lines of extract_features.py.

Reproduces google-research/bert `extract_features.py`: one example per input
line (`text_a ||| text_b` for pairs), features built as run_classifier does,
and one JSON object per line with the chosen encoder layers of every real
token, values rounded to 6 decimals.
"""
import dataclasses
import json
import re

import numpy as np
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.data.io.text_files import TextRange, iter_lines

# The split is at the last " ||| " because the first group is greedy.
_PAIR_PATTERN = re.compile(r"^(.*) \|\|\| (.*)$")


@dataclasses.dataclass
class InputExample:
    """One input line: unique_id (its 0-based line number), text_a, text_b."""
    unique_id: int
    text_a: str
    text_b: str = None


@dataclasses.dataclass
class InputFeatures:
    """Features of one example.

    Attributes:
      unique_id: int.
      tokens: list of str, `[CLS] a [SEP] (b [SEP])`, no padding.
      input_ids, input_mask, input_type_ids: lists of int, length seq_length.
    """
    unique_id: int
    tokens: list
    input_ids: list
    input_mask: list
    input_type_ids: list


def read_examples(input_file):
    """Reads one example per line of a UTF-8 text file.

    Each line is stripped; `a ||| b` (split at the last " ||| ") is a pair,
    anything else a single text, an empty line included.

    Returns:
      list of InputExample with unique_id = line number from 0.

    Raises:
      TextFileError: a line is not valid UTF-8 (names file and line).

    Source: extract_features.py, read_examples.
    """
    return [InputExample(unique_id, *line_fields(line)) for unique_id, line
            in enumerate(iter_lines(TextRange(input_file)))]


def line_fields(line):
    """(text_a,) or (text_a, text_b) of one input line, as read_examples."""
    match = _PAIR_PATTERN.match(line.strip())
    return (line.strip(),) if match is None else match.groups()


def convert_examples_to_features(examples, seq_length, tokenizer,
                                 num_logged=5):
    """Tokenizes, truncates and pads each example.

    Packed as run_classifier does (`pack_tokens`; a text_b without tokens
    counts as none); the first `num_logged` features are logged.

    Returns:
      list of InputFeatures, one per example, in order.

    Source: extract_features.py, convert_examples_to_features.
    """
    features = []
    for index, example in enumerate(examples):
        tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
        packed = pack_tokens(tokenizer.tokenize(example.text_a), tokens_b,
                             seq_length, tokenizer)
        tokens = packed.tokens
        feature = InputFeatures(
            unique_id=example.unique_id, tokens=tokens,
            input_ids=packed.input_ids, input_mask=packed.input_mask,
            input_type_ids=packed.segment_ids)
        if index < num_logged:
            logging.info("*** Example ***")
            logging.info("unique_id: %s", feature.unique_id)
            logging.info("tokens: %s", " ".join(tokens))
            for name in ("input_ids", "input_mask", "input_type_ids"):
                logging.info("%s: %s", name,
                             " ".join(str(x) for x in getattr(feature, name)))
        features.append(feature)
    return features


def parse_layer_indexes(layers, num_hidden_layers):
    """Parses "-1,-2" into [-1, -2]; checks each indexes an encoder layer.

    Raises:
      UserError: not comma-separated ints, or an index outside
        [-num_hidden_layers, num_hidden_layers - 1].
    """
    try:
        indexes = [int(x) for x in layers.split(",")]
    except ValueError:
        raise UserError("--layers must be comma-separated integers, got %r"
                        % layers) from None
    for index in indexes:
        if not -num_hidden_layers <= index < num_hidden_layers:
            raise UserError(
                "layer index %d is out of range: the model has %d encoder "
                "layers (use %d..%d)" % (index, num_hidden_layers,
                                         -num_hidden_layers,
                                         num_hidden_layers - 1))
    return indexes


def compute_layer_outputs(bert_model, features, layer_indexes, batch_size,
                          dynamic_padding=False):
    """Runs the encoder and yields the chosen layers per feature, in order.

    Args:
      bert_model: bert_tf1.modeling.BertModel (inference: training=False).
      features: list of InputFeatures.
      layer_indexes: list of int into the encoder layer outputs (-1: last).
      batch_size: int; the last batch may be smaller.
      dynamic_padding: cut each batch to its longest example (padded back
        with zeros; the real tokens' values are unchanged).

    Yields:
      (feature, list of float32 arrays [seq_length, hidden_size], one per
      layer index).

    Source: extract_features.py, model_fn (all_encoder_layers).
    """
    import tensorflow as tf

    from bert_tf1.data.io.dynamic_padding import cut_to_longest

    @tf.function(reduce_retracing=True)
    def run(inputs):
        outputs = bert_model(inputs, training=False)["encoder_outputs"]
        return [outputs[i] for i in layer_indexes]

    if not features:
        return
    seq_length = len(features[0].input_ids)
    inputs = tf.data.Dataset.from_tensor_slices({
        "input_ids": np.array([f.input_ids for f in features], np.int32),
        "input_mask": np.array([f.input_mask for f in features], np.int32),
        "segment_ids": np.array([f.input_type_ids for f in features],
                                np.int32),
    }).batch(batch_size)
    if dynamic_padding:
        inputs = inputs.map(cut_to_longest(seq_length))
    for start, batch in zip(range(0, len(features), batch_size), inputs):
        layers = [np.asarray(x) for x in run(batch)]
        missing = seq_length - layers[0].shape[1]
        layers = [np.pad(x, [(0, 0), (0, missing), (0, 0)]) for x in layers]
        for row, feature in enumerate(features[start:start + batch_size]):
            yield feature, [layer[row] for layer in layers]


def feature_json_line(feature, layer_outputs, layer_indexes):
    """The original's JSON line for one example (with the trailing newline).

    `{"linex_index": id, "features": [{"token": t, "layers": [{"index": i,
    "values": [...]}]}]}` over the real tokens, values `round(float(x), 6)`.

    Source: extract_features.py, main.
    """
    tokens = [{"token": token, "layers": [
        {"index": layer_index,
         "values": [round(float(x), 6) for x in output[position]]}
        for layer_index, output in zip(layer_indexes, layer_outputs)]}
        for position, token in enumerate(feature.tokens)]
    return json.dumps({"linex_index": feature.unique_id,
                       "features": tokens}) + "\n"
