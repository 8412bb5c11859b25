"""The numeric graph of a served model: ids in, numbers out, for the runtimes
that take no TF Text op and no string (TF Serving's stock build, OpenVINO,
LiteRT, ONNX Runtime, TF Java).

    numeric = NumericServing.of(build_serving_module(...), "classifier")
    writer.save_module(numeric, "export/mrpc_numeric")   # formats.writer

One signature, `serving_default(input_ids, input_mask, segment_ids)` int32
[batch, max_seq_length] ([batch, num_choices, max_seq_length] for multiple
choice); its outputs are `OUTPUTS` (docs/deploying.md). The caller
tokenizes and applies the span/entity rules itself.
"""
import tensorflow as tf

from bert_tf1.modeling.pooling import pool_sequence
from bert_tf1.serving.text_module import (hold_untracked, ids_features,
                                          softmax_outputs)

#: The output names of each model type's numeric signature.
OUTPUTS = {"classifier": ("logits", "probabilities", "label_id"),
           "regression": ("score",),
           "encoder": ("embedding", "pooled_output", "sequence_output"),
           "tagger": ("logits", "probabilities", "tag_id"),
           "squad": ("start_logits", "end_logits"),
           "multiple_choice": ("logits", "probabilities", "choice")}

SIGNATURE = "serving_default"


class NumericServing(tf.Module):
    """The Keras model of a serving module with one numeric signature.

    Args:
        model: the served Keras model; model_type: one of
            `bert_tf1.serving.formats.info.MODEL_TYPES`; max_seq_length: the
            inputs' last axis; pooling, l2_normalize: an encoder's `embedding`
            (`bert_tf1.modeling.pooling.pool_sequence`); num_labels: a
            classifier's (default `model.num_labels`; 1: a regression).
    """

    def __init__(self, model, model_type, max_seq_length, pooling="mean",
                 l2_normalize=False, num_labels=None):
        super().__init__()
        hold_untracked(self, model)
        self.model_type = model_type
        self.pooling, self.l2_normalize = pooling, l2_normalize
        self.is_regression = (model_type == "classifier"
                              and (num_labels or getattr(model, "num_labels",
                                                         0)) == 1)
        self.max_seq_length = int(max_seq_length)
        self.serving_default = tf.function(self._outputs,
                                           input_signature=self.input_specs(),
                                           autograph=False)

    def input_specs(self):
        """The int32 TensorSpecs of `input_ids`, `input_mask`,
        `segment_ids`: [batch, max_seq_length] ([batch, num_choices,
        max_seq_length] for multiple choice)."""
        shape = [None] * (2 if self.model_type == "multiple_choice" else 1) + [
            self.max_seq_length]
        return [tf.TensorSpec(shape, tf.int32, name=name)
                for name in ("input_ids", "input_mask", "segment_ids")]

    @property
    def model(self):
        """The served Keras model (not saved as an object: `hold_untracked`)."""
        return self._untracked.model

    @classmethod
    def of(cls, serving_module, model_type):
        """The numeric graph of a `bert_tf1.serving.build_serving_module` result
        (its label names are not part of the graph: `export_info.json`)."""
        return cls(serving_module.model, model_type,
                   serving_module.max_seq_length,
                   getattr(serving_module, "pooling", "mean"),
                   getattr(serving_module, "l2_normalize", False),
                   1 if getattr(serving_module, "is_regression", False)
                   else None)

    def _outputs(self, input_ids, input_mask, segment_ids):
        return self.outputs_of(self.model, input_ids, input_mask, segment_ids)

    def outputs_of(self, model, input_ids, input_mask, segment_ids):
        """The signature's outputs (`OUTPUTS`) with `model` (the Keras model,
        or a function of (features, training) standing in for it)."""
        features = ids_features(input_ids, input_mask, segment_ids)
        outputs = model(features, training=False)
        if self.model_type == "encoder":
            return {"embedding": pool_sequence(
                outputs["sequence_output"], input_mask, self.pooling,
                self.l2_normalize),
                "pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"]}
        if self.model_type == "squad":
            return dict(outputs)
        if self.is_regression:
            return {"score": outputs[:, 0]}
        return softmax_outputs(outputs, {
            "classifier": "label_id", "tagger": "tag_id",
            "multiple_choice": "choice"}[self.model_type])

    def signatures(self):
        return {SIGNATURE: self.serving_default}


class Runner:
    """The numeric SavedModel in `folder` in TensorFlow: called with int32
    numpy ids by name, gives numpy outputs by name."""

    def __init__(self, folder):
        self.loaded = tf.saved_model.load(str(folder))
        self.function = self.loaded.signatures[SIGNATURE]

    def __call__(self, **inputs):
        return {key: value.numpy() for key, value in self.function(
            **{k: tf.constant(v) for k, v in inputs.items()}).items()}
