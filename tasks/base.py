"""What every task shares: config, checks, strategy, model, checkpoint, training.

A task (Model Garden's `Task` idea, written our own way) is built from a plain
dataclass config, runs every check in `prepare()` before it writes anything,
and then trains, evaluates or predicts in-process, returning results and
writing the original scripts' files. No absl FLAGS are read here.
"""
import dataclasses
import os

import numpy as np

from absl import logging

from modeling.training import runtime as runtime_lib
from tasks import checks
from tasks.errors import UserError
from tasks.modes import requested


@dataclasses.dataclass(kw_only=True)
class TaskConfig:
    """Fields every task has; names and defaults are the original flags'.

    Attributes:
        bert_config_file: path of bert_config.json.
        output_dir: folder for checkpoints and result files.
        init_checkpoint: checkpoint to start from (prefix or folder), or None.
        max_seq_length: int, tokens per sequence after WordPiece.
        allow_partial_checkpoint: accept a checkpoint whose encoder layers
            differ from the config's.
        allow_non_finite_checkpoint: load a checkpoint holding NaN/Inf
            (with a warning) instead of refusing it.
        allow_random_weights: evaluate or predict with random weights when
            there is no checkpoint at all (else an error).
        runtime: `modeling.training.runtime.RuntimeOptions` (devices, precision,
            checkpoint cadence, seed).
    """
    bert_config_file: str = None
    output_dir: str = None
    init_checkpoint: str = None
    max_seq_length: int = 128
    allow_partial_checkpoint: bool = False
    allow_non_finite_checkpoint: bool = False
    allow_random_weights: bool = False
    runtime: runtime_lib.RuntimeOptions = dataclasses.field(
        default_factory=runtime_lib.RuntimeOptions)


@dataclasses.dataclass(kw_only=True)
class FineTuningConfig(TaskConfig):
    """The flags run_classifier.py and run_squad.py share (same defaults)."""
    vocab_file: str = None
    do_lower_case: bool = True
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1


