"""The skeleton every script shares: flags -> config -> task, one error path.

A flag parsing error or a `UserError` ends in ONE line on stderr,
`<script>: error: <message>`, exit status 1, no traceback (unless
`--verbose_errors` or BERT_VERBOSE_ERRORS=1); any other exception is a bug:
its traceback, then one line saying so. Training stopped by a signal ends in
one line on how to resume, exit status 128 + the signal.
"""
import dataclasses
import os
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from absl import app, flags, logging  # noqa: E402

from bert_tf1.tasks.errors import UserError, one_line  # noqa: E402

VERBOSE_ERRORS_ENV = "BERT_VERBOSE_ERRORS"
MAX_LINE = 1000


def define_common_flags(checkpoint_flags=True):
    """Defines `--verbose_errors` and, with `checkpoint_flags`,
    `--allow_partial_checkpoint`, `--allow_non_finite_checkpoint` and
    `--allow_random_weights`. For `--help` to list them the script calls
    `flags.adopt_module_key_flags(cli)` itself."""
    flags.DEFINE_bool(
        "verbose_errors", False,
        "Show the Python traceback of an error instead of one line (also: "
        f"environment variable {VERBOSE_ERRORS_ENV}=1).")
    if checkpoint_flags:
        flags.DEFINE_bool(
            "allow_partial_checkpoint", False,
            "Accept a checkpoint whose encoder has other layers than the "
            "config (layers the model lacks are ignored, layers the "
            "checkpoint lacks start from random values). Without it that is "
            "an error.")
        flags.DEFINE_bool(
            "allow_non_finite_checkpoint", False,
            "Load a checkpoint even if some of its tensors hold NaN or Inf "
            "(with a warning). Without it that is an error naming them.")
        flags.DEFINE_bool(
            "allow_random_weights", False,
            "Evaluate or predict with a randomly initialised model when "
            "output_dir has no checkpoint and no --init_checkpoint is given. "
            "Without it that is an error.")


def verbose_errors():
    """True when tracebacks were asked for (flag or environment variable)."""
    if os.environ.get(VERBOSE_ERRORS_ENV, "").lower() in ("1", "true", "yes"):
        return True
    try:
        return bool(flags.FLAGS["verbose_errors"].value)
    except (KeyError, flags.UnparsedFlagAccessError):
        return False


def config_from_flags(config_class, flag_values=None, **overrides):
    """A task config dataclass from the flags of the same names (`runtime`:
    `runtime_flags.runtime_options_from_flags`; `do_lower_case`:
    `lower_case_from_flags`); `overrides` win.

    Raises:
        UserError: --do_lower_case contradicts the vocab's record.
    """
    from bert_tf1.tasks import runtime_flags

    flag_values = flag_values or flags.FLAGS
    values = {}
    for field in dataclasses.fields(config_class):
        if field.name == "runtime":
            if "use_tpu" in flag_values and "distribution_strategy" in flag_values:
                values["runtime"] = runtime_flags.runtime_options_from_flags(flag_values)
        elif field.name in flag_values:
            values[field.name] = flag_values[field.name].value
    if "do_lower_case" in values and "do_lower_case" not in overrides:
        values["do_lower_case"] = lower_case_from_flags(flag_values)
    values.update(overrides)
    return config_class(**values)


def lower_case_from_flags(flag_values=None):
    """--do_lower_case (bool), with the record beside --vocab_file
    (`bert_tf1.data.tokenization.lower_case_record`) as its default.

    Raises:
        UserError: the flag contradicts the record, or the record is not
            readable.
    """
    from bert_tf1.data.tokenization.lower_case_record import (RECORD_FILE,
                                                              read_lower_case)

    flag_values = flag_values or flags.FLAGS
    flag = flag_values["do_lower_case"]
    vocab_file = (flag_values["vocab_file"].value
                  if "vocab_file" in flag_values else None)
    if not vocab_file or "://" in str(vocab_file):
        return flag.value
    recorded = read_lower_case(vocab_file)
    if recorded is None:
        return flag.value
    if flag.present and bool(flag.value) != recorded:
        record = os.path.join(os.path.dirname(os.fspath(vocab_file)),
                              RECORD_FILE)
        raise UserError(
            f"--do_lower_case={str(bool(flag.value)).lower()} contradicts "
            f"{record}, which records do_lower_case "
            f"{str(recorded).lower()} for {vocab_file}; leave the flag out "
            "to use the recorded value.")
    return recorded


