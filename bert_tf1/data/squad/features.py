"""SQuAD features: WordPiece windows over the context, TFRecords, tf.data.

Source: run_squad.py `InputFeatures`, `convert_examples_to_features`,
`_improve_answer_span`, `_check_is_max_context`, `FeatureWriter`,
`input_fn_builder` (own code: no library has these windowing and label rules).
"""
import dataclasses
import os

from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.record_specs import squad_record_spec
from bert_tf1.data.io.tfrecord import RecordFileWriter
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.data.tokenization.windows import max_context_windows, sliding_windows

FIRST_UNIQUE_ID = 1000000000

# Number of examples whose features are logged, as in the original.
_NUM_LOGGED_EXAMPLES = 20

@dataclasses.dataclass(eq=False)
class InputFeatures:
    """One window ("feature") of one SquadExample.

    Source: run_squad.py `InputFeatures`.

    Attributes:
      unique_id: int, from 1000000000 upwards, one per feature.
      example_index: int, index of the example in the list converted.
      doc_span_index: int, index of this window among the example's windows.
      tokens: list of str, `[CLS] query [SEP] doc window [SEP]` (unpadded).
      token_to_orig_map: dict position -> index in `example.doc_tokens`.
      token_is_max_context: dict position -> bool.
      input_ids, input_mask, segment_ids: lists of int, length max_seq_length.
      start_position, end_position: int answer positions when training (0,
        [CLS], outside the window or if impossible); else None.
      is_impossible: bool.
    """

    unique_id: int
    example_index: int
    doc_span_index: int
    tokens: list
    token_to_orig_map: dict
    token_is_max_context: dict
    input_ids: list
    input_mask: list
    segment_ids: list
    start_position: int = None
    end_position: int = None
    is_impossible: bool = None


def improve_answer_span(doc_tokens, input_start, input_end, tokenizer,
                        orig_answer_text):
    """Narrows a word-level answer span to the sub-tokens of the answer text.

    Returns (start, end), inclusive token indexes (e.g. "1895" inside
    "(1895-1943).").

    Source: run_squad.py `_improve_answer_span`.
    """
    tok_answer_text = " ".join(tokenizer.tokenize(orig_answer_text))
    for new_start in range(input_start, input_end + 1):
        for new_end in range(input_end, new_start - 1, -1):
            text_span = " ".join(doc_tokens[new_start:(new_end + 1)])
            if text_span == tok_answer_text:
                return new_start, new_end
    return input_start, input_end


def _tokenize_doc(doc_tokens, tokenizer):
    """(tok_to_orig_index, orig_to_tok_index, all_doc_tokens)."""
    tok_to_orig_index = []
    orig_to_tok_index = []
    all_doc_tokens = []
    for i, token in enumerate(doc_tokens):
        orig_to_tok_index.append(len(all_doc_tokens))
        for sub_token in tokenizer.tokenize(token):
            tok_to_orig_index.append(i)
            all_doc_tokens.append(sub_token)
    return tok_to_orig_index, orig_to_tok_index, all_doc_tokens


def _log_feature(feature, is_training):
    logging.info("*** Example ***")
    logging.info("unique_id: %s", feature.unique_id)
    logging.info("example_index: %s", feature.example_index)
    logging.info("doc_span_index: %s", feature.doc_span_index)
    logging.info("tokens: %s", " ".join(feature.tokens))
    logging.info("token_to_orig_map: %s", " ".join(
        "%d:%d" % item for item in feature.token_to_orig_map.items()))
    logging.info("token_is_max_context: %s", " ".join(
        "%d:%s" % item for item in feature.token_is_max_context.items()))
    logging.info("input_ids: %s", " ".join(map(str, feature.input_ids)))
    logging.info("input_mask: %s", " ".join(map(str, feature.input_mask)))
    logging.info("segment_ids: %s", " ".join(map(str, feature.segment_ids)))
    if is_training and feature.is_impossible:
        logging.info("impossible example")
    if is_training and not feature.is_impossible:
        answer_text = " ".join(
            feature.tokens[feature.start_position:(feature.end_position + 1)])
        logging.info("start_position: %d", feature.start_position)
        logging.info("end_position: %d", feature.end_position)
        logging.info("answer: %s", answer_text)


def check_window_flags(max_seq_length, max_query_length, doc_stride):
    """Raises UserError unless a window holds the query with room to spare
    (run_squad.py's `validate_flags_or_throw` message) and doc_stride >= 1."""
    if max_seq_length <= max_query_length + 3:
        raise UserError(
            "The max_seq_length (%d) must be greater than "
            "max_query_length (%d) + 3" % (max_seq_length, max_query_length))
    if doc_stride < 1:
        raise UserError("doc_stride must be at least 1, got %d" % doc_stride)


