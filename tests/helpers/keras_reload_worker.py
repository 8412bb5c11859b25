"""Loads `.keras` files in a fresh process and saves what the models compute.

Usage: python tests/helpers/keras_reload_worker.py INPUTS.npz OUTPUT_DIR M1.keras ...

It imports only NumPy, Keras and `modeling` (whose import registers the
`bert_tf1>...` classes), never the test code that saved the models, and calls
`keras.models.load_model` without `custom_objects`. For each model it writes
OUTPUT_DIR/<file stem>.npz (outputs, see `flatten_outputs`),
OUTPUT_DIR/<file stem>.weights.npz (every weight's value, in `model.weights`
order) and OUTPUT_DIR/<file stem>.json (class name and the TF1 names of the
weights).
"""
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import bert_tf1.modeling  # noqa: E402,F401  (registers the classes)
from bert_tf1.modeling.naming import tf1_name  # noqa: E402

ENCODER_KEYS = ("input_ids", "input_mask", "segment_ids")


def model_inputs(model, inputs):
    """The inputs a model takes: the encoder's, plus masked_lm_positions for
    the pretrainer. BertMultipleChoice takes [batch, num_choices, seq]: the
    [batch, seq] rows become the choices of one example ([1, batch, seq])."""
    keys = ENCODER_KEYS
    if type(model).__name__ == "BertPretrainer":
        keys += ("masked_lm_positions",)
    if type(model).__name__ == "BertMultipleChoice":
        return {key: np.asarray(inputs[key])[None] for key in keys}
    return {key: inputs[key] for key in keys}


def flatten_outputs(outputs):
    """Model outputs as {name: float32 array}: dict keys, list items indexed."""
    if not isinstance(outputs, dict):
        return {"output": np.asarray(outputs, np.float32)}
    flat = {}
    for key, value in outputs.items():
        if isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                flat[f"{key}_{index}"] = np.asarray(item, np.float32)
        else:
            flat[key] = np.asarray(value, np.float32)
    return flat


def main(argv):
    inputs_path, output_dir, *model_paths = argv
    inputs = dict(np.load(inputs_path))
    for path in model_paths:
        model = keras.models.load_model(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        outputs = model(model_inputs(model, inputs), training=False)
        np.savez(os.path.join(output_dir, stem + ".npz"),
                 **flatten_outputs(outputs))
        np.savez(os.path.join(output_dir, stem + ".weights.npz"),
                 *[np.asarray(v) for v in model.weights])
        with open(os.path.join(output_dir, stem + ".json"), "w") as writer:
            json.dump({"class": type(model).__name__,
                       "tf1_names": [tf1_name(v) for v in model.weights]},
                      writer)


if __name__ == "__main__":
    main(sys.argv[1:])
