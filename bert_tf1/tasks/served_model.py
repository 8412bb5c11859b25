"""What a served model is built from, for export_saved_model.py and
predict_text.py --init_checkpoint: `ServedModelConfig` (their flags of the
same names) and `ServedModel`, which resolves the labels and, for a model
folder (a training script's output_dir), the files it records.

A model folder holds `bert_config.json`, `vocab.txt`, the lower-casing and
`max_seq_length` record (`tokenizer_config.json`), for a classifier or
tagger `label_list.txt`, and for a sentence embedder its pooling record
(`bert_tf1.modeling.pooling.POOLING_FILE`, written by run_embeddings.py and
fetch_pretrained.py): with `--init_checkpoint=<that folder>` alone every
other flag takes its value from there, the model type included (an
encoder where the pooling record is).
"""
import dataclasses
import os

from bert_tf1.data.glue.processors import get_processor
from bert_tf1.data.tagging.outputs import read_label_list
from bert_tf1.data.tokenization import lower_case_record
from bert_tf1.modeling.interop import sources
from bert_tf1.modeling.pooling import (POOLING_FILE, POOLINGS,
                                       read_pooling_record)
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError

#: max_seq_length when neither the flag nor the model folder gives one.
DEFAULT_MAX_SEQ_LENGTH = 128
LABEL_LIST_FILE = "label_list.txt"


@dataclasses.dataclass(kw_only=True)
class ServedModelConfig:
    """What a served model is built from: the flags of the same names of
    export_saved_model.py and predict_text.py (`bert_tf1.serving.export.
    load_served_model` arguments; a classifier's labels from at most one of
    task_name, label_list, num_labels, else the model folder's
    label_list.txt; a tagger's from `label_list_file`, `label_list` or that
    file). `bert_config_file`, `vocab_file` and `max_seq_length` None: the
    model folder's (`max_seq_length` else 128). `model_type` None: an
    encoder for a model folder with a pooling record, else a classifier.
    An encoder's `pooling` and `l2_normalize` None: the model folder's
    pooling record, else "mean" and False (`pooling_of`)."""
    model_type: str = None
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    max_seq_length: int = None
    init_checkpoint: str = None
    task_name: str = None
    label_list: list = None
    num_labels: int = None
    max_query_length: int = 64
    max_answer_length: int = 30
    n_best_size: int = 20
    label_list_file: str = None
    doc_stride: int = 128
    pooling: str = None
    l2_normalize: bool = None


def model_folder_of(init_checkpoint):
    """The folder a checkpoint path names or lies in (for
    output_dir/best/: output_dir), or None without one."""
    path = os.fspath(init_checkpoint or "")
    if not path:
        return None
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    if os.path.basename(os.path.normpath(folder)) == "best" and not (
            os.path.isfile(os.path.join(folder, "bert_config.json"))):
        folder = os.path.dirname(os.path.normpath(folder))
    return folder


def pooling_of(folder, pooling=None, l2_normalize=None):
    """An encoder's (pooling, l2_normalize): each one given, else the
    pooling record of the model folder `folder` (`POOLING_FILE`, the
    pooling the model was trained with), else "mean" and False.

    Args:
        folder: a model folder, or None.
        pooling: None or one of `bert_tf1.modeling.pooling.POOLINGS`
            (the --pooling flag); l2_normalize: None or bool.

    Raises:
        UserError: a value given that differs from the record (one line
            naming the flag, the file and both values), or an unknown
            pooling.
    """
    if pooling is not None and pooling not in POOLINGS:
        raise UserError(f"--pooling={pooling}: expected one of "
                        f"{', '.join(POOLINGS)}.")
    record = read_pooling_record(folder) if folder else None
    if record is None:
        return pooling or "mean", bool(l2_normalize)
    path = os.path.join(folder, POOLING_FILE)
    recorded_pooling, recorded_l2 = record
    for flag, given, recorded in (("pooling", pooling, recorded_pooling),
                                  ("l2_normalize", l2_normalize,
                                   recorded_l2)):
        if given is not None and given != recorded:
            show = (lambda value: str(value).lower()) if isinstance(
                recorded, bool) else str
            raise UserError(
                f"--{flag}={show(given)} differs from {path} ({flag}="
                f"{show(recorded)}, the model's own); leave --{flag} out to "
                "use the recorded one.")
    return recorded_pooling, bool(recorded_l2)


