"""Text in, text out from Python: SQuAD answers and NER tags of an
in-memory model by the scripts' own code (`bert_tf1.data.squad.features` and
`.postprocess`: windows and n-best rules; `bert_tf1.data.tagging.features` and
`.decoding`: windows, first word piece of the max-context window), with
vocab, casing and max_seq_length from the model's `BertPreprocessor`.

    answers = pipelines.answer(squad_model, [(question, context)])
    tagged = pipelines.tag(tagger, ["Jim lives in Paris"], label_list)
"""
import numpy as np

from bert_tf1.data.squad.examples import SquadExample, split_context
from bert_tf1.data.squad.features import convert_examples_to_features
from bert_tf1.data.squad.postprocess import RawResult, compute_predictions
from bert_tf1.data.tagging.decoding import predicted_tags
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.schemes import entity_spans
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.serving.export import preprocessor_of

__all__ = ["answer", "tag"]


def _tokenizer(model, preprocessor):
    preprocessor = preprocessor_of(model, preprocessor)
    return (FullTokenizer(preprocessor.tokenizer.vocab_file,
                          preprocessor.do_lower_case),
            preprocessor.sequence_length)


def _predict(model, windows, batch_size):
    return model.predict({key: np.array([getattr(w, key) for w in windows],
                                        np.int32)
                          for key in ("input_ids", "input_mask",
                                      "segment_ids")},
                         batch_size=batch_size, verbose=0)


def answer(model, pairs, preprocessor=None, doc_stride=128,
           max_query_length=64, n_best_size=20, max_answer_length=30,
           version_2_with_negative=False, null_score_diff_threshold=0.0,
           batch_size=32):
    """run_squad.py's answers to (question, context) pairs.

    Args:
        model: a `BertSquad` (its `preprocessor`, or `preprocessor=`).
        pairs: list of (question, context) strings.
        doc_stride, max_query_length, n_best_size, max_answer_length,
            version_2_with_negative, null_score_diff_threshold: as
            run_squad.py's flags.
        batch_size: windows per prediction batch.

    Returns:
        list of dicts, one per pair: "answer" (str, predictions.json's: ""
        for a null answer in v2, "empty" when no span fits), "n_best"
        (nbest_predictions.json's list of text, probability, start_logit,
        end_logit) and, for v2, "null_odds" (null_odds.json's score).

    Raises:
        UserError: no BertPreprocessor, or max_seq_length leaves no room
            for the context.
    """
    tokenizer, max_seq_length = _tokenizer(model, preprocessor)
    words = {context: split_context(context)[0] for _, context in pairs}
    examples = [SquadExample(qas_id=str(index), question_text=question,
                             doc_tokens=words[context])
                for index, (question, context) in enumerate(pairs)]
    windows = []
    convert_examples_to_features(examples, tokenizer, max_seq_length,
                                 doc_stride, max_query_length, False,
                                 windows.append)
    logits = _predict(model, windows, batch_size) if windows else {}
    results = [RawResult(window.unique_id, logits["start_logits"][row],
                         logits["end_logits"][row])
               for row, window in enumerate(windows)]
    texts, n_best, null_odds = compute_predictions(
        examples, windows, results, n_best_size, max_answer_length,
        tokenizer.do_lower_case, version_2_with_negative,
        null_score_diff_threshold)
    return [dict({"answer": texts[key], "n_best": n_best[key]},
                 **({"null_odds": null_odds[key]} if key in null_odds
                    else {}))
            for key in (example.qas_id for example in examples)]


def tag(model, sentences, label_list, preprocessor=None, doc_stride=64,
        tag_scheme="iob2", batch_size=32):
    """run_ner.py's tags of sentences, one per word, and their entities.

    Each sentence is a document of its own (as a run_ner.py file without
    document markers); a long one is read in windows of `doc_stride`.

    Args:
        model: a `BertTokenClassifier` (its `preprocessor`, or
            `preprocessor=`).
        sentences: list of str (split on whitespace) or of lists of words.
        label_list: the tags in id order (run_ner.py's label_list.txt).
        doc_stride: as run_ner.py's flag, in word pieces.
        tag_scheme: the scheme of the tags returned (`--tag_scheme`).

    Returns:
        list of dicts, one per sentence: "words" (list of str), "tags"
        (list of str, one per word, predictions.txt's), "entities" (list of
        dicts "type", "start", "end" (word indexes, end exclusive), "text"
        (the words joined by spaces)), by conlleval's chunk rules.

    Raises:
        UserError: no BertPreprocessor, or a bad doc_stride.
        ValueError: label_list does not fit the model's outputs.
    """
    tokenizer, max_seq_length = _tokenizer(model, preprocessor)
    if len(label_list) != model.num_labels:
        raise ValueError(f"{len(label_list)} labels for a model with "
                         f"{model.num_labels} outputs")
    word_lists = [s.split() if isinstance(s, str) else list(s)
                  for s in sentences]
    documents = [Document((Sentence(tuple(Word(w, None, 0) for w in words)),),
                          f"sentences[{index}]")
                 for index, words in enumerate(word_lists) if words]
    windows = convert_documents_to_features(documents, tokenizer, label_list,
                                            max_seq_length, doc_stride)
    logits = (_predict(model, windows, batch_size) if windows
              else np.zeros((0, 0)))
    tags = iter(predicted_tags(windows, logits, documents, label_list,
                               tag_scheme))
    results = []
    for words in word_lists:
        tags_of = next(tags)[0] if words else []
        results.append({"words": words, "tags": tags_of, "entities": [
            {"type": entity.type, "start": entity.start, "end": entity.end,
             "text": " ".join(words[entity.start:entity.end])}
            for entity in entity_spans(tags_of)]})
    return results