def fail(message, status=1, label="error"):
    """Prints `<script>: <label>: <message>` (no label: `<script>: <message>`)
    as one line of at most MAX_LINE characters (saying how much was cut)
    and exits with `status`."""
    program = os.path.basename(sys.argv[0]) if sys.argv else "bert"
    sys.stdout.flush()
    prefix = f"{program}: {label}: " if label else f"{program}: "
    limit = MAX_LINE - len(prefix)
    if len(message) > limit:
        tail = " ... ({} more characters; --verbose_errors shows all)"
        keep = max(0, limit - len(tail.format(len(message))))
        message = message[:keep] + tail.format(len(message) - keep)
    sys.stderr.write(f"{prefix}{message}\n")
    sys.stderr.flush()
    sys.exit(status)


_MISSING_FLAG = re.compile(
    r"flag --(\w+)=None: Flag --\1 must have a value other than None\.")


def parse_flags(argv):
    """absl's flag parsing, with a parse error as one line (no usage text)."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        missing = _MISSING_FLAG.findall(str(error))
        if missing:
            fail("required flag(s) not given: %s (see --help)" % ", ".join(
                "--" + name for name in missing))
        fail(f"{one_line(error)} (see --help for the flags)")


BUG_REPORT_HINT = (
    "this is a bug in bert-keras-tf1compat, not a problem with your input; "
    "please report it with the command line and the traceback above "
    "(README, \"Reporting a bug\")")


def mark_as_bug(error):
    """Attaches the one line saying `error` is a bug and where to report it
    (an exception note, printed after the traceback; Python 3.10: written to
    stderr at once)."""
    program = os.path.basename(sys.argv[0]) if sys.argv else "bert"
    line = (f"{program}: internal error: {type(error).__name__}: "
            f"{one_line(error)[:500]}; {BUG_REPORT_HINT}")
    if hasattr(error, "add_note"):
        error.add_note(line)
    else:  # Python 3.10
        sys.stderr.write(line + "\n")


def call_reporting_user_errors(function, *args, **kwargs):
    """Calls `function` under the one error path (module docstring)."""
    try:
        return function(*args, **kwargs)
    except Exception as error:
        # Looked up, not imported: importing it would load TensorFlow.
        preemption = sys.modules.get("bert_tf1.modeling.training.preemption")
        if preemption and isinstance(error, preemption.TrainingInterrupted):
            fail(str(error), status=error.exit_status, label=None)
        if isinstance(error, UserError):
            if verbose_errors():
                raise
            fail(one_line(error))
        mark_as_bug(error)  # a bug: say so, keep the traceback
        raise


def main(run, script=None, quiet=False):
    """Runs a script: parses flags, then `run()` (no arguments) under the
    one error path. `script`, the script module's name: `--help` prints its
    docstring and `--helpshort` its flags (absl shows those of `__main__`,
    which for a root shim or an installed command is not the script's
    module). Logs go out at INFO, as the original's; `quiet` (a script
    whose results are its output: export, prediction): at WARNING unless
    `--verbosity` is given."""
    if script and script != "__main__":
        sys.modules["__main__"].__doc__ = sys.modules[script].__doc__
        main_name = sys.argv[0] if sys.argv else "__main__"
        for flag in flags.FLAGS.get_key_flags_for_module(script):
            flags.FLAGS.register_key_flag_for_module(main_name, flag)

    def absl_main(argv):
        given = flags.FLAGS["verbosity"].present
        if not (quiet and given):
            logging.set_verbosity(logging.WARNING if quiet else logging.INFO)

        def checked_run():
            if len(argv) > 1:
                raise UserError("unexpected arguments (flags are written "
                                "--name=value): %s" % " ".join(argv[1:]))
            run()

        call_reporting_user_errors(checked_run)

    app.run(absl_main, flags_parser=parse_flags)


def task_main(task_class, config_class, create_model=None):
    """A training script's `main(create_model=...)` (run it with `main(...)`
    above): `task_class(config, create_model).run()`, the config from the
    flags (`config_from_flags(config_class)`); `create_model` defaults to
    the script's (docs/custom_models.md)."""
    default = create_model

    def main(create_model=None):
        return task_class(config_from_flags(config_class),
                          create_model or default).run()
    return main
