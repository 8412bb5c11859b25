"""Converting BERT weights between the TF1 layout, keras-hub and Hugging Face.

The work is `bert_tf1.modeling.conversion.convert`; here the checks and the tokenizer.
"""
import dataclasses
import os
import tempfile

from bert_tf1.data.tagging.outputs import read_label_list
from bert_tf1.data.tokenization import lower_case_record, tokenizer_json
from bert_tf1.modeling.conversion.convert import convert, vocab_beside
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class ConversionConfig:
    """The flags of convert_checkpoint.py (`bert_tf1.modeling.conversion.convert.FORMATS`).

    `label_list_file`: a tagger's tags (default: label_list.txt beside a TF1
    input). `do_lower_case`: None takes what the input's tokenizer says,
    else True; a value that contradicts it is an error.
    """
    input_format: str = "tf1"
    input_path: str = None
    output_format: str = None
    output_path: str = None
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = None
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
        self.vocab_tokens = None  # from tokenizer.json when no vocab.txt
        self.has_vocab = False
        self.do_lower_case = True

    def _input_folder(self):
        path = os.fspath(self.config.input_path)
        return path if os.path.isdir(path) else os.path.dirname(path)

    def _case_source(self):
        """(do_lower_case of the input's tokenizer or None, its source)."""
        config = self.config
        if config.vocab_file:
            self.has_vocab = True
            if "://" in config.vocab_file:
                return None, None
            return (lower_case_record.read_lower_case(config.vocab_file),
                    os.path.join(os.path.dirname(config.vocab_file),
                                 lower_case_record.RECORD_FILE))
        if config.input_format not in ("tf1", "huggingface") or (
                not config.input_path or "://" in os.fspath(config.input_path)):
            return None, None
        folder = self._input_folder()
        self.has_vocab = bool(vocab_beside(config.input_format,
                                           config.input_path))
        tokenizer_path = os.path.join(folder, tokenizer_json.TOKENIZER_JSON)
        if config.input_format == "huggingface" and os.path.isfile(
                tokenizer_path):
            tokens, lower = tokenizer_json.read_tokenizer_json(tokenizer_path)
            if not self.has_vocab:
                self.vocab_tokens, self.has_vocab = tokens, True
            return lower, tokenizer_path
        return (lower_case_record.read_lower_case(folder),
                os.path.join(folder, lower_case_record.RECORD_FILE))

    def _resolve_lower_case(self):
        recorded, source = self._case_source()
        given = self.config.do_lower_case
        if recorded is not None and given is not None and (
                bool(given) != recorded):
            raise UserError(
                f"--do_lower_case={str(bool(given)).lower()} contradicts "
                f"{source} (do_lower_case {str(recorded).lower()}); leave the "
                "flag out to use the tokenizer's setting.")
        if recorded is not None:
            return recorded
        return True if given is None else bool(given)

    def _label_list_file(self):
        """The flag's label list, or label_list.txt beside a TF1 input."""
        config = self.config
        if config.label_list_file:
            return config.label_list_file
        if config.input_format != "tf1" or not config.input_path:
            return None
        beside = os.path.join(self._input_folder(), "label_list.txt")
        return beside if os.path.isfile(beside) else None

    def prepare(self):
        """Checks the files named by flags, before anything is written
        (`convert` checks the formats, the input and the output itself)."""
        config = self.config
        for flag in ("bert_config_file", "vocab_file"):
            if getattr(config, flag):
                checks.check_data_file(getattr(config, flag), "--" + flag)
        checks.check_output_dir_writable(config.output_path, "--output_path")
        self._check_unused_flags()
        self.do_lower_case = self._resolve_lower_case()
        label_list_file = self._label_list_file()
        if label_list_file:
            self.label_names = read_label_list(label_list_file)

    def _check_unused_flags(self):
        """A flag this conversion would ignore is an error, not dropped."""
        config = self.config
        own_config = config.input_format == "huggingface" or (
            config.input_format == "keras_hub" and not os.fspath(
                config.input_path or "").endswith(".weights.h5"))
        if config.bert_config_file and own_config:
            raise UserError(
                f"--bert_config_file={config.bert_config_file}: not read for "
                f"--input_format={config.input_format}, whose folder holds "
                "its own config.json; leave the flag out")
        if config.label_list_file and (config.encoder_only
                                       or config.output_format == "keras_hub"):
            raise UserError(
                f"--label_list_file={config.label_list_file}: names a tagging "
                "head's tags, but this output has no head (--encoder_only or "
                "--output_format=keras_hub); leave the flag out")

    def run(self):
        """Writes the converted model; returns its path (a TF1 output: its
        checkpoint prefix)."""
        self.prepare()
        config = self.config
        finish = None
        if self.has_vocab and config.output_format == "tf1":
            def finish(folder):
                lower_case_record.write_lower_case(folder, self.do_lower_case)
        with tempfile.TemporaryDirectory() as scratch:
            vocab_file = config.vocab_file
            if self.vocab_tokens is not None:
                vocab_file = os.path.join(scratch, "vocab.txt")
                with open(vocab_file, "w", encoding="utf-8") as writer:
                    writer.write(tokenizer_json.vocab_text(self.vocab_tokens))
            return convert(config.input_format, config.input_path,
                           config.output_format, config.output_path,
                           bert_config_file=config.bert_config_file,
                           vocab_file=vocab_file,
                           do_lower_case=self.do_lower_case,
                           encoder_only=config.encoder_only,
                           label_names=self.label_names, finish=finish)
