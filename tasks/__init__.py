"""Task layer: one object per job, built from a dataclass config.

    from tasks import ClassificationConfig, ClassificationTask
    task = ClassificationTask(ClassificationConfig(task_name="MRPC", ...))
    results = task.run()            # or task.train() / evaluate() / predict()

`tasks.cli` is the scripts' shared skeleton (flags -> config -> task, one
error path); `tasks.checks` holds the checks run before any work.
"""
from tasks.base import Task, TaskConfig
from tasks.errors import UserError

__all__ = ["Task", "TaskConfig", "UserError"]
