"""Which runner a script uses (`--runner`: `local`, the script's own path
without Beam, or a Beam runner) and the Beam options passed to it, for both
Beam pipelines: create_pretraining_data.py's
(`bert_tf1.data.pretraining.beam_pipeline`, docs/pretraining.md "On Apache
Beam") and batch inference's (`bert_tf1.tasks.batch_inference`,
docs/batch_inference.md).
"""
import contextlib
import importlib.util
import logging as std_logging
import os
import shlex

from absl import logging

from bert_tf1.data.io.errors import UserError

LOCAL_RUNNER = "local"

# Beam names of runners that run on this machine.
_DIRECT_RUNNERS = ("DirectRunner", "FnApiRunner", "BundleBasedDirectRunner")
# Runner -> its option for the number of workers (--num_workers).
_WORKERS_OPTION = dict.fromkeys(_DIRECT_RUNNERS, "--direct_num_workers")
_WORKERS_OPTION.update(DataflowRunner="--num_workers",
                       FlinkRunner="--parallelism")


def is_local(runner):
    """True when `runner` means the script's own path, not Beam: the
    process pool of `bert_tf1.data.pretraining.pipeline`, the one process
    of predict_text.py and extract_features.py."""
    return not runner or runner == LOCAL_RUNNER


def check_runner(runner, **beam_only):
    """Raises UserError for a flag of `beam_only` (name -> value) set with
    `local`, or a Beam runner without apache-beam (`require_beam`)."""
    if not is_local(runner):
        require_beam(runner)
        return
    for name, value in beam_only.items():
        if value:
            raise UserError(f"--{name} needs a Beam runner "
                            "(--runner=DirectRunner, DataflowRunner, ...)")


def require_beam(runner):
    """Raises UserError naming `runner` unless apache-beam is installed."""
    if importlib.util.find_spec("apache_beam") is None:
        raise UserError("--runner=%s needs Apache Beam, which is not "
                        "installed: pip install -e '.[beam]' (or pip install "
                        "apache-beam)" % runner)


def _has_option(args, name):
    return any(arg == name or arg.startswith(name + "=") for arg in args)


def beam_args(runner, beam_pipeline_options="", num_workers=1):
    """The Beam command-line arguments for a run.

    Returns:
      list of str, e.g. ["--runner=FnApiRunner", "--direct_num_workers=2",
      "--direct_running_mode=multi_processing"].

    Raises:
      UserError: the options name a runner themselves, or do not parse as
        a command line.
    """
    if isinstance(beam_pipeline_options, str):
        try:
            args = shlex.split(beam_pipeline_options)
        except ValueError as error:
            raise UserError("--beam_pipeline_options=%r: %s"
                            % (beam_pipeline_options, error)) from None
    else:
        args = list(beam_pipeline_options or ())
    if _has_option(args, "--runner"):
        raise UserError("--beam_pipeline_options must not set --runner; "
                        "pass --runner=%s to the script instead" % runner)
    # DirectRunner runs as FnApiRunner, which downloads nothing.
    name = "FnApiRunner" if runner == "DirectRunner" else runner
    args = ["--runner=" + name] + args
    option = _WORKERS_OPTION.get(runner)
    if option and num_workers > 1 and not _has_option(args, option):
        args += ["%s=%d" % (option, num_workers)]
        if (runner in _DIRECT_RUNNERS
                and not _has_option(args, "--direct_running_mode")):
            args += ["--direct_running_mode=multi_processing"]
    return args


@contextlib.contextmanager
def quiet_local_runner(runner):
    """Raises the "apache_beam" logger to WARNING while a local runner runs
    (its driver echoes every worker line at INFO)."""
    if runner not in _DIRECT_RUNNERS:
        yield
        return
    beam_logger = std_logging.getLogger("apache_beam")
    previous = beam_logger.level
    beam_logger.setLevel(max(previous, std_logging.WARNING))
    try:
        yield
    finally:
        beam_logger.setLevel(previous)


def pipeline_options(args):
    """PipelineOptions for `args`; checks the runner can be created.

    Raises:
      UserError: an unknown runner, or one whose Beam extra is missing
        (e.g. DataflowRunner needs apache-beam[gcp]).
    """
    from apache_beam.options.pipeline_options import (PipelineOptions,
                                                      StandardOptions)
    from apache_beam.runners.runner import create_runner

    options = PipelineOptions(args)
    runner = options.view_as(StandardOptions).runner
    try:
        create_runner(runner)
    except ImportError as error:
        raise UserError("--runner=%s needs a Beam extra that is not "
                        "installed (%s); e.g. pip install 'apache-beam[gcp]' "
                        "for DataflowRunner" % (runner, error)) from None
    except ValueError as error:
        raise UserError("--runner=%s: %s" % (runner, error)) from None
    return options


def make_workers_find_project(options):
    """Puts the folder holding the `bert_tf1` package (a clone's root, or
    site-packages) on PYTHONPATH for multi_processing workers (they inherit
    the environment, not sys.path)."""
    from apache_beam.options.pipeline_options import DirectOptions

    import bert_tf1

    if options.view_as(DirectOptions).direct_running_mode != (
            "multi_processing"):
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(bert_tf1.__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
             if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root] + paths)


def run_pipeline(runner, options, build):
    """Runs the Beam pipeline that `build(root)` adds to a new
    `beam.Pipeline(options=options)` (its workers find the project:
    `make_workers_find_project`); returns its result once done.

    Raises:
      RuntimeError: the pipeline ended in another state than DONE.
    """
    import apache_beam as beam
    from apache_beam.runners.runner import PipelineState

    make_workers_find_project(options)
    with quiet_local_runner(runner):
        root = beam.Pipeline(options=options)
        build(root)
        result = root.run()
        state = result.wait_until_finish()
    if state != PipelineState.DONE:
        raise RuntimeError("the Beam pipeline ended in state %s" % state)
    return result


def log_counters(result, namespace, names=None):
    """Logs a finished pipeline's counters of `namespace`, summed by name:
    `names` in that order (those present), or all sorted by name."""
    from apache_beam.metrics.metric import MetricsFilter

    try:
        counters = result.metrics().query(
            MetricsFilter().with_namespace(namespace))["counters"]
    except Exception as error:  # Runners differ in metrics support.
        logging.info("The runner reports no counters (%s)", error)
        return
    values = {}
    for counter in counters:
        value = counter.committed if counter.committed is not None else (
            counter.attempted)
        name = counter.key.metric.name
        values[name] = values.get(name, 0) + (value or 0)
    logging.info("Beam counters: %s", ", ".join(
        "%s=%d" % (name, values[name]) for name in (names or sorted(values))
        if name in values))
