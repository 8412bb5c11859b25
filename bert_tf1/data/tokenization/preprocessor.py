"""`BertPreprocessor`: raw text -> the model's int32 inputs, as a Keras layer.

The in-graph tokenizer and packer give a text the ids the scripts give it;
it runs in tf.data and is saved inside a `.keras` file with its vocab as an
asset (`vocab.txt`).
"""
import json
import os

import keras
import tensorflow as tf

from bert_tf1.data.io.errors import MissingFileError, UserError
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.data.tokenization.in_graph import InGraphFullTokenizer
from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.data.tokenization.packing import InGraphPacker
from bert_tf1.data.tokenization.vocab import load_vocab

#: Registered as `bert_tf1>BertPreprocessor` (the models' package name).
PACKAGE = "bert_tf1"
VOCAB_ASSET = "vocab.txt"
#: Where a vocab sits in each kind of model folder.
_VOCAB_PLACES = ("vocab.txt", os.path.join("assets", "tokenizer",
                                           "vocabulary.txt"))


def _find_vocab(path):
    """The vocab file of a model folder (or of the folder of a checkpoint
    prefix), looked for in the folder and its parent (`best/`)."""
    path = os.fspath(path)
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for candidate in (folder, os.path.dirname(folder)):
        for place in _VOCAB_PLACES:
            vocab_file = os.path.join(candidate, place)
            if os.path.isfile(vocab_file):
                return vocab_file
    raise MissingFileError(
        f"No vocab file for {path}: looked for {' or '.join(_VOCAB_PLACES)} "
        f"in {folder} and its parent; pass BertPreprocessor(vocab_file, "
        "do_lower_case, sequence_length) instead.")


def _keras_hub_lower_case(vocab_file):
    """`lowercase` of a keras-hub preset's tokenizer.json, or None."""
    config_file = os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(vocab_file))), "tokenizer.json")
    if not os.path.isfile(config_file):
        return None
    with open(config_file, encoding="utf-8") as reader:
        value = json.load(reader).get("config", {}).get("lowercase")
    return value if isinstance(value, bool) else None


def lower_case_for(path, vocab_file):
    """The folder's `do_lower_case`: its record (tokenizer_config.json, a
    keras-hub tokenizer.json), else the original's rule on Google folder
    names (`cased_L-12_H-768_A-12` is cased), else True."""
    recorded = read_lower_case(vocab_file)
    if recorded is None:
        recorded = _keras_hub_lower_case(vocab_file)
    if recorded is not None:
        return recorded
    folder = os.path.basename(os.path.dirname(os.path.abspath(vocab_file)))
    return folder not in full_tokenizer._CASED_MODELS


def _is_pair(inputs):
    """A tuple/list of two batches of texts (not a list of two texts)."""
    return (isinstance(inputs, (tuple, list)) and len(inputs) == 2
            and not isinstance(inputs[0], (str, bytes)))


