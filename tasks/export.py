"""Exporting a checkpoint as a SavedModel that serves raw text.

    task = ExportTask(ExportConfig(
        model_type="classifier", bert_config_file="bert_config.json",
        vocab_file="vocab.txt", init_checkpoint="/tmp/mrpc_output",
        export_dir="export/mrpc", task_name="MRPC"))
    task.run()

The work is `serving.export_saved_model`; here the flags' rules: which label
list a classifier gets, the casing check, and every check before anything
is written.
"""
import dataclasses

from tasks import checks
from tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class ExportConfig:
    """The flags of export_saved_model.py.

    Attributes:
        model_type: one of `serving.MODEL_TYPES`.
        bert_config_file, vocab_file, do_lower_case, max_seq_length: as the
            model was trained.
        init_checkpoint: a checkpoint prefix or an output_dir.
        export_dir: the SavedModel folder to create (must not exist).
        task_name, label_list, num_labels: a classifier's labels (exactly one
            of them).
        max_query_length, max_answer_length, n_best_size: SQuAD.
    """
    model_type: str = "classifier"
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    init_checkpoint: str = None
    export_dir: str = None
    task_name: str = None
    label_list: list = None
    num_labels: int = None
    max_query_length: int = 64
    max_answer_length: int = 30
    n_best_size: int = 20


class ExportTask:
    """Checks the export's inputs (`prepare`), then writes it (`run`).

    Raises (from `prepare()`):
        UserError: no or several label sources for a classifier, an unknown
            task, a case flag that contradicts the checkpoint's name, a
            missing config/vocab, an existing export_dir.
    """

    def __init__(self, config):
        self.config = config
        self.label_list = None
        self.num_labels = None

    def classifier_labels(self):
        """(label_list, num_labels) from task_name, label_list or num_labels.

        Raises:
            UserError: none or more than one of them is given, or the task
                is unknown.
        """
        config = self.config
        given = [name for name in ("task_name", "label_list", "num_labels")
                 if getattr(config, name) is not None]
        if len(given) != 1:
            raise UserError(
                "--model_type=classifier needs exactly one of --task_name, "
                f"--label_list, --num_labels; got {given or 'none'}.")
        if config.task_name is not None:
            from data.glue.processors import get_processor

            processor = get_processor(config.task_name)
            if processor.is_regression:
                return None, 1
            return processor.get_labels(), None
        if config.label_list is not None:
            return list(config.label_list), None
        if config.num_labels < 1:
            raise UserError(f"--num_labels must be >= 1, got "
                            f"{config.num_labels}.")
        return None, config.num_labels

    def prepare(self):
        """Every check that needs no model, before anything is written."""
        from data.tokenization import full_tokenizer

        config = self.config
        checks.check_data_file(config.bert_config_file, "--bert_config_file")
        checks.check_data_file(config.vocab_file, "--vocab_file")
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        if config.model_type == "classifier":
            self.label_list, self.num_labels = self.classifier_labels()
        # An existing export_dir is refused by `export_saved_model` itself.
        checks.check_output_dir_writable(config.export_dir, "--export_dir")

    def run(self):
        """Writes the SavedModel; returns its directory.

        Raises:
            UserError: the config does not fit the checkpoint (names the
                config, the checkpoint and a few of the mismatches), and
                the errors of `serving.export_saved_model`.
        """
        from modeling import checkpoints
        from serving import export_saved_model

        self.prepare()
        config = self.config
        try:
            return self._export(export_saved_model)
        except checkpoints.CheckpointMismatchError as error:
            raise UserError(
                f"{config.bert_config_file} does not fit "
                f"{config.init_checkpoint}: "
                f"{checks.shorten_mismatch(str(error))}") from None

    def _export(self, export_saved_model):
        config = self.config
        return export_saved_model(
            config.export_dir, model_type=config.model_type,
            bert_config_file=config.bert_config_file,
            vocab_file=config.vocab_file,
            init_checkpoint=config.init_checkpoint,
            do_lower_case=config.do_lower_case,
            max_seq_length=config.max_seq_length,
            label_list=self.label_list, num_labels=self.num_labels,
            max_query_length=config.max_query_length,
            max_answer_length=config.max_answer_length,
            n_best_size=config.n_best_size)