def convert_examples_to_features(examples, tokenizer, max_seq_length,
                                 doc_stride, max_query_length, is_training,
                                 output_fn):
    """Turns SquadExamples into windowed InputFeatures, passed to output_fn.

    Args:
      examples: list of SquadExample.
      tokenizer: a FullTokenizer (tokenize, convert_tokens_to_ids).
      max_seq_length, doc_stride, max_query_length: ints.
      is_training: bool, whether to compute start/end positions.
      output_fn: callable taking one InputFeatures, called in order.

    Returns:
      int, the number of features (none for a context without tokens).

    Raises:
      UserError: doc_stride < 1, or max_seq_length leaves no room for
        context after a question (the original loops forever).

    Source: run_squad.py `convert_examples_to_features` (a training answer
    without WordPiece tokens is skipped with a warning).
    """
    if doc_stride < 1:
        raise UserError("doc_stride must be at least 1, got %d" % doc_stride)

    unique_id = FIRST_UNIQUE_ID
    # Questions of one paragraph share one doc_tokens list: tokenize it once.
    cached_doc_tokens = None
    cached_tokenization = None
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(
            example.question_text)[:max_query_length]

        if example.doc_tokens is not cached_doc_tokens:
            cached_doc_tokens = example.doc_tokens
            cached_tokenization = _tokenize_doc(example.doc_tokens, tokenizer)
        tok_to_orig_index, orig_to_tok_index, all_doc_tokens = (
            cached_tokenization)

        if is_training and not example.is_impossible:
            tok_start_position = orig_to_tok_index[example.start_position]
            if example.end_position < len(example.doc_tokens) - 1:
                tok_end_position = orig_to_tok_index[
                    example.end_position + 1] - 1
            else:
                tok_end_position = len(all_doc_tokens) - 1
            if tok_start_position > tok_end_position:
                logging.warning(
                    "Skipping question %r: its answer %r yields no WordPiece "
                    "tokens.", example.qas_id, example.orig_answer_text)
                continue
            tok_start_position, tok_end_position = improve_answer_span(
                all_doc_tokens, tok_start_position, tok_end_position,
                tokenizer, example.orig_answer_text)

        # The 3 places are [CLS], [SEP] and [SEP].
        max_tokens_for_doc = max_seq_length - len(query_tokens) - 3
        if max_tokens_for_doc < 1:
            raise UserError(
                "Question %r: max_seq_length %d leaves no room for context "
                "after %d query tokens; use max_seq_length > max_query_length "
                "(%d) + 3" % (example.qas_id, max_seq_length,
                              len(query_tokens), max_query_length))
        doc_spans = sliding_windows(len(all_doc_tokens), max_tokens_for_doc,
                                    doc_stride)
        best_window = max_context_windows(doc_spans, len(all_doc_tokens))

        # Window positions start after [CLS] query [SEP].
        offset = len(query_tokens) + 2
        for doc_span_index, doc_span in enumerate(doc_spans):
            window = range(doc_span.start, doc_span.start + doc_span.length)
            token_to_orig_map = {offset + i: tok_to_orig_index[piece]
                                 for i, piece in enumerate(window)}
            token_is_max_context = {
                offset + i: best_window[piece] == doc_span_index
                for i, piece in enumerate(window)}
            # The window fits: pack_tokens truncates nothing.
            packed = pack_tokens(query_tokens,
                                 [all_doc_tokens[piece] for piece in window],
                                 max_seq_length, tokenizer)

            start_position = end_position = None
            if is_training:
                # [CLS] for an impossible question, or an answer outside
                # this window (kept, exactly as the original).
                start_position = end_position = 0
                doc_start = doc_span.start
                doc_end = doc_span.start + doc_span.length - 1
                if (not example.is_impossible
                        and tok_start_position >= doc_start
                        and tok_end_position <= doc_end):
                    start_position = tok_start_position + offset - doc_start
                    end_position = tok_end_position + offset - doc_start

            feature = InputFeatures(
                unique_id=unique_id,
                example_index=example_index,
                doc_span_index=doc_span_index,
                tokens=packed.tokens,
                token_to_orig_map=token_to_orig_map,
                token_is_max_context=token_is_max_context,
                input_ids=packed.input_ids,
                input_mask=packed.input_mask,
                segment_ids=packed.segment_ids,
                start_position=start_position,
                end_position=end_position,
                is_impossible=example.is_impossible)
            if example_index < _NUM_LOGGED_EXAMPLES:
                _log_feature(feature, is_training)
            output_fn(feature)
            unique_id += 1
    return unique_id - FIRST_UNIQUE_ID


class FeatureWriter(object):
    """Writes InputFeatures to a TFRecord file atomically; `num_features`
    counts them.

    Source: run_squad.py `FeatureWriter`.
    """

    def __init__(self, filename, is_training):
        self.filename = os.fspath(filename)
        self.is_training = is_training
        self.num_features = 0
        self._writer = RecordFileWriter(self.filename).__enter__()

    def process_feature(self, feature):
        """Appends one InputFeatures as a tf.train.Example record."""
        self.num_features += 1
        values = {"unique_ids": [feature.unique_id],
                  "input_ids": feature.input_ids,
                  "input_mask": feature.input_mask,
                  "segment_ids": feature.segment_ids}
        if self.is_training:
            values["start_positions"] = [feature.start_position]
            values["end_positions"] = [feature.end_position]
            values["is_impossible"] = [1 if feature.is_impossible else 0]
        spec = squad_record_spec(len(feature.input_ids), self.is_training)
        self._writer.write(spec.serialize(values))

    def close(self, discard=False):
        """Finishes the file (moves it into place), or deletes it."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        if discard:
            writer.__exit__(None, None, None)
        else:
            writer.commit()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close(discard=exc_type is not None)
        return False


def squad_dataset(input_files, seq_length, is_training, batch_size,
                  seed=None):
    """A tf.data pipeline over SQuAD TFRecords written by FeatureWriter
    (`RecordSpec.batched_dataset`: training repeats and shuffles).

    Args:
      input_files: a path or list of paths.
      seq_length: int, the max_seq_length of the records.
      is_training: bool; parse positions, shuffle (buffer 100).
      batch_size: int.
      seed: optional int shuffle seed.

    Returns:
      tf.data.Dataset of int32 dicts: unique_ids [B], input_ids, input_mask,
      segment_ids [B, seq_length]; training adds start_positions,
      end_positions [B].

    Raises:
      RecordFormatError: records of another max_seq_length (names file,
        feature and lengths), or of prediction vs training.

    Source: run_squad.py `input_fn_builder`.
    """
    return squad_record_spec(seq_length, is_training).batched_dataset(
        input_files, is_training, batch_size, unpack=lambda record: record,
        seed=seed)