@keras.saving.register_keras_serializable(package=PACKAGE)
class BertPreprocessor(keras.layers.Layer):
    """Texts (or text pairs) -> `input_ids`, `input_mask`, `segment_ids`.

    Args:
        vocab_file: the WordPiece vocab (None only while a `.keras` file
            loads it from its assets).
        do_lower_case: as the scripts' `--do_lower_case`.
        sequence_length: int, the packed length (`--max_seq_length`); None:
            no truncation, padded to each batch's longest.

    Call args:
        inputs: a string tensor / array / list [batch], or a tuple
            (texts_a, texts_b) of two for sentence pairs.
    Returns:
        dict of int32 [batch, sequence_length] `input_ids`, `input_mask`,
        `segment_ids`, equal to `FullTokenizer` + the scripts' packing
        (bert_tf1/data/glue/features.py `convert_single_example`).
    Raises:
        UserError: the vocab lacks [CLS], [SEP] or [UNK]; a vocab-less layer
            is called.

    Source: run_classifier.py `convert_single_example` and tokenization.py.
    """

    def __init__(self, vocab_file=None, do_lower_case=True,
                 sequence_length=128, **kwargs):
        super().__init__(**kwargs)
        self.do_lower_case = bool(do_lower_case)
        self.sequence_length = (None if sequence_length is None
                                else int(sequence_length))
        self._vocab_bytes = None
        self.tokenizer = None
        if vocab_file is not None:
            self._set_vocab(os.fspath(vocab_file))
        self.built = True

    @classmethod
    def from_checkpoint(cls, path, sequence_length=128, **kwargs):
        """The preprocessor of a model folder (Google, fine-tuned, Hugging
        Face, keras-hub) or a checkpoint prefix in one: its vocab and its
        `lower_case_for` unless `do_lower_case=` is given.

        Raises:
            MissingFileError: no vocab found.
        """
        vocab_file = _find_vocab(path)
        do_lower_case = kwargs.pop("do_lower_case", None)
        if do_lower_case is None:
            do_lower_case = lower_case_for(path, vocab_file)
        return cls(vocab_file, do_lower_case, sequence_length, **kwargs)

    def _set_vocab(self, vocab_file):
        with open(vocab_file, "rb") as reader:
            self._vocab_bytes = reader.read()
        vocab = load_vocab(vocab_file)
        missing = [t for t in ("[CLS]", "[SEP]", "[UNK]") if t not in vocab]
        if missing:
            raise UserError(f"{vocab_file}: the vocab lacks {missing}.")
        self.cls_id, self.sep_id = vocab["[CLS]"], vocab["[SEP]"]
        self.tokenizer = InGraphFullTokenizer(vocab_file, self.do_lower_case)
        self.packer = (None if self.sequence_length is None else
                       InGraphPacker(self.sequence_length, self.cls_id,
                                     self.sep_id))

    def __call__(self, inputs, **kwargs):
        # Layer.__call__ would cast arrays to a float dtype: strings first.
        if _is_pair(inputs):
            inputs = tuple(tf.convert_to_tensor(part, tf.string)
                           for part in inputs)
        else:
            inputs = tf.convert_to_tensor(inputs, tf.string)
        return super().__call__(inputs, **kwargs)

    def _ids(self, texts):
        return self.tokenizer(tf.reshape(texts, [-1]))

    def call(self, inputs):
        if self.tokenizer is None:
            raise UserError("This BertPreprocessor has no vocab: build it "
                            "with a vocab_file or load it from a .keras file.")
        if _is_pair(inputs):
            ids_a, ids_b = self._ids(inputs[0]), self._ids(inputs[1])
        else:
            ids_a, ids_b = self._ids(inputs), None
        if self.packer is not None:
            return self.packer(ids_a, ids_b)
        return self._pack_to_longest(ids_a, ids_b)

    def _pack_to_longest(self, ids_a, ids_b):
        """`[CLS] A [SEP] (B [SEP])` untruncated, padded to the batch's
        longest (a row whose B is empty is packed alone, as the original)."""
        rows = ids_a.nrows()

        def fill(value, lengths):
            return tf.RaggedTensor.from_row_lengths(
                tf.fill([tf.reduce_sum(lengths)], value), lengths)

        ones = tf.ones([rows], tf.int64)
        pieces = [fill(self.cls_id, ones), ids_a, fill(self.sep_id, ones)]
        segments = [tf.zeros_like(pieces[0]), tf.zeros_like(ids_a),
                    tf.zeros_like(pieces[2])]
        if ids_b is not None:
            has_b = tf.cast(ids_b.row_lengths() > 0, tf.int64)
            pieces += [ids_b, fill(self.sep_id, has_b)]
            segments += [tf.ones_like(ids_b), fill(1, has_b)]
        ids = tf.concat(pieces, axis=1)
        segment_ids = tf.concat(segments, axis=1)
        mask = tf.ones_like(ids)
        return {"input_ids": ids.to_tensor(),
                "input_mask": mask.to_tensor(),
                "segment_ids": segment_ids.to_tensor()}

    def compute_output_spec(self, inputs):
        shape = (None, self.sequence_length)
        return {key: keras.KerasTensor(shape, "int32")
                for key in ("input_ids", "input_mask", "segment_ids")}

    def get_config(self):
        config = super().get_config()
        # The vocab travels as an asset of the .keras file (save_assets).
        config.update(do_lower_case=self.do_lower_case,
                      sequence_length=self.sequence_length)
        return config

    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, VOCAB_ASSET), "wb") as writer:
            writer.write(self._vocab_bytes)

    def load_assets(self, dir_path):
        self._set_vocab(os.path.join(dir_path, VOCAB_ASSET))
