"""Multiple-choice features: each example -> N packed rows of the same length.

Choice k is `[CLS] context [SEP] ending_k [SEP]`, packed by run_classifier.py
convert_single_example's rules (bert_tf1.data.tokenization.packing.pack_tokens).
Source: BERT paper §4.4 and its author's SWAG recipe.
"""
import dataclasses
from typing import List

from bert_tf1.data.io.dynamic_padding import PaddingInputExample
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.tokenization.packing import pack_tokens

#: The model inputs, each [num_choices, max_seq_length] per example.
FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids")


@dataclasses.dataclass
class MultipleChoiceFeatures:
    """The model inputs of one example.

    Attributes:
      input_ids, input_mask, segment_ids: lists of num_choices lists of
        max_seq_length ints (row k is choice k).
      label_ids: int, the right choice; 0 for an unlabelled or padding
        example.
      is_real_example: bool, False for a `PaddingInputExample`.
      tokens: list of num_choices lists of str, unpadded.
    """
    input_ids: List[List[int]]
    input_mask: List[List[int]]
    segment_ids: List[List[int]]
    label_ids: int
    is_real_example: bool = True
    tokens: List[List[str]] = dataclasses.field(default_factory=list)


def _zeros(num_choices, max_seq_length):
    return [[0] * max_seq_length for _ in range(num_choices)]


def convert_example_to_features(example, max_seq_length, tokenizer,
                                num_choices=None):
    """Packs one example's choices.

    Args:
      example: MultipleChoiceExample, or PaddingInputExample (all zeros,
        is_real_example False; needs `num_choices`).
      max_seq_length: int >= 3, the length of every row.
      tokenizer: a FullTokenizer.
      num_choices: int or None, the number of endings required.

    Returns:
      MultipleChoiceFeatures with [num_choices][max_seq_length] int lists.

    Raises:
      ValueError: max_seq_length < 3, a PaddingInputExample without
        num_choices, another number of endings, or a label out of range.
    """
    if max_seq_length < 3:
        raise ValueError("max_seq_length=%d leaves no room for [CLS] A [SEP] "
                         "B [SEP] (need >= 3)" % max_seq_length)
    if isinstance(example, PaddingInputExample):
        if num_choices is None:
            raise ValueError("a PaddingInputExample needs num_choices")
        return MultipleChoiceFeatures(
            input_ids=_zeros(num_choices, max_seq_length),
            input_mask=_zeros(num_choices, max_seq_length),
            segment_ids=_zeros(num_choices, max_seq_length),
            label_ids=0, is_real_example=False,
            tokens=[[] for _ in range(num_choices)])
    if not isinstance(example, MultipleChoiceExample):
        raise TypeError("expected a MultipleChoiceExample or "
                        "PaddingInputExample, got %s" % type(example).__name__)
    count = len(example.endings)
    if num_choices is not None and count != num_choices:
        raise ValueError("example %s has %d endings, expected num_choices=%d"
                         % (example.example_id, count, num_choices))
    if example.label is not None and not 0 <= example.label < count:
        raise ValueError("example %s: label %r is outside 0..%d" % (
            example.example_id, example.label, count - 1))
    context_tokens = tokenizer.tokenize(example.context)
    rows = [pack_tokens(context_tokens, tokenizer.tokenize(ending) or None,
                        max_seq_length, tokenizer)
            for ending in example.endings]
    return MultipleChoiceFeatures(
        input_ids=[row.input_ids for row in rows],
        input_mask=[row.input_mask for row in rows],
        segment_ids=[row.segment_ids for row in rows],
        label_ids=0 if example.label is None else int(example.label),
        is_real_example=True,
        tokens=[row.tokens for row in rows])

