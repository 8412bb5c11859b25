"""Shape checks on `BertModel` inputs, so bad inputs fail with a clear message.

Checks use static shapes; only a sequence length unknown while tracing gets a
run-time assertion (which XLA drops).
"""
import tensorflow as tf

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")


def static_shape(tensor):
    """The static shape as a tuple (None for unknown sizes), or None if even
    the rank is unknown."""
    shape = tensor.shape
    if getattr(shape, "rank", 0) is None:
        return None
    return tuple(None if size is None else int(size) for size in shape)


def positive_count(value, name):
    """`int(value)`, checked to be >= 1 (e.g. a model's `num_labels`).

    Raises:
        ValueError: the value is not positive; the message names it.
    """
    count = int(value)
    if count <= 0:
        raise ValueError(f"{name} must be positive, got {value}.")
    return count


def require_input_dict(inputs, model_name):
    """Raises TypeError unless `inputs` is a dict (the models take named inputs).

    Args:
        inputs: what the model was called with.
        model_name: str for the message, e.g. "BertClassifier".
    Raises:
        TypeError: `inputs` is not a dict; the message says what is expected.
    """
    if not isinstance(inputs, dict):
        found = type(inputs).__name__
        if getattr(inputs, "shape", None) is not None:
            found += f" of shape {static_shape(inputs)}"
        raise TypeError(
            f"{model_name} inputs must be a dict of int32 [batch_size, "
            f"seq_length] tensors with `input_ids` (and optionally "
            f"`input_mask`, `segment_ids`), got {found}.")


def encoder_inputs(inputs, model):
    """The encoder's inputs out of a task model's input dict.

    Args:
        inputs: dict of tensors; other keys (e.g. `masked_lm_positions`,
            `unique_ids`) are left out.
        model: the task model (its class name goes into the error).
    Returns:
        dict with those of `input_ids`, `input_mask`, `segment_ids` present.
    Raises:
        TypeError: `inputs` is not a dict (see `require_input_dict`).
    """
    require_input_dict(inputs, type(model).__name__)
    return {key: inputs[key] for key in ENCODER_INPUTS if key in inputs}


def check_encoder_inputs(inputs, config):
    """Checks `input_ids`, `input_mask`, `segment_ids` before the encoder runs.

    Args:
        inputs: dict with `input_ids` and optionally `input_mask`,
            `segment_ids`: tensors or arrays [batch_size, seq_length].
        config: the `BertConfig` (its `check_sequence_length` is the rule).

    Raises:
        ValueError: `input_ids` is not of rank 2; `input_mask` or
            `segment_ids` differ from `input_ids` in shape. The message
            names the input, its shape and what is expected.
        bert_tf1.modeling.config.SequenceLengthError: the static sequence length
            exceeds `max_position_embeddings`.
        tf.errors.InvalidArgumentError: (when run) the sequence length,
            unknown while tracing, exceeds `max_position_embeddings`.
    Returns:
        `input_ids`, behind the run-time check when there is one: use it in
        place of `inputs["input_ids"]`.
    """
    input_ids = inputs["input_ids"]
    shape = static_shape(input_ids)
    if shape is not None and len(shape) != 2:
        hint = (" For a single sequence, add a batch axis: input_ids[None, :]."
                if len(shape) == 1 else "")
        raise ValueError(
            f"BertModel input `input_ids` has shape {shape} (rank {len(shape)}); "
            f"expected rank 2, [batch_size, seq_length].{hint}")
    seq_length = None if shape is None else shape[1]
    max_position_embeddings = config.max_position_embeddings
    if seq_length is not None:
        config.check_sequence_length(
            seq_length, f"BertModel input `input_ids` of shape {shape}")
    elif isinstance(input_ids, tf.Tensor) and not tf.executing_eagerly():
        check = tf.debugging.assert_less_equal(
            tf.shape(input_ids)[1], max_position_embeddings,
            message=(f"BertModel input `input_ids`: seq_length exceeds "
                     f"max_position_embeddings ({max_position_embeddings}) "
                     "of the BERT config"))
        # The ids pass through the check, so it runs before any op reads them.
        with tf.control_dependencies([check]):
            input_ids = tf.identity(input_ids)
    for key in ENCODER_INPUTS[1:]:
        value = inputs.get(key)
        if value is None or shape is None:
            continue
        other = static_shape(value)
        if other is not None and (len(other) != 2 or any(
                a is not None and b is not None and a != b
                for a, b in zip(other, shape))):
            raise ValueError(
                f"BertModel input `{key}` has shape {other}; expected the shape "
                f"of `input_ids`, {shape} ([batch_size, seq_length]).")
    return input_ids
