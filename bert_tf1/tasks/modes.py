"""The modes a task runs (train, eval, predict): one table for every task,
its flags' defaults and helps from the original run_classifier.py."""
import dataclasses

from bert_tf1.data.io.errors import UserError


@dataclasses.dataclass(frozen=True)
class Mode:
    """One mode: its `name` (also the result key), the `Task` `method`
    that runs it, the data `split` it reads, and its flags' helps and
    default batch size."""
    name: str
    method: str
    split: str
    do_help: str
    batch_size: int
    batch_size_help: str

    @property
    def flag(self):
        """The config field and flag that switch the mode on: `do_<name>`."""
        return "do_" + self.name


MODES = {mode.name: mode for mode in (
    Mode("train", "train", "train", "Whether to run training.", 32,
         "Total batch size for training."),
    Mode("eval", "evaluate", "dev", "Whether to run eval on the dev set.", 8,
         "Total batch size for eval."),
    Mode("predict", "predict", "test",
         "Whether to run the model in inference mode on the test set.", 8,
         "Total batch size for predict."),
)}


def requested(config, names):
    """The modes among `names` whose `do_<mode>` field is true in `config`."""
    return [MODES[name] for name in names if getattr(config, MODES[name].flag)]


def check_some_requested(config, names):
    """Raises UserError unless a mode among `names` is requested, with the
    original scripts' message ("At least one of `do_train` or `do_predict`
    must be True."; run_classifier.py's three-mode one keeps its mismatched
    closing quote)."""
    if requested(config, names):
        return
    flags = [f"`{MODES[name].flag}`" for name in names]
    if len(flags) == 3:
        flags[-1] = flags[-1][:-1] + "'"
    listed = ", ".join(flags[:-1]) + " or " + flags[-1]
    raise UserError(f"At least one of {listed} must be True.")
