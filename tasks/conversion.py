"""Converting BERT weights between the TF1 layout, keras-hub and Hugging Face.

    task = ConversionTask(ConversionConfig(
        input_format="tf1", input_path="uncased_L-12_H-768_A-12",
        output_format="huggingface", output_path="/tmp/bert_hf"))
    task.run()

The work is `modeling.interop.convert`; here every check before anything is
written.
"""
import dataclasses
import os

from tasks import checks


@dataclasses.dataclass(kw_only=True)
class ConversionConfig:
    """The flags of convert_checkpoint.py (see `modeling.interop.FORMATS`).

    `label_list_file`: a tagger's tags (run_ner.py's label_list.txt); by
    default the `label_list.txt` beside a TF1 input, if there is one. They
    go to Hugging Face's `id2label`, or to `label_list.txt` in a TF1 output.
    """
    input_format: str = "tf1"
    input_path: str = None
    output_format: str = None
    output_path: str = None
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    encoder_only: bool = False
    label_list_file: str = None


class ConversionTask:
    """Checks the conversion's inputs (`prepare`), then converts (`run`).

    Raises (from `prepare()` or, before any weight is read, `convert`):
        UserError: an unknown format, the same format in and out, a missing
            input, config or vocab, an existing output_path.
    """

    def __init__(self, config):
        self.config = config
        self.label_names = None

    def _label_list_file(self):
        """The label list to carry over: the flag's, or label_list.txt
        beside a TF1 input (None if neither)."""
        config = self.config
        if config.label_list_file:
            return config.label_list_file
        if config.input_format != "tf1" or not config.input_path:
            return None
        path = os.fspath(config.input_path)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        beside = os.path.join(folder, "label_list.txt")
        return beside if os.path.isfile(beside) else None

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
        label_list_file = self._label_list_file()
        if label_list_file:
            from data.tagging.outputs import read_label_list

            self.label_names = read_label_list(label_list_file)

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
                       encoder_only=config.encoder_only,
                       label_names=self.label_names)
