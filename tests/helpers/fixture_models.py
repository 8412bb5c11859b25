"""Builds our models for the checkpoints in `../shared/fixtures` and runs them."""
import numpy as np

from bert_tf1.modeling import BertClassifier, BertConfig, BertPretrainer, BertSquad, checkpoints
from bert_tf1.modeling.models import losses

# fixture folder -> task model class
FIXTURE_MODELS = {
    "tf1_tiny_pretraining": BertPretrainer,
    "tf1_tiny_classifier": BertClassifier,
    "tf1_tiny_squad": BertSquad,
    "tf1_vocab_mrpc_classifier": BertClassifier,
    "tf1_vocab_squad": BertSquad,
}
INPUT_KEYS = ("input_ids", "input_mask", "segment_ids")


def build_model(fixture_dir):
    """The task model for a fixture folder, freshly initialised (not loaded)."""
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    model_class = FIXTURE_MODELS[fixture_dir.name]
    if model_class is BertClassifier:
        num_labels = checkpoints.list_checkpoint(fixture_dir)["output_bias"][0]
        return model_class(config, num_labels)
    return model_class(config)


def reference_outputs(fixture_dir):
    return dict(np.load(fixture_dir / "reference_outputs.npz"))


def compute_outputs(model, reference):
    """Every output the fixture's reference_outputs.npz holds, from our model."""
    inputs = {key: reference[key] for key in INPUT_KEYS}
    encoder = model.bert(inputs, training=False)
    outputs = {
        "embedding_output": encoder["embedding_output"],
        "sequence_output": encoder["sequence_output"],
        "pooled_output": encoder["pooled_output"],
    }
    for index, layer_output in enumerate(encoder["encoder_outputs"]):
        outputs[f"encoder_layer_{index}"] = layer_output
    if isinstance(model, BertPretrainer):
        heads = model(dict(inputs, masked_lm_positions=reference["masked_lm_positions"]),
                      training=False)
        log_probs = heads["masked_lm_log_probs"]
        outputs["masked_lm_log_probs"] = np.reshape(
            log_probs, (-1, model.config.vocab_size))
        outputs["masked_lm_loss"] = losses.masked_lm_loss(
            log_probs, reference["masked_lm_ids"], reference["masked_lm_weights"])
        outputs["next_sentence_log_probs"] = heads["next_sentence_log_probs"]
        outputs["next_sentence_loss"] = losses.next_sentence_loss(
            heads["next_sentence_log_probs"], reference["next_sentence_labels"])
    elif isinstance(model, BertClassifier):
        logits = model(inputs, training=False)
        outputs["classifier_logits"] = logits
        outputs["classifier_loss"] = losses.classifier_loss(logits, reference["label_ids"])
    else:
        heads = model(inputs, training=False)
        outputs.update(heads)
        outputs["squad_loss"] = losses.squad_loss(
            heads["start_logits"], heads["end_logits"],
            reference["start_positions"], reference["end_positions"])
    return {key: np.asarray(value) for key, value in outputs.items()}


def random_classifier_batches(config, count=16, seq_length=8):
    """A repeating tf.data set of `count` random classifier examples
    (ids below `config.vocab_size`, full masks, labels in 0..2), batches of
    4, the same every call (seed 0): ({input_ids, input_mask, segment_ids},
    label_ids)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    features = {
        "input_ids": rng.integers(1, config.vocab_size, (count, seq_length)).astype("int32"),
        "input_mask": np.ones((count, seq_length), "int32"),
        "segment_ids": np.zeros((count, seq_length), "int32"),
    }
    labels = rng.integers(0, 3, (count,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(4)
