"""WordPiece tokenization: the original Python tokenizer, its in-graph twin,
and packing into `[CLS] A [SEP] B [SEP]`.

`from data import tokenization; tokenization.FullTokenizer(...)` keeps working
as in google-research/bert (`tokenization.py`); the modules are:
- `full_tokenizer`: `FullTokenizer`, `BasicTokenizer`, `WordpieceTokenizer`, vocab I/O;
- `in_graph`: `InGraphFullTokenizer` (TF Text, same ids, inside tf.data/SavedModel);
- `unicode_tables`: character classes taken from Python for the in-graph tokenizer;
- `packing`: `pack_tokens`/`pack_ids` and `InGraphPacker`;
- `preprocessor`: `BertPreprocessor`, the Keras layer from raw text to
  the model inputs (the in-graph tokenizer and packer).
"""
from data.tokenization.full_tokenizer import (  # noqa: F401
    BasicTokenizer, FullTokenizer, VocabLookupError, WordpieceTokenizer,
    convert_by_vocab, convert_ids_to_tokens, convert_to_unicode,
    convert_tokens_to_ids, load_vocab, printable_text, tokenizer_for_model,
    validate_case_matches_checkpoint, validate_vocab_size, whitespace_tokenize)


def __getattr__(name):
    # BertPreprocessor needs Keras, TensorFlow and TF Text; imported on first
    # use so that `from data import tokenization` stays light for the
    # Python tokenizer.
    if name == "BertPreprocessor":
        from data.tokenization.preprocessor import BertPreprocessor
        return BertPreprocessor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