class ServedModel:
    """Resolves a `ServedModelConfig` (`resolve()`): the model folder's
    files for the flags not given, then the labels.

    Raises (from `resolve()`):
        UserError: a needed file neither given nor in the model folder, a
            case flag that contradicts the record, the label errors below.
    """

    def __init__(self, config):
        self.config = config
        self.label_list = None
        self.num_labels = None

    def resolve(self):
        """Fills the config from the model folder, checks the files and
        sets `label_list` and `num_labels`."""
        config = self.config
        folder = model_folder_of(config.init_checkpoint)
        if config.model_type is None:
            config.model_type = ("encoder" if folder and read_pooling_record(
                folder) is not None else "classifier")
        for field, name in (("bert_config_file", "bert_config.json"),
                            ("vocab_file", "vocab.txt")):
            beside = os.path.join(folder, name) if folder else None
            if getattr(config, field) is None and beside and os.path.isfile(
                    beside):
                setattr(config, field, beside)
            if getattr(config, field) is None:
                if config.init_checkpoint and sources.checkpoint_kind(
                        config.init_checkpoint) == "huggingface":
                    # PyTorch's weights alone: "save as safetensors first".
                    sources.find_checkpoint(config.init_checkpoint)
                raise UserError(
                    f"--{field} is needed: --init_checkpoint "
                    f"({config.init_checkpoint}) is no model folder holding "
                    f"{name} (a training script's output_dir).")
            checks.check_data_file(getattr(config, field), "--" + field)
        if config.max_seq_length is None:
            config.max_seq_length = (
                folder and lower_case_record.read_max_seq_length(folder)
            ) or DEFAULT_MAX_SEQ_LENGTH
        if config.do_lower_case is None:   # the flag not given
            recorded = lower_case_record.read_lower_case(config.vocab_file)
            config.do_lower_case = True if recorded is None else recorded
        if config.model_type == "classifier":
            self.label_list, self.num_labels = self.classifier_labels(folder)
        elif config.model_type == "tagger":
            self.label_list = self.tagger_labels(folder)
        elif config.model_type == "encoder":
            config.pooling, config.l2_normalize = pooling_of(
                folder, config.pooling, config.l2_normalize)

    def classifier_labels(self, folder=None):
        """(label_list, num_labels) from task_name, label_list or
        num_labels, else the model folder's label_list.txt.

        Raises:
            UserError: more than one of them, or none and no label_list.txt;
                num_labels < 1.
        """
        config = self.config
        given = [name for name in ("task_name", "label_list", "num_labels")
                 if getattr(config, name) is not None]
        beside = os.path.join(folder, LABEL_LIST_FILE) if folder else None
        if not given and beside and os.path.isfile(beside):
            return read_label_list(beside), None
        if len(given) != 1:
            raise UserError(
                "--model_type=classifier needs exactly one of --task_name, "
                f"--label_list, --num_labels; got {given or 'none'} (and no "
                f"{LABEL_LIST_FILE} beside --init_checkpoint).")
        if config.task_name is not None:
            processor = get_processor(config.task_name)
            if processor.is_regression:
                return None, 1
            return processor.get_labels(), None
        if config.label_list is not None:
            checks.check_distinct(config.label_list, "--label_list")
            return list(config.label_list), None
        if config.num_labels < 1:
            raise UserError(f"--num_labels must be >= 1, got "
                            f"{config.num_labels}.")
        return None, config.num_labels

    def tagger_labels(self, folder=None):
        """A tagger's tags: --label_list_file, --label_list, or the model
        folder's label_list.txt.

        Raises:
            UserError: both flags, or none and no label_list.txt; a
                malformed file (names its line).
        """
        config = self.config
        if config.label_list_file and config.label_list:
            raise UserError("Give --label_list_file or --label_list for a "
                            "tagger, not both.")
        if config.label_list_file:
            return read_label_list(config.label_list_file)
        if config.label_list:
            checks.check_distinct(config.label_list, "--label_list")
            return list(config.label_list)
        beside = os.path.join(folder or ".", LABEL_LIST_FILE)
        if not os.path.isfile(beside):
            raise UserError(
                f"--model_type=tagger needs its tags: no {LABEL_LIST_FILE} in "
                f"{folder or '.'} (run_ner.py writes one into its "
                "output_dir); pass --label_list_file.")
        return read_label_list(beside)

    def serving_arguments(self):
        """The keyword arguments of `bert_tf1.serving.export.
        load_served_model` for this config, labels resolved (after
        `resolve()`; an encoder's pooling and l2_normalize)."""
        leave_out = ("task_name", "label_list_file") + (
            () if self.config.model_type == "encoder"
            else ("pooling", "l2_normalize"))
        values = {field.name: getattr(self.config, field.name)
                  for field in dataclasses.fields(ServedModelConfig)
                  if field.name not in leave_out}
        return dict(values, label_list=self.label_list,
                    num_labels=self.num_labels)
