"""Writes pre-training records on the chosen runner: the project's process
pool (bert_tf1.data.pretraining.pipeline) or Beam (bert_tf1.data.pretraining.beam_pipeline,
whose options come from bert_tf1.data.pretraining.runners).
"""
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.pretraining.runners import is_local_pool, require_beam


def create_pretraining_files_with_runner(runner, input_files, output_files,
                                         vocab_file, beam_pipeline_options="",
                                         show_progress=True, **kwargs):
    """Writes pre-training TFRecords on the chosen runner; returns the count.

    `runner` "local" calls create_pretraining_files, a Beam runner name
    create_pretraining_files_beam; the other arguments are theirs.

    Raises:
      UserError: Beam options without a Beam runner, or a Beam runner
        without apache-beam installed; and whatever the runner raises.
    """
    if is_local_pool(runner):
        if beam_pipeline_options:
            raise UserError("--beam_pipeline_options needs a Beam runner "
                            "(--runner=DirectRunner, DataflowRunner, ...)")
        from bert_tf1.data.pretraining.pipeline import create_pretraining_files
        return create_pretraining_files(input_files, output_files,
                                        vocab_file,
                                        show_progress=show_progress,
                                        **kwargs)
    require_beam(runner)
    from bert_tf1.data.pretraining.beam_pipeline import create_pretraining_files_beam
    return create_pretraining_files_beam(
        input_files, output_files, vocab_file, runner=runner,
        beam_pipeline_options=beam_pipeline_options, **kwargs)
