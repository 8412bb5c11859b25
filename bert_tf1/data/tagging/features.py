"""Word-piece features for sequence tagging (BERT paper §5.3): each document
one stream of pieces in max-context windows of `[CLS] pieces [SEP]`, a word
scored only at its first piece (the rules: docs/tagging.md).
"""
import collections
import dataclasses

from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.data.tokenization.windows import max_context_windows, sliding_windows

_NUM_LOGGED = 3

WordRef = collections.namedtuple("WordRef", ["document", "sentence", "word"])
WordRef.__doc__ = """Indices of a word's document, sentence and word."""


@dataclasses.dataclass(frozen=True)
class DocumentPieces:
    """The word-piece stream of one document.

    Attributes:
      pieces: list of str, every word's pieces in order.
      piece_words: list of WordRef, the word of each piece.
      first_pieces: list of int, for each word in document order the index
        of its first piece in `pieces`.
    """
    pieces: list
    piece_words: list
    first_pieces: list


def document_pieces(document, document_index, tokenizer):
    """Tokenizes a Document word by word into one piece stream.

    Returns DocumentPieces; `document_index` goes into the WordRefs.
    """
    unk = getattr(getattr(tokenizer, "wordpiece_tokenizer", None),
                  "unk_token", "[UNK]")
    pieces, piece_words, first_pieces = [], [], []
    for sentence_index, sentence in enumerate(document.sentences):
        for word_index, word in enumerate(sentence.words):
            word_pieces = tokenizer.tokenize(word.text) or [unk]
            ref = WordRef(document_index, sentence_index, word_index)
            first_pieces.append(len(pieces))
            pieces.extend(word_pieces)
            piece_words.extend([ref] * len(word_pieces))
    return DocumentPieces(pieces, piece_words, first_pieces)


@dataclasses.dataclass(eq=False)
class TaggingFeatures:
    """One window of one document: the model inputs and the host-side map.

    Attributes:
      document_index: int, the document in the list converted.
      window_index: int, this window among the document's windows.
      start: int, the document piece at window position 1.
      tokens: list of str, `[CLS] pieces [SEP]` (unpadded).
      input_ids, input_mask, segment_ids, label_ids: lists of
        max_seq_length int.
      label_weights: list of max_seq_length float (1.0 where scored).
      scored: tuple of (position, WordRef) with weight 1.0, in order.
    """
    document_index: int
    window_index: int
    start: int
    tokens: list
    input_ids: list
    input_mask: list
    segment_ids: list
    label_ids: list
    label_weights: list
    scored: tuple

    def values(self):
        """dict of the five record features (bert_tf1.data.io.record_specs
        .tagging_record_spec)."""
        return {"input_ids": self.input_ids, "input_mask": self.input_mask,
                "segment_ids": self.segment_ids, "label_ids": self.label_ids,
                "label_weights": self.label_weights}


def check_window_flags(max_seq_length, doc_stride):
    """Raises UserError unless max_seq_length >= 3 and doc_stride >= 1."""
    if max_seq_length < 3:
        raise UserError("max_seq_length=%d leaves no room for a word piece "
                        "between [CLS] and [SEP]; use at least 3"
                        % max_seq_length)
    if doc_stride < 1:
        raise UserError("doc_stride=%d: the windows would not advance; use "
                        "at least 1" % doc_stride)


def _label_id(label_map, document, ref, label_list):
    word = document.sentences[ref.sentence].words[ref.word]
    if word.tag is None:
        return 0
    if word.tag not in label_map:
        raise UserError("%s, line %d: tag %r is not in the label list (%s)"
                        % (document.path, word.line, word.tag,
                           ", ".join(label_list)))
    return label_map[word.tag]


def _log_window(feature):
    logging.info("*** Example ***")
    logging.info("document %d, window %d, start %d", feature.document_index,
                 feature.window_index, feature.start)
    logging.info("tokens: %s", " ".join(feature.tokens))
    logging.info("input_ids: %s", " ".join(map(str, feature.input_ids)))
    logging.info("label_ids: %s", " ".join(map(str, feature.label_ids)))
    logging.info("label_weights: %s", " ".join(
        "%g" % weight for weight in feature.label_weights))


def convert_documents_to_features(documents, tokenizer, label_list,
                                  max_seq_length, doc_stride):
    """The TaggingFeatures of `documents`, document by document, window by
    window (the order records are written and decoded in).

    Args:
      documents: list of Document (tags in `label_list`'s scheme, or None).
      tokenizer: a FullTokenizer.
      label_list: list of str; a label's id is its index.
      max_seq_length: int >= 3.
      doc_stride: int >= 1, in pieces.

    Returns:
      list of TaggingFeatures (each word scored exactly once).

    Raises:
      UserError: a tag is not in label_list (names file and line), or
        max_seq_length / doc_stride too small.
      ValueError: label_list has duplicates.
    """
    check_window_flags(max_seq_length, doc_stride)
    label_map = {label: index for index, label in enumerate(label_list)}
    if len(label_map) != len(label_list):
        raise ValueError("label_list has duplicates: %r" % (label_list,))
    features = []
    for document_index, document in enumerate(documents):
        stream = document_pieces(document, document_index, tokenizer)
        num_pieces = len(stream.pieces)
        spans = sliding_windows(num_pieces, max_seq_length - 2, doc_stride)
        best = max_context_windows(spans, num_pieces)
        first_pieces = set(stream.first_pieces)
        for window_index, span in enumerate(spans):
            window = range(span.start, span.start + span.length)
            # At most max_seq_length - 2 pieces: nothing is truncated.
            packed = pack_tokens([stream.pieces[i] for i in window], None,
                                 max_seq_length, tokenizer)
            label_ids = [0] * max_seq_length
            label_weights = [0.0] * max_seq_length
            scored = []
            for position, piece in enumerate(window, start=1):
                ref = stream.piece_words[piece]
                if piece in first_pieces and best[piece] == window_index:
                    label_ids[position] = _label_id(label_map, document, ref,
                                                    label_list)
                    label_weights[position] = 1.0
                    scored.append((position, ref))
            feature = TaggingFeatures(
                document_index=document_index, window_index=window_index,
                start=span.start, tokens=packed.tokens,
                input_ids=packed.input_ids, input_mask=packed.input_mask,
                segment_ids=packed.segment_ids,
                label_ids=label_ids, label_weights=label_weights,
                scored=tuple(scored))
            if len(features) < _NUM_LOGGED:
                _log_window(feature)
            features.append(feature)
    return features


def padding_window(seq_length):
    """A window that scores nothing (TPU batches must be full)."""
    zeros = [0] * seq_length
    return TaggingFeatures(
        document_index=-1, window_index=-1, start=0, tokens=[],
        input_ids=zeros, input_mask=zeros, segment_ids=zeros,
        label_ids=zeros, label_weights=[0.0] * seq_length, scored=())
