"""In-graph BERT tokenizer giving the same ids as `FullTokenizer`.

Source: tokenization.py FullTokenizer, step by step in its order
(`_basic_tokenize`, `_wordpiece_ids`), with RE2 classes written out from
Python's `unicodedata` (unicode_tables.py) where TF Text's BERT normalizer
differs; what is bridged, and how: docs/python_api.md ("Tokenization").
"""
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf1.data.tokenization import full_tokenizer as tokenization
from bert_tf1.data.tokenization import unicode_tables as unicode_tables
from bert_tf1.data.io.errors import UserError

_SUFFIX_INDICATOR = "##"


def _nfd_with_tf_text(text):
    """NFD of a Python str by tensorflow_text (eagerly)."""
    with tf.init_scope():
        out = tf_text.normalize_utf8(tf.constant(text), "NFD")
        return out.numpy().decode("utf-8")


def _lower_with_tf(text):
    """Lower-casing of a Python str by tf.strings.lower (ICU), eagerly."""
    with tf.init_scope():
        out = tf.strings.lower(tf.constant(text), encoding="utf-8")
        return out.numpy().decode("utf-8")


class InGraphFullTokenizer(tf.Module):
    """String tensor [batch] -> ragged int32 WordPiece ids [batch, (tokens)].

    Args:
      vocab_file: path of the vocab file (one token a line).
      do_lower_case: as FullTokenizer (lower-case, NFD, strip Mn).
      unk_token: the token for words that cannot be pieced; must be in the
        vocab.
      max_input_chars_per_word: words with more code points become unk_token.
      name: tf.Module name.

    Call: `tokenizer(texts)`, texts tf.string [batch] -> tf.RaggedTensor
    int32 [batch, (ids)].

    Raises:
      FileNotFoundError: vocab file missing.
      ValueError: unk_token not in the vocab.
      NotImplementedError: a vocab token contains a character whose NFD
        differs between TF Text and Python (such characters are replaced
        by a private-use one before NFD).

    Source: tokenization.py FullTokenizer.tokenize + convert_tokens_to_ids.
    """

    def __init__(self, vocab_file, do_lower_case=True, unk_token="[UNK]",
                 max_input_chars_per_word=200, name=None):
        super().__init__(name=name)
        self.vocab_file = str(vocab_file)
        self.do_lower_case = bool(do_lower_case)
        self.max_input_chars_per_word = int(max_input_chars_per_word)
        vocab = tokenization.load_vocab(self.vocab_file)
        if unk_token not in vocab:
            raise UserError("unk_token %r is not in the vocab file %s"
                             % (unk_token, self.vocab_file))
        self.unk_id = vocab[unk_token]
        self.vocab_size = max(vocab.values()) + 1
        vocab_chars = set("".join(vocab))
        # A deleted (control) character never reaches a word: vocab fillers
        # and the too-long-word sentinel use one (not NUL: the trie rejects it).
        self._never_in_words = next(
            chr(cp) for cp in sorted(unicode_tables.deleted_code_points())
            if cp != 0 and chr(cp) not in vocab_chars)

        tables = unicode_tables
        self._delete_pattern = tables.re2_class(
            tables.deleted_code_points())
        # One pass: spaces around a CJK char (cased: and a punctuation
        # char); any other space char -> " ".
        spaces = tables.re2_class(tables.space_code_points() - {ord(" ")})
        punct = tables.re2_class(tables.punctuation_code_points())
        own = tables.re2_class(tables.cjk_code_points())
        if self.do_lower_case:
            self._mark_pattern = tables.re2_class(
                tables.nonspacing_mark_code_points())
            self._punct_pattern = "(%s)" % punct
        else:
            own = "%s|%s" % (own, punct)
        self._space_pattern = "(%s)|%s" % (own, spaces)

        self.nfd_substituted_code_points = frozenset()
        with tf.init_scope():
            if self.do_lower_case:
                self._build_lower_tables(vocab_chars)
            self._wordpiece = tf_text.FastWordpieceTokenizer(
                vocab=self._wordpiece_vocab(vocab),
                suffix_indicator=_SUFFIX_INDICATOR,
                # Our code-point limit runs first; this one never cuts in.
                max_bytes_per_word=4 * max(1, self.max_input_chars_per_word),
                token_out_type=tf.int32,
                unknown_token=unk_token,
                no_pretokenization=True)

    def _wordpiece_vocab(self, vocab):
        """Tokens by id; gaps, "" and a bare "##" get unmatchable fillers."""
        by_id = {index: token for token, index in vocab.items()}
        tokens = []
        for index in range(self.vocab_size):
            token = by_id.get(index)
            if token is None or token in ("", _SUFFIX_INDICATOR):
                token = "%s%d" % (self._never_in_words, index)
            tokens.append(token)
        return tokens

    def _build_lower_tables(self, vocab_chars):
        tables = unicode_tables
        mapping = dict(tables.lower_case_map())
        mismatches = tables.nfd_mismatches(_nfd_with_tf_text)
        if mismatches:
            substitute = self._pick_substitute(vocab_chars, mismatches)
            # The swap keeps the ids only for a character unchanged by NFD,
            # in no class the tokenizer acts on, and in no vocab token.
            special = (tables.punctuation_code_points()
                       | tables.nonspacing_mark_code_points()
                       | tables.space_code_points()
                       | tables.deleted_code_points()
                       | tables.cjk_code_points())
            for cp in mismatches:
                char = chr(cp)
                if (char in vocab_chars or cp in special
                        or unicodedata.normalize("NFD", char) != char):
                    raise NotImplementedError(
                        "TF Text's NFD of U+%04X differs from Python's %s "
                        "and the character matters to %s (it is in a vocab "
                        "token, or Python decomposes or classifies it)"
                        % (cp, tables.python_unicode_version(),
                           self.vocab_file))
            for cp, low in list(mapping.items()):
                if low in mismatches:
                    mapping[cp] = substitute
            for cp in mismatches:
                mapping.setdefault(cp, substitute)
        self.nfd_substituted_code_points = frozenset(mismatches)
        self._lower_table = tf.constant(tables.dense_table(mapping))
        ignorable, cased = tables.case_context_code_points()
        context = {cp: tables.CONTEXT_CASE_IGNORABLE for cp in ignorable}
        context.update({cp: tables.CONTEXT_CASED for cp in cased})
        self._context_table = tf.constant(
            tables.dense_table(context, default_identity=False,
                               dtype="int8"))
        # Rows holding one of these take the exact code-point path.
        exact_only = set(tables.lower_case_mismatches(_lower_with_tf))
        exact_only.add(tables.CAPITAL_SIGMA)
        exact_only.update(mismatches)
        exact_only.update(cp for cp, low in tables.lower_case_map().items()
                          if low in mismatches)
        self._exact_lower_pattern = "(?s).*%s.*" % tables.re2_class(
            exact_only)

    @staticmethod
    def _pick_substitute(vocab_chars, mismatches):
        """A private-use code point in no vocab token and not mismatched."""
        for cp in range(0xE000, 0xF900):
            if chr(cp) not in vocab_chars and cp not in mismatches:
                return cp
        raise NotImplementedError("no free private-use code point")

    def _lower_case(self, texts):
        """str.lower() of each text: ICU where it provably agrees with
        Python, the exact code-point path for the other rows."""
        exact = tf.strings.regex_full_match(texts, self._exact_lower_pattern)
        exact_rows = tf.cast(tf.where(exact)[:, 0], tf.int32)
        fast_rows = tf.cast(tf.where(tf.logical_not(exact))[:, 0], tf.int32)
        fast = tf.strings.lower(tf.gather(texts, fast_rows), encoding="utf-8")
        slow = self._exact_lower_case(tf.gather(texts, exact_rows))
        return tf.dynamic_stitch([exact_rows, fast_rows], [slow, fast])

    def _exact_lower_case(self, texts):
        """str.lower() in code-point space (Python's table + final-sigma
        rule); characters TF Text's NFD gets wrong come out substituted."""
        chars = tf.strings.unicode_decode(texts, "UTF-8")
        flat = chars.flat_values
        size = tf.shape(self._lower_table)[0]
        lowered = tf.where(
            flat < size,
            tf.gather(self._lower_table, tf.minimum(flat, size - 1)), flat)
        lowered = tf.cond(
            tf.reduce_any(tf.equal(flat, unicode_tables.CAPITAL_SIGMA)),
            lambda: self._final_sigma(chars, lowered),
            lambda: lowered)
        return tf.strings.unicode_encode(chars.with_flat_values(lowered),
                                         "UTF-8")

    def _final_sigma(self, chars, lowered):
        """Python's final-sigma rule: capital sigma -> final sigma when the
        nearest non-case-ignorable character before it is cased and the one
        after it is not (" " between words is neither)."""
        flat = chars.flat_values
        size = tf.shape(self._context_table)[0]
        context = tf.where(
            flat < size,
            tf.cast(tf.gather(self._context_table,
                              tf.minimum(flat, size - 1)), tf.int32), 0)
        not_ignorable = tf.not_equal(
            context, unicode_tables.CONTEXT_CASE_IGNORABLE)
        cased = tf.equal(context, unicode_tables.CONTEXT_CASED)
        positions = tf.cast(tf.where(not_ignorable)[:, 0], tf.int32)
        num_positions = tf.size(positions)
        before = tf.cumsum(tf.cast(not_ignorable, tf.int32), exclusive=True)
        row_ids = tf.cast(chars.value_rowids(), tf.int32)
        splits = tf.cast(chars.row_splits, tf.int32)
        row_start = tf.gather(splits, row_ids)
        row_limit = tf.gather(splits, row_ids + 1)

        safe = tf.maximum(num_positions - 1, 0)
        prev_pos = tf.gather(positions, tf.clip_by_value(before - 1, 0, safe))
        has_prev = (before > 0) & (prev_pos >= row_start)
        prev_cased = has_prev & tf.gather(cased, prev_pos)
        # For a sigma (itself not ignorable) the next non-ignorable
        # character is entry `before + 1` of `positions`.
        next_index = before + 1
        next_pos = tf.gather(positions, tf.clip_by_value(next_index, 0, safe))
        has_next = (next_index < num_positions) & (next_pos < row_limit)
        next_cased = has_next & tf.gather(cased, next_pos)
        is_final = (tf.equal(flat, unicode_tables.CAPITAL_SIGMA)
                    & prev_cased & tf.logical_not(next_cased))
        return tf.where(is_final, unicode_tables.FINAL_SIGMA, lowered)

    def _basic_tokenize(self, texts):
        """BasicTokenizer.tokenize in-graph: [batch] -> ragged words."""
        texts = tf.strings.unicode_transcode(
            texts, "UTF-8", "UTF-8", errors="ignore")
        texts = tf.strings.regex_replace(texts, self._delete_pattern, "")
        texts = tf.strings.regex_replace(texts, self._space_pattern,
                                         r" \1 ")
        if self.do_lower_case:
            texts = self._lower_case(texts)
            texts = tf_text.normalize_utf8(texts, "NFD")
            texts = tf.strings.regex_replace(texts, self._mark_pattern, "")
            texts = tf.strings.regex_replace(texts, self._punct_pattern,
                                             r" \1 ")
        # Only " " separates words now (every other space char was mapped).
        return tf.strings.split(texts)

    def _wordpiece_ids(self, words):
        """WordpieceTokenizer + ids: ragged words -> ragged int32 ids."""
        flat_words = words.flat_values
        too_long = tf.strings.length(flat_words, unit="UTF8_CHAR") > (
            self.max_input_chars_per_word)
        flat_words = tf.where(too_long, self._never_in_words, flat_words)
        pieces = self._wordpiece.tokenize(flat_words)
        ids = words.with_flat_values(pieces).merge_dims(1, 2)
        return tf.cast(ids, tf.int32)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)],
                 autograph=False)
    def basic_tokenize(self, texts):
        """BasicTokenizer.tokenize: tf.string [batch] -> ragged words."""
        return self._basic_tokenize(texts)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)],
                 autograph=False)
    def __call__(self, texts):
        """texts: tf.string [batch] -> tf.RaggedTensor int32 [batch, (ids)]."""
        return self._wordpiece_ids(self._basic_tokenize(texts))
