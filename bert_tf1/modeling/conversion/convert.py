"""One call to move BERT weights between layouts: TF1 checkpoint, keras-hub
BertBackbone (preset folder or `.weights.h5`), Hugging Face safetensors.
Every conversion goes through the TF1 weight dict ({TF1 name: array});
tensors are copied, transposed or reshaped, never recomputed.
"""
import os

from absl import logging

from bert_tf1.data.io.errors import OutputExistsError, UserError
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.conversion import tf1
from bert_tf1.modeling.interop import huggingface, keras_hub

FORMATS = ("tf1", "keras_hub", "huggingface")
# Where a vocab file sits inside each input layout, when none is given.
_VOCAB_BESIDE = {"tf1": "vocab.txt", "huggingface": "vocab.txt",
                 "keras_hub": os.path.join("assets", "tokenizer", "vocabulary.txt")}


def read_weights(input_format, input_path, bert_config_file=None):
    """(weights, config) of a model in any of the `FORMATS`.

    Raises:
        ValueError: unknown format, or (keras_hub `.weights.h5`) no config.
        FileNotFoundError: nothing at input_path.
    """
    if input_format == "tf1":
        prefix, weights = tf1.read_tf1_weights(input_path)
        return weights, tf1.find_config(prefix, bert_config_file)
    if input_format == "keras_hub":
        config = (BertConfig.from_json_file(bert_config_file)
                  if bert_config_file else None)
        return keras_hub.backbone_to_tf1(keras_hub.load_backbone(input_path, config))
    if input_format == "huggingface":
        return huggingface.load_hf(input_path)
    raise UserError(f"Unknown format {input_format!r}; expected one of "
                    f"{', '.join(FORMATS)}.")


def vocab_beside(input_format, input_path):
    """The vocab file inside an input of `input_format`, or None."""
    directory = input_path if os.path.isdir(input_path) else os.path.dirname(input_path)
    candidate = os.path.join(directory, _VOCAB_BESIDE[input_format])
    return candidate if os.path.isfile(candidate) else None


def convert(input_format, input_path, output_format, output_path,
            bert_config_file=None, vocab_file=None, do_lower_case=True,
            encoder_only=False, label_names=None, finish=None):
    """Converts a model; returns the path written.

    Args:
        input_format, output_format: "tf1", "keras_hub" or "huggingface".
        input_path: a TF1 checkpoint prefix or directory; a keras-hub preset
            folder or `.weights.h5` file; a Hugging Face model directory.
        output_path: a new directory (or for keras_hub a new `*.weights.h5`
            file); never overwritten.
        bert_config_file: the config, when the input does not carry one.
        vocab_file: copied to the output; default: the input's own vocab.
        do_lower_case: stored with the vocab (keras-hub, Hugging Face).
        encoder_only: keep only `bert/*` (drop heads).
        label_names: a tagger's tags in id order (Hugging Face `id2label`,
            or `label_list.txt` beside a TF1 output); default for a Hugging
            Face input: its own `id2label`.
        finish: tf1 output only: callable(temp_dir) adding files.

    Raises:
        ValueError: unknown or identical formats, names or shapes that do not
            fit, settings the output cannot express.
        FileNotFoundError: missing input or config.
        FileExistsError: output_path exists.
    """
    for name in (input_format, output_format):
        if name not in FORMATS:
            raise UserError(f"Unknown format {name!r}; expected one of "
                            f"{', '.join(FORMATS)}.")
    if input_format == output_format:
        raise UserError(f"Input and output are both {input_format}; nothing "
                        "to convert.")
    if os.path.exists(output_path):
        raise OutputExistsError(f"Output {output_path} already exists; not "
                              "overwriting it. Choose a new path.")
    weights, config = read_weights(input_format, input_path, bert_config_file)
    vocab_file = vocab_file or vocab_beside(input_format, input_path)
    if encoder_only:
        weights = tf1.encoder_only(weights)
    if label_names is None and input_format == "huggingface":
        label_names = huggingface.read_label_names(input_path)
    if output_format == "tf1":
        return tf1.write_tf1_checkpoint(weights, config, output_path, vocab_file,
                                        label_names=label_names, finish=finish)
    if output_format == "huggingface":
        path, arch = huggingface.save_hf(weights, config, output_path,
                                         vocab_file, do_lower_case,
                                         label_names=label_names)
        logging.info("Wrote %s as %s.", path, arch)
        return path
    dropped = sorted(set(weights) - set(tf1.encoder_only(weights)))
    if dropped:
        logging.warning("A keras-hub BertBackbone has no heads; left out: %s",
                        ", ".join(dropped))
    backbone = keras_hub.tf1_to_backbone(weights, config)
    return keras_hub.save_backbone(backbone, output_path, vocab_file, do_lower_case)
