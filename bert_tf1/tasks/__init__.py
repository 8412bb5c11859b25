"""Task layer: one object per job, built from a dataclass config.

    from bert_tf1.tasks.classification import ClassificationConfig, ClassificationTask
    task = ClassificationTask(ClassificationConfig(task_name="MRPC", ...))
    results = task.run()            # or task.train() / evaluate() / predict()

One module per script (docs/architecture.md). Names are imported on first
use, so `import bert_tf1.tasks.cli` stays free of TensorFlow.
"""
from typing import TYPE_CHECKING

from bert_tf1.lazy_exports import lazy_exports

_EXPORTS = {
    "Task": "bert_tf1.tasks.task", "TaskConfig": "bert_tf1.tasks.configs",
    "FineTuningTask": "bert_tf1.tasks.fine_tuning",
    "UserError": "bert_tf1.tasks.errors",
    "ClassificationConfig": "bert_tf1.tasks.classification",
    "ClassificationTask": "bert_tf1.tasks.classification",
    "SquadConfig": "bert_tf1.tasks.squad", "SquadTask": "bert_tf1.tasks.squad",
    "PretrainingConfig": "bert_tf1.tasks.pretraining",
    "PretrainingTask": "bert_tf1.tasks.pretraining",
    "FeatureExtractionConfig": "bert_tf1.tasks.feature_extraction",
    "FeatureExtractionTask": "bert_tf1.tasks.feature_extraction",
    "TaggingConfig": "bert_tf1.tasks.tagging", "TaggingTask": "bert_tf1.tasks.tagging",
    "MultipleChoiceConfig": "bert_tf1.tasks.multiple_choice",
    "MultipleChoiceTask": "bert_tf1.tasks.multiple_choice",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # for editors and type checkers; Python loads them late
    from bert_tf1.tasks.task import Task
    from bert_tf1.tasks.configs import TaskConfig
    from bert_tf1.tasks.fine_tuning import FineTuningTask
    from bert_tf1.tasks.errors import UserError
    from bert_tf1.tasks.classification import (
        ClassificationConfig, ClassificationTask)
    from bert_tf1.tasks.squad import SquadConfig, SquadTask
    from bert_tf1.tasks.pretraining import PretrainingConfig, PretrainingTask
    from bert_tf1.tasks.feature_extraction import (
        FeatureExtractionConfig, FeatureExtractionTask)
    from bert_tf1.tasks.tagging import TaggingConfig, TaggingTask
    from bert_tf1.tasks.multiple_choice import (
        MultipleChoiceConfig, MultipleChoiceTask)
