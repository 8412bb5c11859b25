"""Converting BERT weights between the TF1 layout, keras-hub and Hugging Face.

    task = ConversionTask(ConversionConfig(
        input_format="tf1", input_path="uncased_L-12_H-768_A-12",
        output_format="huggingface", output_path="/tmp/bert_hf"))
    task.run()

The work is `modeling.interop.convert`; here every check before anything is
written.
"""
import dataclasses

from tasks import checks


@dataclasses.dataclass(kw_only=True)
class ConversionConfig:
    """The flags of convert_checkpoint.py (see `modeling.interop.FORMATS`)."""
    input_format: str = "tf1"
    input_path: str = None
    output_format: str = None
    output_path: str = None
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    encoder_only: bool = False


class ConversionTask:
    """Checks the conversion's inputs (`prepare`), then converts (`run`).

    Raises (from `prepare()` or, before any weight is read, `convert`):
        UserError: an unknown format, the same format in and out, a missing
            input, config or vocab, an existing output_path.
    """

    def __init__(self, config):
        self.config = config

    def prepare(self):
        """Checks the files named by flags, before anything is written.

        The formats, the input and an existing output are checked by
        `modeling.interop.convert` itself, before it reads any weight.
        """
        config = self.config
        for flag in ("bert_config_file", "vocab_file"):
            if getattr(config, flag):
                checks.check_data_file(getattr(config, flag), "--" + flag)
        checks.check_output_dir_writable(config.output_path, "--output_path")

    def run(self):
        """Writes the converted model; returns its path."""
        from modeling.interop import convert

        self.prepare()
        config = self.config
        return convert(config.input_format, config.input_path,
                       config.output_format, config.output_path,
                       bert_config_file=config.bert_config_file,
                       vocab_file=config.vocab_file,
                       do_lower_case=config.do_lower_case,
                       encoder_only=config.encoder_only)
