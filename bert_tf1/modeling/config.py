"""`BertConfig`: the hyper-parameters of a BERT model, read from `bert_config.json`.

Source: `BertConfig` of the original `modeling.py` (same fields, constructor
defaults, note `type_vocab_size=16`, and JSON writing). Unlike the original
it validates every value and requires the keys that fix the weights' shapes
(`REQUIRED_KEYS`), naming the file and field.
"""
import copy
import json
import os

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import MissingFileError, UserError
from bert_tf1.modeling.activations import ACTIVATION_NAMES

# The fields the model reads (the constructor gives the original's defaults).
_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers",
           "num_attention_heads", "intermediate_size", "hidden_act",
           "hidden_dropout_prob", "attention_probs_dropout_prob",
           "max_position_embeddings", "type_vocab_size", "initializer_range")

# Keys a `bert_config.json` must give: those that fix the weights' shapes (the
# original silently defaulted them); the others keep the original's defaults.
# Each must be a positive integer.
REQUIRED_KEYS = ("vocab_size", "hidden_size", "num_hidden_layers",
                 "num_attention_heads", "intermediate_size",
                 "max_position_embeddings", "type_vocab_size")
_PROBABILITIES = ("hidden_dropout_prob", "attention_probs_dropout_prob")


class BertConfigError(UserError):
    """A `bert_config.json` value is missing or out of range."""


class SequenceLengthError(UserError):
    """A sequence is longer than the model's position table (or too short)."""


