"""Pre-computed BERT activations as JSON lines: the original extract_features.py.

One input line per example (`text_a ||| text_b` for a pair), one output line
per example with the chosen encoder layers of every token; the output file is
written to a temporary file and moved into place at the end.
"""
import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging

from data.extraction.features import (compute_layer_outputs,
                                      convert_examples_to_features,
                                      feature_json_line, parse_layer_indexes,
                                      read_examples)
from data.io.atomic import atomic_output
from data.io.results import NonFiniteResultError
from modeling import BertModel, checkpoints
from modeling.training import runtime as runtime_lib
from tasks import checks
from tasks.base import Task, TaskConfig
from tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class FeatureExtractionConfig(TaskConfig):
    """The original extract_features.py flags (same names and defaults);
    `output_dir` is unused (the output is `output_file`)."""
    input_file: str = None
    output_file: str = None
    layers: str = "-1,-2,-3,-4"
    vocab_file: str = None
    do_lower_case: bool = True
    batch_size: int = 32


class FeatureExtractionTask(Task):
    """BertModel encoder layers for every token of every input line.

    Raises (from `prepare()`, before anything is written):
        UserError: a bad --layers value, a missing or empty input file, a
            vocab or checkpoint that does not fit the config, an unwritable
            output folder.
    """

    def build_model(self):
        return BertModel(self.bert_config)

    def check_inputs(self):
        config = self.config
        try:
            self.layer_indexes = parse_layer_indexes(
                config.layers, self.bert_config.num_hidden_layers)
        except ValueError as error:
            raise UserError(f"--layers={config.layers}: {error}") from None
        checks.check_positive(batch_size=config.batch_size)
        if not config.init_checkpoint:
            raise UserError("--init_checkpoint is required: the features of "
                            "a randomly initialised model mean nothing")
        if not config.output_file:
            raise UserError("--output_file is required")
        self.tokenizer = self.load_tokenizer()
        checks.check_data_file(config.input_file, "--input_file")
        checks.check_output_dir_writable(
            os.path.dirname(os.path.abspath(config.output_file))
            if "://" not in config.output_file else config.output_file,
            "--output_file")

    def features(self):
        """InputFeatures of every input line, built as the original does."""
        examples = read_examples(self.config.input_file)
        return convert_examples_to_features(examples,
                                            self.config.max_seq_length,
                                            self.tokenizer)

    def dynamic_padding(self):
        """True when batches are cut (`TaskConfig.dynamic_padding`)."""
        config = self.config
        return bool(config.dynamic_padding) and not (
            config.runtime.use_xla
            or runtime_lib.is_tpu_strategy(self.strategy))

    def predict(self):
        """Writes output_file; returns the number of examples written.

        Each line: `{"linex_index": N, "features": [{"token": ...,
        "layers": [{"index": -1, "values": [...]}, ...]}, ...]}`. Under a
        multi-worker strategy the chief alone runs the model and writes (the
        others only build the model with it, which the strategy needs).
        Batches stream to the file (as `training.predict` would run them on
        one worker) rather than holding every example's layers in memory.
        """
        self.prepare()
        config = self.config
        features = self.features()
        checkpoints.load_tf1_checkpoint(
            self.model, self.checkpoint.path,
            allow_non_finite=config.allow_non_finite_checkpoint)
        if not self.is_chief:
            return len(features)
        folder = os.path.dirname(config.output_file)
        if folder:
            tf.io.gfile.makedirs(folder)
        with atomic_output(config.output_file) as temp_path:
            with tf.io.gfile.GFile(temp_path, "w") as writer:
                for feature, layer_outputs in compute_layer_outputs(
                        self.model, features, self.layer_indexes,
                        config.batch_size, self.dynamic_padding()):
                    # NaN is not JSON: refused (the temp file is removed).
                    if not all(np.isfinite(v).all() for v in layer_outputs):
                        raise NonFiniteResultError(
                            f"{config.output_file} not written: the layer "
                            f"values of input line {feature.unique_id + 1} "
                            "are NaN/Inf (the checkpoint's weights hold "
                            "NaN/Inf or the computation overflowed).")
                    writer.write(feature_json_line(feature, layer_outputs,
                                                   self.layer_indexes))
        logging.info("Wrote features of %d examples to %s", len(features),
                     config.output_file)
        return len(features)

    def run(self):
        """Checks everything, then writes output_file."""
        self.prepare()
        return {"predict": self.predict()}
