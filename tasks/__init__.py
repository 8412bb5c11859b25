"""Task layer: one object per job, built from a dataclass config.

    from tasks.classification import ClassificationConfig, ClassificationTask
    task = ClassificationTask(ClassificationConfig(task_name="MRPC", ...))
    results = task.run()            # or task.train() / evaluate() / predict()

One module per script (docs/architecture.md). Names are imported on first
use, so `import tasks.cli` stays free of TensorFlow.
"""
import importlib

_EXPORTS = {
    "Task": "tasks.base", "TaskConfig": "tasks.base",
    "FineTuningTask": "tasks.base",
    "UserError": "tasks.errors",
    "ClassificationConfig": "tasks.classification",
    "ClassificationTask": "tasks.classification",
    "SquadConfig": "tasks.squad", "SquadTask": "tasks.squad",
    "PretrainingConfig": "tasks.pretraining",
    "PretrainingTask": "tasks.pretraining",
    "FeatureExtractionConfig": "tasks.feature_extraction",
    "FeatureExtractionTask": "tasks.feature_extraction",
    "TaggingConfig": "tasks.tagging", "TaggingTask": "tasks.tagging",
    "MultipleChoiceConfig": "tasks.multiple_choice",
    "MultipleChoiceTask": "tasks.multiple_choice",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tasks' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
