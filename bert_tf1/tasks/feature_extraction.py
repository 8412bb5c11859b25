"""Pre-computed BERT activations as JSON lines: the original extract_features.py.

With `pooling` one vector per input line instead: a `.npy` output file holds
float32 [number of input lines, hidden], any other name JSON lines
`{"linex_index": N, "values": [...]}`. A model folder with a pooling record
(run_embeddings.py's output_dir, fetch_pretrained.py's all-MiniLM-L6-v2)
is pooled as recorded when --pooling is not given. Outputs are written
atomically.
"""
import dataclasses
import json
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.extraction.features import (compute_layer_outputs,
                                               convert_examples_to_features,
                                               feature_json_line, line_fields,
                                               parse_layer_indexes, read_examples)
from bert_tf1.data.io.atomic import atomic_output
from bert_tf1.data.io.dynamic_padding import cut_to_longest
from bert_tf1.data.io.results import NonFiniteResultError
from bert_tf1.modeling import BertModel, checkpoints
from bert_tf1.modeling.pooling import (POOLINGS, pool_sequence,
                                       read_pooling_record)
from bert_tf1.tasks import batch_inference, checks
from bert_tf1.tasks.configs import TaskConfig
from bert_tf1.tasks.served_model import model_folder_of, pooling_of
from bert_tf1.tasks.task import Task
from bert_tf1.tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class FeatureExtractionConfig(TaskConfig):
    """The original extract_features.py flags (same names and defaults),
    `output_dir` unused; `layers` None: "-1,-2,-3,-4", or "-1" with a
    `pooling` ("mean", "cls", "max": `bert_tf1.modeling.pooling.pool_sequence`;
    "none": per-token output). `pooling` and `l2_normalize` None: the
    pooling record of the model folder of `init_checkpoint`
    (`bert_tf1.tasks.served_model.pooling_of`), else "none" and False."""
    input_file: str = None
    output_file: str = None
    layers: str = None
    pooling: str = None
    l2_normalize: bool = None
    vocab_file: str = None
    do_lower_case: bool = True
    batch_size: int = 32
    batch: object = None    # bert_tf1.tasks.batch_inference.BatchOptions (--runner)

    def on_beam(self):
        return self.batch is not None and self.batch.on_beam


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
        self.check_pooling()
        layers = config.layers or ("-1" if self.pooled() else "-1,-2,-3,-4")
        try:
            self.layer_indexes = parse_layer_indexes(
                layers, self.bert_config.num_hidden_layers)
        except ValueError as error:
            raise UserError(f"--layers={layers}: {error}") from None
        if self.pooled() and len(self.layer_indexes) != 1:
            raise UserError(
                f"--pooling={config.pooling} pools one layer; --layers="
                f"{layers} names {len(self.layer_indexes)} (leave --layers "
                "out for the last layer)")
        checks.check_positive(batch_size=config.batch_size)
        if not config.init_checkpoint:
            raise UserError("--init_checkpoint is required: the features of "
                            "a randomly initialised model mean nothing")
        if config.batch is not None:
            batch_inference.check_options(config.batch, config.output_file)
        self.tokenizer = self.load_tokenizer()
        if config.on_beam():
            last = self.bert_config.num_hidden_layers - 1
            if not self.pooled() or self.layer_indexes[0] % (last + 1) != last:
                raise UserError(f"--runner={config.batch.runner} writes one "
                                "vector per line: pass --pooling (mean, cls "
                                "or max), and no --layers but -1")
            return
        if not config.output_file:
            raise UserError("--output_file is required")
        checks.check_data_file(config.input_file, "--input_file")
        checks.check_output_dir_writable(
            os.path.dirname(os.path.abspath(config.output_file))
            if "://" not in config.output_file else config.output_file,
            "--output_file")

    def pooled(self):
        """True when one vector per input line is asked for."""
        return self.config.pooling not in (None, "none")

    def check_pooling(self):
        """Pooling, normalisation and output name fit together; pooling
        and l2_normalize not given take the model folder's record.

        Raises:
            UserError: an unknown pooling, a pooling or l2_normalize that
                differs from the model folder's record (names the flag and
                the file), --l2_normalize or a .npy output without pooling.
        """
        config = self.config
        if config.pooling not in (None, "none", *POOLINGS):
            raise UserError(f"--pooling={config.pooling}: expected none, "
                            f"{', '.join(POOLINGS)}")
        folder = model_folder_of(config.init_checkpoint)
        if config.pooling is None and (
                not folder or read_pooling_record(folder) is None):
            config.pooling = "none"
        if config.pooling != "none":   # per-token output pools nothing
            config.pooling, config.l2_normalize = pooling_of(
                folder, config.pooling, config.l2_normalize)
        config.l2_normalize = bool(config.l2_normalize)
        if not self.pooled():
            if config.l2_normalize:
                raise UserError("--l2_normalize needs --pooling (mean, cls "
                                "or max): per-token output is not "
                                "normalised")
            if str(config.output_file or "").endswith(".npy"):
                raise UserError(
                    f"--output_file={config.output_file}: a .npy file holds "
                    "one vector per input line; pass --pooling (mean, cls or "
                    "max), or name a JSON lines file for per-token output")

    def features(self):
        """InputFeatures of every input line, built as the original does."""
        examples = read_examples(self.config.input_file)
        return convert_examples_to_features(examples,
                                            self.config.max_seq_length,
                                            self.tokenizer)

    def predict(self):
        """Writes output_file (chief only): the original's JSON lines, or
        with `pooling` one vector per line (`.npy`: float32 [lines,
        hidden]; else JSON lines); returns the number of examples.

        Raises:
            NonFiniteResultError: a value is NaN/Inf (nothing written).
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
        if self.pooled():
            what = f"{config.pooling} vectors"
            vectors = self.pooled_vectors(features)
            rows = zip(features, vectors[:, None])
        else:
            what = "features"
            rows = compute_layer_outputs(
                self.model, features, self.layer_indexes, config.batch_size,
                self.dynamic_padding())
        binary = config.output_file.endswith(".npy")  # pooled (check_pooling)
        with atomic_output(config.output_file) as temp_path:
            with tf.io.gfile.GFile(temp_path, "wb" if binary else "w") as f:
                for feature, values in rows:
                    if not all(np.isfinite(v).all() for v in values):
                        raise NonFiniteResultError(
                            f"{config.output_file} not written: NaN/Inf in "
                            f"the {what} of input line {feature.unique_id + 1}"
                            " (the checkpoint's weights hold NaN/Inf or the "
                            "computation overflowed).")
                    if self.pooled() and not binary:
                        f.write(json.dumps({
                            "linex_index": feature.unique_id,
                            "values": [round(float(x), 6) for x in values[0]],
                        }) + "\n")
                    elif not binary:
                        f.write(feature_json_line(feature, values,
                                                  self.layer_indexes))
                if binary:
                    np.save(f, vectors.astype(np.float32))
        logging.info("Wrote %s of %d examples to %s", what, len(features),
                     config.output_file)
        return len(features)

    def pooled_vectors(self, features):
        """float32 [len(features), hidden]: `config.pooling` of the chosen
        layer over each feature's input_mask, in order; with
        --dynamic_padding each batch is cut to its longest line first."""
        config = self.config
        model, layer = self.model, self.layer_indexes[0]

        @tf.function(reduce_retracing=True)
        def run(inputs):
            outputs = model(inputs, training=False)["encoder_outputs"]
            return pool_sequence(outputs[layer], inputs["input_mask"],
                                 config.pooling, config.l2_normalize)

        inputs = {name: np.array([getattr(f, key) for f in features], np.int32)
                  for name, key in (("input_ids", "input_ids"),
                                    ("input_mask", "input_mask"),
                                    ("segment_ids", "input_type_ids"))}
        batches = tf.data.Dataset.from_tensor_slices(inputs).batch(
            config.batch_size)
        if self.dynamic_padding():
            # Pooling reads only the real tokens (input_mask), so the cut
            # batches give the fixed layout's vectors (to 1e-5) at the cost
            # of the longest line of each batch, not of max_seq_length.
            batches = batches.map(cut_to_longest(config.max_seq_length))
        vectors = [np.asarray(run(batch)) for batch in batches]
        return (np.concatenate(vectors) if vectors else
                np.zeros((0, self.bert_config.hidden_size), np.float32))

    def run(self):
        """Checks everything, then writes output_file (with a Beam runner:
        the --output_dir shards, `run_on_beam`)."""
        self.prepare()
        if self.config.on_beam():
            return {"predict": self.run_on_beam()}
        return {"predict": self.predict()}

    def run_on_beam(self):
        """The pooled vectors of every --input_file line into Parquet
        shards (bert_tf1.tasks.batch_inference): each worker builds the module an
        `encoder` export holds from the checkpoint. Returns the count."""
        from bert_tf1.serving.batch_inference import ModelSpec

        config = self.config
        arguments = dict(
            model_type="encoder", bert_config_file=config.bert_config_file,
            vocab_file=config.vocab_file, do_lower_case=config.do_lower_case,
            init_checkpoint=self.checkpoint.path,
            max_seq_length=config.max_seq_length, pooling=config.pooling,
            l2_normalize=config.l2_normalize)
        spec = ModelSpec(model_type="encoder", serving_arguments=arguments,
                         tokenizer=(config.vocab_file, config.do_lower_case),
                         max_seq_length=config.max_seq_length,
                         pooling=config.pooling,
                         l2_normalize=config.l2_normalize)
        return batch_inference.run_batch_inference(
            config.batch, spec, config.input_file,
            lambda path, number, line: line_fields(line), None)
