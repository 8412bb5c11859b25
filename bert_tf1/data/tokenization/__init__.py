"""WordPiece tokenization: the original's `FullTokenizer` (`from bert_tf1.data import
tokenization` works as google-research/bert's `tokenization.py`), its in-graph
twin, packing into `[CLS] A [SEP] B [SEP]` and `BertPreprocessor`.
"""
from bert_tf1.data.tokenization.full_tokenizer import (  # noqa: F401
    BasicTokenizer, FullTokenizer, VocabLookupError, WordpieceTokenizer,
    convert_by_vocab, convert_ids_to_tokens, convert_to_unicode,
    convert_tokens_to_ids, load_vocab, printable_text, tokenizer_for_model,
    validate_case_matches_checkpoint, validate_vocab_size, whitespace_tokenize)
from typing import TYPE_CHECKING

from bert_tf1.lazy_exports import lazy_exports

# BertPreprocessor is imported on first use: it needs Keras, TensorFlow and
# TF Text.
__getattr__, __dir__ = lazy_exports(__name__, {
    "BertPreprocessor": "bert_tf1.data.tokenization.preprocessor"})

if TYPE_CHECKING:  # for editors and type checkers; Python loads it late
    from bert_tf1.data.tokenization.preprocessor import BertPreprocessor
