"""Per-position predictions of all windows -> one tag per input word.

Each word is read at exactly one position: the first piece of the word in
its max-context window (TaggingFeatures.scored, where label_weights is 1.0),
so the number of predicted tags always equals the number of input words,
in input order, whatever the document lengths.
"""
import numpy as np

__all__ = ["predicted_label_ids", "predicted_tags"]


def _as_label_ids(predictions, num_windows, max_seq_length):
    predictions = np.asarray(predictions)
    if predictions.ndim == 3:  # Logits [windows, positions, labels].
        predictions = predictions.argmax(axis=-1)
    if predictions.shape != (num_windows, max_seq_length):
        raise ValueError(
            "predictions have shape %s; expected [%d windows, %d positions] "
            "(label ids) or [%d, %d, num_labels] (logits), one row per "
            "feature in order" % (predictions.shape, num_windows,
                                  max_seq_length, num_windows,
                                  max_seq_length))
    return predictions


def predicted_label_ids(features, predictions, documents):
    """Label ids per word, nested as the documents.

    Args:
      features: list of TaggingFeatures of `documents`, in the order made
        (data.tagging.features.convert_documents_to_features).
      predictions: array-like int [num_windows, max_seq_length] of label
        ids, or float [num_windows, max_seq_length, num_labels] of logits
        (argmax taken); row k belongs to features[k].
      documents: the list of Document the features were made from.

    Returns:
      list (documents) of lists (sentences) of lists of int, one id per
      word.

    Raises:
      ValueError: predictions of another shape.
      RuntimeError: a word was scored in no window or in two (features not
        made from these documents; a bug, not a user error).
    """
    features = list(features)
    max_seq_length = len(features[0].input_ids) if features else 0
    ids = _as_label_ids(predictions, len(features), max_seq_length)
    result = [[[None] * len(sentence) for sentence in document.sentences]
              for document in documents]
    for row, feature in enumerate(features):
        for position, ref in feature.scored:
            words = result[ref.document][ref.sentence]
            if words[ref.word] is not None:
                raise RuntimeError("word %r is scored in two windows" % (ref,))
            words[ref.word] = int(ids[row, position])
    for document_index, document in enumerate(result):
        for sentence_index, sentence in enumerate(document):
            if None in sentence:
                raise RuntimeError(
                    "document %d sentence %d word %d got no prediction: the "
                    "features were not made from these documents" % (
                        document_index, sentence_index, sentence.index(None)))
    return result


def predicted_tags(features, predictions, documents, label_list):
    """Tags per word, nested as the documents (see predicted_label_ids).

    Args:
      label_list: list of str; id k is label_list[k].

    Returns:
      list (documents) of lists (sentences) of lists of str.

    Raises:
      ValueError: an id outside the label list, or predictions of another
        shape. RuntimeError: as predicted_label_ids.
    """
    nested = predicted_label_ids(features, predictions, documents)
    tags = []
    for document in nested:
        tags.append([])
        for sentence in document:
            for label_id in sentence:
                if not 0 <= label_id < len(label_list):
                    raise ValueError("predicted label id %d is outside the "
                                     "label list of %d labels"
                                     % (label_id, len(label_list)))
            tags[-1].append([label_list[i] for i in sentence])
    return tags