class Task:
    """The common skeleton; subclasses add data, model, loss and metrics.

    Subclasses implement `build_model()`, `check_inputs()` (their own
    preflight checks, reading data files for every requested mode), the
    mode methods, and name their modes in `modes` for `run()`.
    """

    #: Names of the modes this task has (`tasks.modes.MODES`), in the order
    #: the original script runs them.
    modes = ()

    def __init__(self, config):
        self.config = config
        self.bert_config = self._load_bert_config()
        self.global_step = None
        self._strategy = None
        self._model = None
        self._prepared = False
        self._weights_ready = False
        self._output_lock = None

    # -- set-up -------------------------------------------------------------

    def _load_bert_config(self):
        from modeling import BertConfig

        if not self.config.bert_config_file:
            raise UserError("--bert_config_file is required")
        checks.check_data_file(self.config.bert_config_file,
                               "--bert_config_file")
        return BertConfig.from_json_file(self.config.bert_config_file)

    @property
    def strategy(self):
        """The `tf.distribute.Strategy` (precision policy applied first)."""
        if self._strategy is None:
            self._strategy = runtime_lib.setup(self.config.runtime)
        return self._strategy

    @property
    def is_chief(self):
        return runtime_lib.is_chief(self.strategy)

    @property
    def model(self):
        """The task model, built once under the strategy's scope."""
        if self._model is None:
            with self.strategy.scope():
                self._model = self.build_model()
        return self._model

    def build_model(self):
        raise NotImplementedError

    def check_inputs(self):
        """Task-specific checks (data files for each requested mode)."""

    def load_tokenizer(self, do_lower_case=None):
        """`FullTokenizer` of `config.vocab_file`, its ids checked against the
        config's `vocab_size` (`checks.check_vocab`); `do_lower_case`
        defaults to the config's."""
        config = self.config
        if do_lower_case is None:
            do_lower_case = config.do_lower_case
        return checks.check_vocab(config.vocab_file, do_lower_case,
                                  self.bert_config, config.bert_config_file)

    def prepare(self):
        """Runs every check once, before any file is written.

        Order: the strategy (devices, precision), flags and config, data
        files, output_dir writable and not in use by another run, then the
        model is built and the checkpoint it will use is chosen and checked
        against it (shapes, layers, NaN/Inf), and stated in the log. Last,
        the first write: the output_dir lock (`data/io/output_lock.py`),
        held until `close()` (`run()` closes).
        """
        if self._prepared:
            return
        config = self.config
        # The strategy comes before any other TensorFlow work (record-file
        # checks, vocab, gfile): a multi-worker strategy can only be made at
        # program start-up. It is a check too: a TPU that does not answer
        # fails here (bounded wait), before anything is written.
        self.strategy  # noqa: B018 (property: sets up the strategy once)
        self.bert_config.check_sequence_length(
            config.max_seq_length, "--max_seq_length", config.bert_config_file,
            minimum=3)
        self.check_inputs()
        if config.output_dir is not None:
            checks.check_output_dir_writable(config.output_dir)
            checks.check_output_dir_free(config.output_dir)
        self.checkpoint = checks.choose_checkpoint(
            config.output_dir, config.init_checkpoint,
            allow_non_finite=config.allow_non_finite_checkpoint)
        if self.checkpoint.path:
            checks.check_checkpoint_fits(
                self.model, self.checkpoint.path, config.bert_config_file,
                allow_partial=config.allow_partial_checkpoint)
            checks.check_checkpoint_finite(
                self.model, self.checkpoint.path,
                config.allow_non_finite_checkpoint)
        elif not self.trains():
            checks.check_random_weights_allowed(config)
        logging.info("Checkpoint: %s.", self.checkpoint.describe())
        if config.output_dir is not None:
            self.lock_output_dir()
        self._prepared = True

    def trains(self):
        """True when this run trains (its `do_train` is set)."""
        return bool(getattr(self.config, "do_train", False))

    def lock_output_dir(self):
        """Takes output_dir's lock (the chief; other workers only check it)."""
        from data.io import output_lock

        cluster = output_lock.cluster_fingerprint()
        if not self.is_chief:
            checks.check_output_dir_free(self.config.output_dir)
            return
        self._output_lock = output_lock.OutputLock(
            self.config.output_dir, cluster=cluster).acquire()

    def close(self):
        """Releases the output_dir lock (`run()` does this when it ends)."""
        if self._output_lock is not None:
            self._output_lock.release()
            self._output_lock = None

    def reading_records(self, paths, what="records"):
        """Context manager: TensorFlow errors reading `paths` name the file
        and record (`data.io.record_scan.naming_record_errors`)."""
        from data.io.record_scan import naming_record_errors

        return naming_record_errors(paths, what)

    def make_output_dir(self):
        import tensorflow as tf

        tf.io.gfile.makedirs(self.config.output_dir)

    # -- training and inference ------------------------------------------------

    def worker_folder(self):
        """Context manager: where this worker writes intermediate files.

        output_dir (made here) on the chief; on the other workers of a
        multi-worker run a temporary folder, removed when the block ends, so
        anything reading a file written there must be consumed inside it.
        """
        self.make_output_dir()
        return runtime_lib.worker_output_dir(self.strategy,
                                             self.config.output_dir)

    def original_train_steps(self, num_examples):
        """The original scripts' step count: int(num_examples /
        train_batch_size * num_train_epochs) (run_classifier.py,
        run_squad.py)."""
        config = self.config
        return int(num_examples / config.train_batch_size
                   * config.num_train_epochs)

    def train_model(self, dataset, num_train_steps, batch_size, learning_rate,
                    num_warmup_steps, optimizer_model=None):
        """Trains `self.model` with `modeling.training.run_training`.

        Training starts from `self.checkpoint`, the choice `prepare()` checked
        and logged. The optimizer is `modeling.optimization.create_optimizer`
        with the runtime's --optimizer and --gradient_accumulation_steps,
        made under the strategy's scope.

        Args:
            dataset: repeating `(features, labels)` batches.
            num_train_steps: int, total optimizer steps.
            batch_size: int, global examples per step.
            learning_rate: float, peak learning rate.
            num_warmup_steps: int, linear warm-up steps.
            optimizer_model: the model whose variables the optimizer's
                weight-decay rule reads (see `create_optimizer`), or None.

        Returns:
            dict with `loss` and `global_step`.
        """
        from modeling import optimization, training

        config = self.config
        self.prepare()
        self.make_output_dir()
        if self.checkpoint.source != "output_dir" and self.is_chief:
            # A rerun resumes from output_dir; the record tells a later
            # --init_checkpoint whether it is the one this run started from.
            checks.record_init_checkpoint(config.output_dir,
                                          config.init_checkpoint)
        with self.strategy.scope():
            optimizer = optimization.create_optimizer(
                learning_rate, num_train_steps, num_warmup_steps,
                optimizer_type=config.runtime.optimizer, model=optimizer_model,
                gradient_accumulation_steps=(
                    config.runtime.gradient_accumulation_steps))
        result = training.run_training(
            self.model, optimizer, dataset, num_train_steps, config.output_dir,
            config.runtime, batch_size, strategy=self.strategy,
            start_from=self.checkpoint)
        self.global_step = result["global_step"]
        self._weights_ready = True
        # After training, inference uses the weights in memory, which are the
        # newest checkpoint in output_dir: `model.ckpt-<global_step>`, named
        # here rather than read back (another worker may not see the chief's
        # state file yet).
        self.checkpoint = training.CheckpointChoice(
            os.path.join(config.output_dir, "%s-%d" % (
                training.TRAINING_CHECKPOINT_PREFIX, self.global_step)),
            "output_dir",
            allow_non_finite=config.allow_non_finite_checkpoint)
        return result

    def report_evaluation(self, results):
        """After an evaluation: its numbers to TensorBoard (`output_dir/eval/`,
        at `self.global_step`), then `training_curves.png` redrawn with them
        (when output_dir holds training events). Chief only.

        Args:
            results: dict name -> number, as written to the results file.
        """
        from modeling import training

        if not self.is_chief:
            return
        training.write_eval_summaries(self.config.output_dir, results,
                                      self.global_step)
        training.write_training_curves(self.config.output_dir)

    def predict_outputs(self, dataset):
        """The model's outputs on `dataset` (`modeling.training.predict`).

        Under a multi-worker strategy each worker predicts all of `dataset`
        on its own (no collective), so the chief alone can write results.
        """
        from modeling import training

        return training.predict(self.model, dataset, self.strategy)

    def logits_and_labels(self, dataset):
        """Runs `predict_outputs` over (x, label_ids, weights) batches and
        reads the labels and weights back from the same dataset.

        Returns:
            (logits float32, label_ids, weights) NumPy arrays, rows in the
            dataset's order (padding rows included; weights 0 mark them).
        """
        logits = np.asarray(self.predict_outputs(
            dataset.map(lambda x, y, w: x)), np.float32)
        labels, weights = [], []
        for _, y, w in dataset.as_numpy_iterator():
            labels.append(y)
            weights.append(w)
        return logits, np.concatenate(labels), np.concatenate(weights)

    def restore_weights(self):
        """Loads `self.checkpoint` (the choice `prepare()` checked and logged)
        for inference, once; sets global_step."""
        from modeling import training

        if self._weights_ready:
            return self.global_step
        self.prepare()
        self.global_step = training.restore_for_inference(
            self.model, self.checkpoint,
            allow_random_weights=self.config.allow_random_weights)
        self._weights_ready = True
        return self.global_step

    def run(self):
        """Checks everything, then runs the requested modes in order.

        Returns:
            dict result key -> what the mode's method returned, for the
            modes whose config field is true.
        """
        self.prepare()
        try:
            return {mode.name: getattr(self, mode.method)()
                    for mode in requested(self.config, self.modes)}
        finally:
            self.close()
