"""predict_text.py / extract_features.py with --runner: every check, the
shard plan and the output folder's state before Beam starts
(bert_tf1.serving.batch_inference holds the pipeline). The folder's files
(`part-*`, `_PLAN.json`, `_SUCCESS`) and the rerun rules (refuse, resume,
never delete): `bert_tf1.data.io.shard_folder`.
"""
import dataclasses
import glob as pyglob
import os
import threading
import time

from absl import logging
import tensorflow as tf
from google.protobuf import message

from bert_tf1.data.io import beam_runners
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.shard_folder import Shard, ShardFolder
from bert_tf1.data.io.text_files import TextRange, iter_lines

INPUT_FORMATS = ("text", "tfrecord")


@dataclasses.dataclass(kw_only=True)
class BatchOptions:
    """The --runner flags: `runner` ("local": the script's own one-process
    path), `num_workers`, `beam_pipeline_options`, `output_dir` (with a
    Beam runner only), `input_format` ("text" or "tfrecord", whose string
    features `text_feature` names: one, or two comma-separated for pairs),
    `max_tokens` per batch (rows x longest), `lines_per_shard`."""
    runner: str = "local"
    num_workers: int = 1
    beam_pipeline_options: str = ""
    output_dir: str = None
    input_format: str = "text"
    text_feature: str = None
    max_tokens: int = 8192
    lines_per_shard: int = 100000
    progress_seconds: float = 30.0

    @property
    def on_beam(self):
        return not beam_runners.is_local(self.runner)


def check_options(options, output_file=None):
    """The flags fit together (before anything is read).

    Raises:
        UserError: Beam flags without --runner, --output_dir without a
            Beam runner or a Beam runner without it, --output_file with
            one, a bad --input_format or --text_feature, Beam not installed.
    """
    beam_runners.check_runner(options.runner, **{
        name: getattr(options, name) for name in (
            "beam_pipeline_options", "output_dir", "text_feature")})
    if not options.on_beam:
        if options.input_format != "text" or options.num_workers != 1:
            raise UserError("--input_format and --num_workers need a Beam "
                            "runner (--runner=DirectRunner, ...)")
        return
    if not options.output_dir:
        raise UserError(f"--runner={options.runner} writes shards into "
                        "--output_dir; give it")
    if output_file:
        raise UserError(f"--output_file is for --runner=local; with "
                        f"--runner={options.runner} the shards go to "
                        "--output_dir")
    if options.input_format not in INPUT_FORMATS:
        raise UserError(f"--input_format={options.input_format}: expected "
                        f"{' or '.join(INPUT_FORMATS)}")
    if (options.input_format == "tfrecord") != bool(options.text_feature):
        raise UserError("--text_feature (the string feature(s) holding the "
                        "text) goes with --input_format=tfrecord, and only "
                        "with it")
    for name in ("num_workers", "max_tokens", "lines_per_shard"):
        if getattr(options, name) < 1:
            raise UserError(f"--{name} must be at least 1")


def input_paths(input_file):
    """The files of a comma list of paths and globs, in order.

    Raises:
        UserError: a glob or path matching no file.
    """
    paths = []
    for pattern in [p for p in (input_file or "").split(",") if p]:
        found = sorted(tf.io.gfile.glob(pattern) if "://" in pattern
                       else pyglob.glob(pattern))
        found = [p for p in found if not tf.io.gfile.isdir(p)]
        if not found:
            raise UserError(f"--input_file={pattern}: no file matches it")
        paths += [p if "://" in p else os.path.abspath(p) for p in found]
    if not paths:
        raise UserError("--input_file is required")
    return paths


def plan_shards(paths, options, parse_line):
    """Reads every input once (UTF-8 and each line's fields checked) and
    cuts it into `bert_tf1.data.io.shard_folder.Shard`s of `lines_per_shard` lines.

    Raises:
        UserError: a line that is not UTF-8 or not a valid row (file and
            line named), a record without --text_feature, no examples.
    """
    pieces = []   # (TextRange, examples, features)
    for path in paths:
        if options.input_format == "tfrecord":
            pieces.append((TextRange(path), _count_records(
                path, options.text_feature.split(",")),
                tuple(options.text_feature.split(","))))
            continue
        start = position = 0
        first = number = 1
        examples = 0
        for line in iter_lines(TextRange(path)):
            position += len(line.encode("utf-8"))
            if parse_line(path, number, line.rstrip("\n").rstrip("\r")) is not None:
                examples += 1
            number += 1
            if number - first == options.lines_per_shard:
                pieces.append((TextRange(path, start, position, first),
                               examples, ()))
                start, first, examples = position, number, 0
        if number > first:
            pieces.append((TextRange(path, start, None, first), examples, ()))
    # A piece of skipped lines only would yield no row, so no file.
    pieces = [piece for piece in pieces if piece[1]]
    if not pieces:
        raise UserError(f"--input_file: no examples in {', '.join(paths)}")
    return [Shard(index, len(pieces), text_range, examples, features)
            for index, (text_range, examples, features) in enumerate(pieces)]