class BertConfig:
    """Configuration of a `BertModel`.

    Args:
        vocab_size: int, rows of `bert/embeddings/word_embeddings`.
        hidden_size: int, width H of every layer; a multiple of
            `num_attention_heads`.
        num_hidden_layers: int, number L of transformer layers.
        num_attention_heads: int, number A of attention heads.
        intermediate_size: int, width of the feed-forward layer.
        hidden_act: str, one of "gelu" (tanh form, as the original at HEAD),
            "gelu_exact", "relu", "tanh", "linear".
        hidden_dropout_prob: float in [0, 1), dropout after the embeddings and
            after each dense projection.
        attention_probs_dropout_prob: float in [0, 1), dropout on attention
            probabilities.
        max_position_embeddings: int, rows of `position_embeddings`: the longest
            sequence the model accepts.
        type_vocab_size: int, rows of `token_type_embeddings` (segment ids).
        initializer_range: float > 0, stddev of the truncated-normal initializer.
        **extra: any other key (the Chinese and multilingual configs carry
            `directionality` and `pooler_*`); kept and written back unchanged.

    Raises:
        BertConfigError: a size is not a positive integer, `hidden_size` is not
            divisible by `num_attention_heads`, `hidden_act` is unknown, or a
            probability is outside [0, 1).

    Source: `BertConfig` in the original `modeling.py`.
    """

    def __init__(self, vocab_size, hidden_size=768, num_hidden_layers=12,
                 num_attention_heads=12, intermediate_size=3072,
                 hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=512,
                 type_vocab_size=16, initializer_range=0.02, **extra):
        arguments = locals()
        for key in _FIELDS:
            setattr(self, key, arguments[key])
        self.extra = dict(extra)
        self.validate()

    @property
    def head_size(self):
        """Width of one attention head: `hidden_size // num_attention_heads`."""
        return self.hidden_size // self.num_attention_heads

    def check_sequence_length(self, length, what="--max_seq_length",
                              source=None, minimum=1):
        """The one rule for a sequence length against this config (the scripts'
        --max_seq_length, the serving export, the encoder's inputs).

        Args:
            length: int, tokens per sequence (after WordPiece, with [CLS] and
                [SEP]).
            what, source: where the length and the config come from, for
                the message.
            minimum: int, the shortest length that place can use (3 for
                `[CLS] token [SEP]`).
        Raises:
            SequenceLengthError: `length > max_position_embeddings` (the
                original run_classifier.py's message) or `length < minimum`.
        """
        source = source or "the BERT config"
        if length > self.max_position_embeddings:
            raise SequenceLengthError(
                f"{what}: cannot use sequence length {length} because the "
                "BERT model was only trained up to sequence length "
                f"{self.max_position_embeddings} (max_position_embeddings in "
                f"{source}); use at most {self.max_position_embeddings} tokens")
        if length < minimum:
            raise SequenceLengthError(
                f"{what}={length}: expected at least {minimum}"
                + (" ([CLS], one token, [SEP])" if minimum == 3 else ""))

    def validate(self, source="BertConfig"):
        """Checks every field; `source` (e.g. a file name) prefixes errors."""
        for key in REQUIRED_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise BertConfigError(
                    f"{source}: `{key}` must be a positive integer, got {value!r}.")
        for key in _PROBABILITIES:
            value = getattr(self, key)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise BertConfigError(
                    f"{source}: `{key}` must be a probability in [0, 1), "
                    f"got {value!r}.")
        if (not isinstance(self.initializer_range, (int, float))
                or self.initializer_range <= 0):
            raise BertConfigError(
                f"{source}: `initializer_range` must be a positive number, "
                f"got {self.initializer_range!r}.")
        if self.hidden_size % self.num_attention_heads:
            raise BertConfigError(
                f"{source}: `hidden_size` ({self.hidden_size}) is not a multiple "
                f"of `num_attention_heads` ({self.num_attention_heads}).")
        if not isinstance(self.hidden_act, str) or (
                self.hidden_act.lower() not in ACTIVATION_NAMES):
            raise BertConfigError(
                f"{source}: unknown `hidden_act` {self.hidden_act!r}; expected "
                f"one of {sorted(n for n in ACTIVATION_NAMES if n)}.")

    @classmethod
    def from_dict(cls, json_object, source="BertConfig"):
        """Builds a config from a dict: known keys over the defaults, others kept.

        Raises:
            BertConfigError: a key of `REQUIRED_KEYS` is missing (the message
                names `source` and every missing key), or a value is invalid.
        """
        if not isinstance(json_object, dict):
            raise BertConfigError(
                f"{source}: expected a JSON object, got {type(json_object).__name__}.")
        missing = [key for key in REQUIRED_KEYS if key not in json_object]
        if missing:
            raise BertConfigError(
                f"{source}: required key(s) "
                f"{', '.join(f'`{key}`' for key in missing)} missing; a BERT "
                f"config must give {', '.join(REQUIRED_KEYS)}.")
        try:
            return cls(**json_object)
        except BertConfigError as error:
            message = str(error)
            if message.startswith("BertConfig:"):
                message = source + message[len("BertConfig"):]
            raise BertConfigError(message) from None

    @classmethod
    def from_json_file(cls, json_file):
        """Reads a `bert_config.json`.

        Raises:
            FileNotFoundError: `json_file` does not exist.
            BertConfigError: the file is not valid JSON, or a value is invalid;
                the message names the file.
        """
        json_file = os.fspath(json_file)
        if not os.path.isfile(json_file):
            raise MissingFileError(f"BERT config file not found: {json_file}")
        with open(json_file, encoding="utf-8") as reader:
            text = reader.read()
        try:
            json_object = json.loads(text)
        except json.JSONDecodeError as error:
            raise BertConfigError(
                f"{json_file}: not valid JSON ({error.msg} at line {error.lineno}, "
                f"column {error.colno}).") from None
        return cls.from_dict(json_object, source=json_file)

    def to_dict(self):
        """The config as a plain dict, extra keys included."""
        output = {key: getattr(self, key) for key in _FIELDS}
        output.update(copy.deepcopy(self.extra))
        return output

    def to_json_string(self):
        """JSON as the original writes it: `indent=2, sort_keys=True` plus "\\n"."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file):
        """Writes the config atomically (temp file, then rename)."""
        write_text_atomically(os.fspath(json_file), self.to_json_string())

    def __eq__(self, other):
        return isinstance(other, BertConfig) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return f"BertConfig({self.to_dict()!r})"
