"""Pre-training data from raw text: the original create_pretraining_data.py.

The checks, then the work on the chosen runner (`--runner`: the process
pool of `bert_tf1.data.pretraining.pipeline`, or Beam by
`bert_tf1.data.pretraining.beam_pipeline` with the options of
`bert_tf1.data.io.beam_runners`).
"""
import dataclasses
import os

from bert_tf1.data.pretraining.pipeline import (PretrainingOptions,
                                                 create_pretraining_files)
from bert_tf1.data.io.beam_runners import check_runner, is_local
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError


@dataclasses.dataclass(kw_only=True, frozen=True)
class PretrainingDataConfig(PretrainingOptions):
    """The original create_pretraining_data.py flags (same names, defaults:
    these and `PretrainingOptions`'), plus `num_workers`, `shard_size_mb`
    and the Beam `runner` with its `beam_pipeline_options`
    (`bert_tf1.data.io.beam_runners`)."""
    input_file: str = None
    output_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    random_seed: int = 12345
    num_workers: int = 1
    shard_size_mb: float = 16.0
    runner: str = "local"
    beam_pipeline_options: str = ""


class PretrainingDataTask:
    """Checks everything (`prepare`), then writes the TFRecords (`run`).

    Raises (from `prepare()`, before anything is written):
        UserError: an option out of range, no output file, an output file
            that is a folder or whose folder is a file or not writable, an
            input glob matching no (non-empty) file, a missing vocab file,
            Beam options without a Beam runner, a Beam runner without
            apache-beam installed.
    """

    def __init__(self, config):
        self.config = config
        self.options = None
        self.input_files = None
        self.output_files = None

    def prepare(self):
        """Every check, before any file is read for work or written."""
        config = self.config
        self.options = PretrainingOptions(**{
            field.name: getattr(config, field.name)
            for field in dataclasses.fields(PretrainingOptions)})
        self.options.validate()
        if config.num_workers < 1:
            raise UserError("--num_workers must be at least 1, got %d"
                            % config.num_workers)
        if config.shard_size_mb < 0:
            raise UserError("--shard_size_mb must be >= 0, got %r"
                            % config.shard_size_mb)
        check_runner(config.runner,
                     beam_pipeline_options=config.beam_pipeline_options)
        self.output_files = [p for p in (config.output_file or "").split(",")
                             if p]
        if not self.output_files:
            raise UserError("--output_file names no file")
        for path in self.output_files:
            if "://" in path:
                continue
            if os.path.isdir(path):
                raise UserError(f"--output_file={path} is a folder, expected "
                                "a file name")
            checks.check_output_dir_writable(
                os.path.dirname(os.path.abspath(path)), "--output_file")
        self.input_files = checks.check_input_files(config.input_file)
        checks.check_data_file(config.vocab_file, "--vocab_file")

    def run(self):
        """Writes the records on the chosen runner; returns the count."""
        self.prepare()
        config = self.config
        common = dict(do_lower_case=config.do_lower_case,
                      options=self.options, random_seed=config.random_seed,
                      num_workers=config.num_workers,
                      shard_size_bytes=int(config.shard_size_mb * (1 << 20)))
        if is_local(config.runner):
            return create_pretraining_files(
                self.input_files, self.output_files, config.vocab_file,
                **common)
        from bert_tf1.data.pretraining.beam_pipeline import (
            create_pretraining_files_beam)
        return create_pretraining_files_beam(
            self.input_files, self.output_files, config.vocab_file,
            runner=config.runner,
            beam_pipeline_options=config.beam_pipeline_options, **common)
