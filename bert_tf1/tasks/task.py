"""What every task shares (Model Garden's `Task` shape): built from a config
of `bert_tf1.tasks.configs`, it runs every check in `prepare()` before it
writes anything, and holds the strategy, the model, the checkpoint and the
training.
"""
import functools
import os

import tensorflow as tf
from absl import logging

from bert_tf1.data.io import output_lock
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.modeling import BertConfig, optimization, training
from bert_tf1.modeling.training import runtime as runtime_lib
from bert_tf1.tasks import checks, model_building
from bert_tf1.tasks.configs import check_lora_flags, lora_targets
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.modes import requested


class Task:
    """The common skeleton: subclasses implement `build_model()`,
    `check_inputs()`, the mode methods, and name their modes in `modes`.

    `create_model`: the script's model builder (docs/custom_models.md), or
    None for the task's stock model."""

    modes = ()

    def __init__(self, config, create_model=None):
        self.config = config
        self.create_model = create_model
        if isinstance(config.bert_config_file, BertConfig):
            config.bert_config_file.validate()
            self.bert_config = config.bert_config_file
        else:
            if not config.bert_config_file:
                raise UserError("--bert_config_file is required")
            checks.check_data_file(config.bert_config_file,
                                   "--bert_config_file")
            self.bert_config = BertConfig.from_json_file(
                config.bert_config_file)
        self.global_step = None
        self._prepared = False
        self._weights_ready = False
        self._output_lock = None

    @functools.cached_property
    def strategy(self):
        """The `tf.distribute.Strategy` (precision policy applied first)."""
        return runtime_lib.setup(self.config.runtime)

    @property
    def precision(self):
        """"float32", "bfloat16" or "float16": this run's compute precision
        (`runtime.resolve_precision` on the strategy)."""
        return runtime_lib.resolve_precision(self.config.runtime,
                                             self.strategy)

    @property
    def is_chief(self):
        return runtime_lib.is_chief(self.strategy)

    @functools.cached_property
    def model(self):
        """The task model, built once under the strategy's scope (LoRA
        adapters enabled with `lora_rank`)."""
        config = self.config
        with self.strategy.scope():
            model = self.build_model()
            if getattr(config, "lora_rank", 0):
                model_building.enable_lora(model, config.lora_rank,
                                           config.lora_alpha,
                                           lora_targets(config))
        return model

    def build_model(self):
        raise NotImplementedError

    def check_inputs(self):
        """Task-specific checks (data files for each requested mode)."""

    def load_tokenizer(self, do_lower_case=None):
        """`FullTokenizer` of `config.vocab_file`, its ids checked against
        the config's `vocab_size`; `do_lower_case` defaults to the config's."""
        config = self.config
        if do_lower_case is None:
            do_lower_case = config.do_lower_case
        checks.check_data_file(config.vocab_file, "--vocab_file")
        return full_tokenizer.tokenizer_for_model(
            config.vocab_file, do_lower_case, self.bert_config.vocab_size,
            config.bert_config_file)

    def prepare(self):
        """Runs every check once, before any file is written; then takes the
        output_dir lock (`bert_tf1/data/io/output_lock.py`) until `close()`.

        Raises:
            UserError: from any of these checks.
        """
        if self._prepared:
            return
        config = self.config
        # First: a multi-worker strategy must come before other TF work.
        self.strategy  # noqa: B018 (property: sets up the strategy once)
        self.bert_config.check_sequence_length(
            config.max_seq_length, "--max_seq_length", config.bert_config_file,
            minimum=3)
        check_lora_flags(config)
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
        if config.output_dir is not None and self.is_chief:
            # The chief takes the lock; the other workers checked it above.
            self._output_lock = output_lock.OutputLock(
                config.output_dir,
                cluster=output_lock.cluster_fingerprint()).acquire()
        self._prepared = True

    def trains(self):
        return bool(getattr(self.config, "do_train", False))

    def close(self):
        """Releases the output_dir lock (`run()` does this when it ends)."""
        if self._output_lock is not None:
            self._output_lock.release()
            self._output_lock = None

    def dynamic_padding(self, mode="predict"):
        """True when `mode`'s batches are cut to their longest example."""
        config = self.config
        if mode == "train" and not getattr(self, "cut_training_batches",
                                           True):
            return False
        return bool(config.dynamic_padding) and not (
            config.runtime.use_xla
            or runtime_lib.is_tpu_strategy(self.strategy))

    def make_output_dir(self):
        tf.io.gfile.makedirs(self.config.output_dir)

    def worker_folder(self):
        """Context manager: output_dir on the chief; on other workers a
        temporary folder removed when the block ends
        (`runtime.worker_output_dir`)."""
        self.make_output_dir()
        return runtime_lib.worker_output_dir(self.strategy,
                                             self.config.output_dir)

    def train_model(self, dataset, num_train_steps, batch_size, learning_rate,
                    num_warmup_steps, optimizer_model=None, callbacks=()):
        """Trains `self.model` from `self.checkpoint` on `dataset` (repeating
        `(features, labels)` batches of `batch_size`) with
        `bert_tf1.modeling.training.run_training` and
        `bert_tf1.modeling.optimization.create_optimizer`; returns {loss, global_step}.
        """
        config = self.config
        self.prepare()
        self.make_output_dir()
        if self.checkpoint.source != "output_dir" and self.is_chief:
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
            start_from=self.checkpoint, callbacks=list(callbacks))
        self.global_step = result["global_step"]
        self._weights_ready = True
        # Named, not read back: another worker may not see the state file yet.
        self.checkpoint = training.CheckpointChoice(
            os.path.join(config.output_dir, "%s-%d" % (
                training.TRAINING_CHECKPOINT_PREFIX, self.global_step)),
            "output_dir",
            allow_non_finite=config.allow_non_finite_checkpoint)
        return result

    def log_results(self, result):
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])

    def report_evaluation(self, results):
        """Chief only: `results` (name -> number) to TensorBoard
        (`output_dir/eval/`, at `self.global_step`), then
        `training_curves.png` redrawn."""
        if not self.is_chief:
            return
        training.write_eval_summaries(self.config.output_dir, results,
                                      self.global_step)
        training.write_training_curves(self.config.output_dir)

    def restore_weights(self):
        """Loads `self.checkpoint` for inference, once; sets global_step."""
        if self._weights_ready:
            return self.global_step
        self.prepare()
        self.global_step = training.restore_for_inference(
            self.model, self.checkpoint,
            allow_random_weights=self.config.allow_random_weights)
        self._weights_ready = True
        return self.global_step

    def after_modes(self, results):
        """Runs after the requested modes, before the output_dir lock is
        released; `results` (mode name -> result) may gain entries."""

    def run(self):
        """Checks everything, runs the requested modes in order, then
        `after_modes`; returns dict mode name -> what the mode's method
        returned."""
        self.prepare()
        try:
            results = {mode.name: getattr(self, mode.method)()
                       for mode in requested(self.config, self.modes)}
            self.after_modes(results)
            return results
        finally:
            self.close()
