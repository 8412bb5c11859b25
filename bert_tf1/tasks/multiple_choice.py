"""Multiple choice (SWAG, HellaSwag, your own TSV): BERT paper §4.4.

Each example is num_choices rows `[CLS] context [SEP] ending [SEP]` scored by
`bert_tf1.modeling.BertMultipleChoice`; files as run_classifier.py's.
"""
import dataclasses

import numpy as np

from bert_tf1.data.multiple_choice import records
from bert_tf1.data.multiple_choice.readers import DATA_FORMATS
from bert_tf1.data.multiple_choice.readers import read_examples as read_file
from bert_tf1.modeling import BertMultipleChoice
from bert_tf1.modeling.models import losses
from bert_tf1.tasks import checks
from bert_tf1.tasks.configs import EvaluatingConfig
from bert_tf1.tasks.fine_tuning import SHUFFLE_SEED, FineTuningTask
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.model_building import build_script_model


@dataclasses.dataclass(kw_only=True)
class MultipleChoiceConfig(EvaluatingConfig):
    """run_multiple_choice.py's flags; the paper's SWAG defaults (§4.4).
    `data_format`: `bert_tf1.data.multiple_choice.readers.DATA_FORMATS`; every row
    must have `num_choices` (>= 2) endings."""
    train_file: str = None
    eval_file: str = None
    predict_file: str = None
    data_format: str = "swag"
    num_choices: int = 4
    train_batch_size: int = 16
    learning_rate: float = 2e-5
    num_train_epochs: float = 3.0


class MultipleChoiceTask(FineTuningTask):
    """BertMultipleChoice fine-tuning, evaluation and prediction.

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field; a mode without its file; a bad
            data_format or num_choices; a data file missing, empty or
            malformed (file and line named), or without labels for train or
            eval; no training step; a vocab or checkpoint that does not fit.
    """

    train_shuffle_seed = SHUFFLE_SEED  # SWAG rows come video by video
    records_name = "multiple-choice"
    export_model_type = "multiple_choice"

    def build_model(self):
        return build_script_model(self.create_model or BertMultipleChoice,
                                  (self.bert_config,), BertMultipleChoice)

    def check_task(self):
        config = self.config
        if str(config.data_format).lower() not in DATA_FORMATS:
            raise UserError(f"--data_format={config.data_format}: expected "
                            f"one of {', '.join(DATA_FORMATS)}")
        if (isinstance(config.num_choices, bool)
                or not isinstance(config.num_choices, int)
                or config.num_choices < 2):
            raise UserError(f"--num_choices={config.num_choices}: expected "
                            "an integer >= 2")

    def read_examples(self, mode):
        """The MultipleChoiceExamples of a mode's file, checked."""
        config = self.config
        path, flag, do_flag = self.data_file(mode), f"--{mode}_file", \
            f"--do_{mode}"
        if not path:
            raise UserError(f"{do_flag} needs {flag}, but none was given")
        checks.check_data_file(path, flag)
        examples = read_file(path, config.data_format, config.num_choices)
        checks.check_examples(examples, path, flag)
        if mode != "predict" and examples[0].label is None:
            # The readers accept a file without labels only as a whole.
            raise UserError(
                f"{path}: no labels (a test file?); {do_flag} needs the "
                "index of the right ending on every row")
        return examples

    def write_features(self, examples, path, mode):
        return records.file_based_convert_examples_to_features(
            examples, self.config.max_seq_length, self.tokenizer, path,
            num_choices=self.config.num_choices)

    def read_dataset(self, path, mode, batch_size):
        return records.multiple_choice_dataset(
            path, self.config.num_choices, self.config.max_seq_length,
            mode == "train", batch_size,
            include_is_real_example=mode != "train")

    def metric_names(self):
        """The evaluation's names (`compute_results`, global_step aside)."""
        return ["eval_accuracy", "eval_loss", "loss"]

    def compute_results(self, logits, labels, weights, num_actual):
        """eval_accuracy, eval_loss (softmax cross-entropy over the
        choices), global_step and loss
        (`bert_tf1.tasks.fine_tuning.FineTuningTask.classification_results`)."""
        per_example = np.asarray(
            losses.per_example_classifier_loss(logits, labels), np.float64)
        return self.classification_results(per_example, logits, labels,
                                           weights)

    def write_outputs(self, logits, num_actual):
        """test_results.tsv: the softmax over each example's choice scores,
        in input order; returns it, float32 [num_examples, num_choices]."""
        return self.write_test_results(logits[:num_actual])
