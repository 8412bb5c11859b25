"""A fine-tuned output_dir is itself a model folder: training copies
`bert_config.json` and `vocab.txt` there and records `do_lower_case`
(`bert_tf1.data.tokenization.lower_case_record`), the LoRA settings and the
precision (`SETTINGS_FILE`); a different file or setting already there is
an error found before anything is written.
"""
import json
import os

import tensorflow as tf

from bert_tf1.data.glue.processors import get_processor
from bert_tf1.data.io.atomic import write_bytes_atomically
from bert_tf1.data.tagging.outputs import write_label_list
from bert_tf1.data.tokenization import lower_case_record
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.layers import lora
from bert_tf1.tasks.configs import lora_targets
from bert_tf1.tasks.errors import UserError

#: output_dir file name -> the config field of the file copied there.
COPIED = {"bert_config.json": "bert_config_file", "vocab.txt": "vocab_file"}

#: output_dir file recording the run's LoRA settings and precision.
SETTINGS_FILE = "training_settings.json"


def _read(path):
    with tf.io.gfile.GFile(path, "rb") as f:
        return f.read()


def _contents(source):
    """A file's bytes, or those of a `BertConfig` given in place of one."""
    if isinstance(source, BertConfig):
        return source.to_json_string().encode("utf-8")
    return _read(source)


def _same_json(a, b):
    try:
        return json.loads(a) == json.loads(b)
    except ValueError:
        return a == b


def _settings(config, precision):
    """{"lora": None or {rank, alpha, targets}, "precision": precision}."""
    rank = getattr(config, "lora_rank", 0) or 0
    if not rank:
        return {"lora": None, "precision": precision}
    _, alpha, targets = lora.check_lora_arguments(
        rank, config.lora_alpha, lora_targets(config))
    return {"lora": {"rank": rank,
                     "alpha": float(rank if alpha is None else alpha),
                     "targets": ",".join(sorted(targets))},
            "precision": precision}


def _lora_text(settings, flags=False):
    if not settings:
        return "--lora_rank=0 (no LoRA)" if flags else "no LoRA"
    if flags:
        return (f"--lora_rank={settings['rank']} --lora_alpha="
                f"{settings['alpha']:g} --lora_targets={settings['targets']}")
    return (f"LoRA rank={settings['rank']}, alpha={settings['alpha']:g}, "
            f"targets={settings['targets']}")


def _check_settings(config, precision):
    """Raises UserError when output_dir records other LoRA settings or
    another precision than this run's."""
    path = os.path.join(config.output_dir, SETTINGS_FILE)
    if not tf.io.gfile.exists(path):
        return
    try:
        recorded = json.loads(_read(path))
        recorded_lora = recorded["lora"]
        recorded_precision = recorded["precision"]
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{path}: not a record of LoRA settings and precision"
                        f" ({type(error).__name__}: {error}); use a fresh "
                        "--output_dir") from None
    given = _settings(config, precision)
    if recorded_lora != given["lora"]:
        raise UserError(
            f"{path} records {_lora_text(recorded_lora)}, not "
            f"{_lora_text(given['lora'], flags=True)}: resume with the "
            "recorded LoRA flags, or use a fresh --output_dir")
    if precision and recorded_precision != precision:
        raise UserError(
            f"{path} records precision {recorded_precision}, not {precision} "
            "(--mixed_precision / --use_mixed_precision): resume in the "
            "recorded precision, or use a fresh --output_dir")


def check_model_files(config, trains, precision=None):
    """Raises UserError when training would replace a different
    bert_config.json, vocab.txt, lower-casing record, LoRA settings or
    precision (`precision`, when given) in output_dir."""
    if not trains or not config.output_dir:
        return
    for name, field in COPIED.items():
        source = getattr(config, field, None)
        target = os.path.join(config.output_dir, name)
        if not source or not tf.io.gfile.exists(target):
            continue
        same = (_same_json if name.endswith(".json") else bytes.__eq__)(
            _read(target), _contents(source))
        if not same:
            raise UserError(
                f"{target} differs from --{field}={source}: output_dir holds "
                "another model's files; use a fresh --output_dir")
    recorded = (lower_case_record.read_lower_case(config.output_dir)
                if tf.io.gfile.isdir(config.output_dir) else None)
    if recorded is not None and recorded != bool(config.do_lower_case):
        raise UserError(
            f"{os.path.join(config.output_dir, lower_case_record.RECORD_FILE)}"
            f" records do_lower_case={str(recorded).lower()}, not "
            f"--do_lower_case={str(bool(config.do_lower_case)).lower()}; use "
            "a fresh --output_dir")
    if tf.io.gfile.isdir(config.output_dir):
        _check_settings(config, precision)


def write_model_files(config, precision="float32"):
    """Copies bert_config.json and vocab.txt into output_dir (unless there
    already), records do_lower_case and max_seq_length and, for a GLUE
    task with labels, writes label_list.txt: the model folder that
    export_saved_model.py reads alone (`bert_tf1.tasks.served_model`); records
    the LoRA settings and `precision` in `SETTINGS_FILE`. Chief only."""
    for name, field in COPIED.items():
        source = getattr(config, field, None)
        target = os.path.join(config.output_dir, name)
        if source and not tf.io.gfile.exists(target):
            write_bytes_atomically(target, _contents(source))
    max_seq_length = getattr(config, "max_seq_length", None)
    if lower_case_record.read_lower_case(config.output_dir) is None or (
            max_seq_length and lower_case_record.read_max_seq_length(
                config.output_dir) is None):
        lower_case_record.write_lower_case(config.output_dir,
                                           config.do_lower_case,
                                           max_seq_length)
    settings_file = os.path.join(config.output_dir, SETTINGS_FILE)
    if not tf.io.gfile.exists(settings_file):
        write_bytes_atomically(settings_file, json.dumps(
            _settings(config, precision), indent=2).encode("utf-8") + b"\n")
    task_name = getattr(config, "task_name", None)
    processor = get_processor(task_name) if task_name else None
    label_file = os.path.join(config.output_dir, "label_list.txt")
    labels = ([str(label) for label in processor.get_labels()]
              if processor and not processor.is_regression else [])
    # What export_saved_model.py reads for a classifier (run_ner.py writes
    # its own); a label with whitespace could not be read back: none then.
    if labels and all(label and label == "".join(label.split())
                      for label in labels) and not tf.io.gfile.exists(
                          label_file):
        write_label_list(label_file, labels)
