"""Per-position predictions of all windows -> one tag per input word, read
at each word's scored position (TaggingFeatures.scored), in input order.
"""
import numpy as np

from bert_tf1.data.tagging.schemes import TRAINING_SCHEME, convert_tags


def predicted_label_ids(features, predictions, documents):
    """Label ids per word, nested as the documents.

    Args:
      features: list of TaggingFeatures of `documents`, in the order made.
      predictions: int [num_windows, max_seq_length] label ids, or float
        [num_windows, max_seq_length, num_labels] logits; row k is
        features[k].
      documents: the list of Document the features were made from.

    Returns:
      nested lists [document][sentence][word] of int.

    Raises:
      ValueError: predictions of another shape.
      RuntimeError: a word scored in no window or in two (a bug).
    """
    features = list(features)
    max_seq_length = len(features[0].input_ids) if features else 0
    ids = np.asarray(predictions)
    if ids.ndim == 3:  # Logits [windows, positions, labels].
        ids = ids.argmax(axis=-1)
    if ids.shape != (len(features), max_seq_length):
        raise ValueError(
            "predictions have shape %s; expected [%d windows, %d positions] "
            "(label ids) or [%d, %d, num_labels] (logits), one row per "
            "feature in order" % (ids.shape, len(features), max_seq_length,
                                  len(features), max_seq_length))
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


def predicted_tags(features, predictions, documents, label_list,
                   scheme=None):
    """Tags per word, nested as the documents (see predicted_label_ids);
    with `scheme`, each sentence's tags are converted from the labels'
    training scheme (IOB2) to it, as run_ner.py writes them.

    Returns:
      nested lists [document][sentence][word] of str (label_list[id]).

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
            sentence = [label_list[i] for i in sentence]
            tags[-1].append(convert_tags(sentence, TRAINING_SCHEME, scheme)
                            if scheme else sentence)
    return tags