def _count_records(path, features):
    """The number of tf.train.Example records in `path`, each checked to
    hold `features` as UTF-8 strings (file and record named)."""
    count = 0
    records = iter(tf.data.TFRecordDataset(path).as_numpy_iterator())
    while True:
        try:
            record = next(records)
            example = tf.train.Example.FromString(record)
        except StopIteration:
            return count
        except (tf.errors.OpError, message.DecodeError) as error:
            raise UserError(
                f"{path}, record {count + 1}: not a TFRecord file of "
                "tf.train.Example records (--input_format=tfrecord): "
                f"{str(error).splitlines()[0]}") from None
        count += 1
        found = example.features.feature
        for name in features:
            if name not in found or not found[name].bytes_list.value:
                raise UserError(f"{path}, record {count}: no string feature "
                                f"{name!r} (--text_feature)")
            for value in found[name].bytes_list.value:
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise UserError(
                        f"{path}, record {count}: feature {name!r} is not "
                        f"UTF-8 text ({error.reason} at byte "
                        f"{error.start})") from None


def check_text_features(options, model_type, arity):
    """--text_feature names as many features as a `model_type` input takes:
    `arity` (fewest, most, as the message says it).

    Raises:
        UserError: naming --text_feature, its count and the expected one.
    """
    if options.input_format != "tfrecord":
        return
    names = options.text_feature.split(",")
    low, high, expected = arity
    if not low <= len(names) <= high:
        raise UserError(f"--text_feature={options.text_feature}: "
                        f"{len(names)} feature(s), but a {model_type} "
                        f"takes {expected}")


def _log_progress(folder, shards, seconds, stopped):
    """Logs lines done and lines/s, from the files of `shards` in the
    ShardFolder `folder`, every `seconds` until the threading.Event
    `stopped` is set."""
    total = sum(s.examples for s in shards)
    begin = time.time()
    while not stopped.wait(seconds):
        done = total - sum(s.examples for s in folder.unwritten(shards))
        logging.info("Batch inference: %d / %d lines (%.0f lines/s)",
                     done, total, done / (time.time() - begin))


def run_batch_inference(options, spec, input_file, parse_line,
                        format_result,
                        arity=(1, 2, "1 or 2 (text, or text_a and text_b)")):
    """Checks, plans and runs the pipeline; returns the examples written.

    Args:
        options: BatchOptions (check_options first).
        spec: bert_tf1.serving.batch_inference.ModelSpec.
        input_file: comma list of files and globs.
        parse_line: (path, line number, str) -> tuple of str, or None to skip;
            raises UserError for a bad line.
        format_result: (Row, result dict) -> the JSON dict of a line.
        arity: the texts an input takes (`check_text_features`).

    Raises:
        UserError: as input_paths, check_text_features, plan_shards,
            `bert_tf1.data.io.shard_folder.ShardFolder.shards_to_run`; bad
            Beam options.
        RuntimeError: the pipeline did not finish.
    """
    from bert_tf1.serving import batch_inference

    args = beam_runners.beam_args(options.runner, options.beam_pipeline_options,
                                  options.num_workers)
    pipeline_options = beam_runners.pipeline_options(args)
    check_text_features(options, spec.model_type, arity)
    shards = plan_shards(input_paths(input_file), options, parse_line)
    output_dir = options.output_dir
    if "://" not in output_dir:
        output_dir = os.path.abspath(output_dir)
    folder = ShardFolder(output_dir, tuple(shards), spec, spec.suffix)
    left = folder.shards_to_run()
    folder.start()
    logging.info("Running %d of %d shard(s) on Beam (%s)", len(left),
                 len(shards), " ".join(args))
    if left:
        stopped = threading.Event()
        threading.Thread(target=_log_progress, daemon=True, args=(
            folder, left, options.progress_seconds, stopped)).start()
        try:
            result = beam_runners.run_pipeline(
                options.runner, pipeline_options,
                lambda root: batch_inference.build_pipeline(
                    root, left, spec, parse_line, format_result, folder,
                    options.max_tokens))
        finally:
            stopped.set()
        beam_runners.log_counters(result, batch_inference.METRICS_NAMESPACE)
    total = folder.finish()
    logging.info("Wrote %d examples in %d shard(s) to %s", total,
                 len(shards), output_dir)
    return total
