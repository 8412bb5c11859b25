"""The "most frequent training tag per word" baseline, to report beside BERT.

Each word (exact token text, case kept) gets the tag it carried most often
in the training data; a word never seen in training gets the most frequent
tag overall (`O` in every NER data set). Ties go to the tag seen first in
the training file. Tags are predicted token by token, so a sequence may
hold an `I-X` after `O`; the conlleval rules (bert_tf1.data.tagging.metric) read it
as the start of an entity, as they do for any tagger.
"""
import collections

__all__ = ["MostFrequentTagBaseline"]


class MostFrequentTagBaseline:
    """Most frequent training tag per word.

    Usage:
      baseline = MostFrequentTagBaseline().fit(train_documents)
      tags = baseline.predict(eval_documents)   # [doc][sentence][word]

    Attributes (after fit):
      word_tags: dict word text -> its most frequent tag.
      default_tag: str, the most frequent tag overall.
    """

    def __init__(self):
        self.word_tags = None
        self.default_tag = None

    def fit(self, documents):
        """Counts the tags of `documents` (list of Document with tags).

        Returns:
          self.

        Raises:
          ValueError: no tagged word in `documents`.
        """
        per_word = collections.defaultdict(collections.Counter)
        overall = collections.Counter()
        first_seen = {}
        for document in documents:
            for word in document.words:
                if word.tag is None:
                    continue
                per_word[word.text][word.tag] += 1
                overall[word.tag] += 1
                first_seen.setdefault(word.tag, len(first_seen))
        if not overall:
            raise ValueError("the baseline needs tagged training words")

        def best(counter):
            return min(counter, key=lambda tag: (-counter[tag],
                                                 first_seen[tag]))

        self.word_tags = {text: best(tags) for text, tags in per_word.items()}
        self.default_tag = best(overall)
        return self

    def predict_sentence(self, tokens):
        """list of str tags for a sequence of token texts."""
        if self.word_tags is None:
            raise RuntimeError("call fit() before predict")
        return [self.word_tags.get(token, self.default_tag)
                for token in tokens]

    def predict(self, documents):
        """Tags for `documents`, nested [document][sentence][word]."""
        return [[self.predict_sentence(sentence.tokens)
                 for sentence in document.sentences]
                for document in documents]
