"""Runs a task in-process from a script-style flag dict (tests only).

The counterpart of `tests/helpers/script_runner.py` without the subprocess: the same
`{flag name: value}` dicts build the task's config (runtime flags such as
`save_checkpoints_steps` go to its `RuntimeOptions`), and the task runs in
this process, so its results and errors can be inspected directly.
"""
import dataclasses
import os

from bert_tf1.modeling.training.runtime import RuntimeOptions


def _task_classes(script):
    from bert_tf1.tasks.classification import ClassificationConfig, ClassificationTask
    from bert_tf1.tasks.feature_extraction import (FeatureExtractionConfig,
                                                   FeatureExtractionTask)
    from bert_tf1.tasks.pretraining import PretrainingConfig, PretrainingTask
    from bert_tf1.tasks.squad import SquadConfig, SquadTask
    from bert_tf1.tasks.tagging import TaggingConfig, TaggingTask

    return {
        "run_classifier.py": (ClassificationConfig, ClassificationTask),
        "run_squad.py": (SquadConfig, SquadTask),
        "run_pretraining.py": (PretrainingConfig, PretrainingTask),
        "extract_features.py": (FeatureExtractionConfig, FeatureExtractionTask),
        "run_ner.py": (TaggingConfig, TaggingTask),
    }[script]


def make_task(script, flags):
    """The task `script` would run for `flags` (paths become str).

    Raises:
        TypeError: a flag the config has no field for (a typo in a test).
    """
    config_class, task_class = _task_classes(script)
    runtime_names = {field.name for field in dataclasses.fields(RuntimeOptions)}
    values = {key: os.fspath(value) if isinstance(value, os.PathLike) else value
              for key, value in flags.items()}
    runtime = RuntimeOptions(**{key: values.pop(key) for key in list(values)
                                if key in runtime_names})
    return task_class(config_class(runtime=runtime, **values))


def fixture_flags(fixture, output_dir, **extra):
    """Flags for a fixture model folder: its vocab.txt, bert_config.json and
    bert_model.ckpt, then `output_dir`; `extra` adds or overrides flags."""
    flags = {
        "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": fixture / "bert_model.ckpt",
        "output_dir": output_dir,
    }
    flags.update(extra)
    return flags


def run_task(script, flags):
    """Builds the task for `flags` and runs it; returns its results dict."""
    return make_task(script, flags).run()
