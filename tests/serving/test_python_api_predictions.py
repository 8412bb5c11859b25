"""bert_tf1.serving.predictions from Python (answer, tag): text in, text out, equal to the scripts.

SQuAD: the fixture's predictions.json, nbest_predictions.json and
null_odds.json (the original run_squad.py's outputs, which run_squad.py here
reproduces: tests/tasks/test_squad.py). NER: run_ner.py --do_predict's
predictions.txt for the same model and sentences.
"""
import json

import keras
import pytest

from bert_tf1.data.tagging.schemes import entity_spans
from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.modeling import BertSquad, BertTokenClassifier, checkpoints
from bert_tf1.serving import predictions as pipelines
from tests.helpers.task_runner import fixture_flags, run_task

LABELS = ["O", "B-location", "I-location", "B-person", "I-person"]


@pytest.mark.parametrize("name,max_seq_length,doc_stride,v2", [
    ("squad_v1_windows", 128, 48, False),  # several windows per context
    ("squad_v2_sample", 384, 128, True),
])
def test_answers_equal_run_squad(fixtures_dir, name, max_seq_length,
                                 doc_stride, v2):
    fixture = fixtures_dir / "tf1_vocab_squad"
    folder = fixture / name
    model = BertSquad.from_checkpoint(
        fixture, preprocessor=BertPreprocessor.from_checkpoint(
            fixture, sequence_length=max_seq_length))
    data = json.loads((folder / "input.json").read_text())["data"]
    questions = [(qa["id"], qa["question"], paragraph["context"])
                 for article in data for paragraph in article["paragraphs"]
                 for qa in paragraph["qas"]]
    answers = pipelines.answer(model, [(q, c) for _, q, c in questions],
                               doc_stride=doc_stride,
                               version_2_with_negative=v2)
    predictions = json.loads((folder / "predictions.json").read_text())
    nbest = json.loads((folder / "nbest_predictions.json").read_text())
    null_odds = (json.loads((folder / "null_odds.json").read_text())
                 if v2 else {})
    assert len(answers) == len(predictions)
    assert any(answer["answer"] == "" for answer in answers) == v2
    for (qid, _, _), answer in zip(questions, answers):
        assert answer["answer"] == predictions[qid], qid
        assert ([e["text"] for e in answer["n_best"]]
                == [e["text"] for e in nbest[qid]]), qid
        for mine, ref in zip(answer["n_best"], nbest[qid]):
            for key in ("probability", "start_logit", "end_logit"):
                assert abs(mine[key] - ref[key]) <= 1e-5, (qid, key)
        assert ("null_odds" in answer) == v2
        if v2:
            assert abs(answer["null_odds"] - null_odds[qid]) <= 1e-5, qid


@pytest.mark.slow  # run_ner.py's prediction: ~15 s
def test_tags_equal_run_ner(fixtures_dir, data_dir, tmp_path):
    """A tagger (the fixture encoder, a random head saved as a TF1
    checkpoint) through run_ner.py --do_predict and through `tag`: the same
    tag for every word of WNUT-17 dev sentences, long ones in many windows
    of 32 pieces."""
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    model = BertTokenClassifier.from_checkpoint(
        fixture, num_labels=len(LABELS),
        preprocessor=BertPreprocessor(fixture / "vocab.txt", True, 32))
    prefix = checkpoints.save_tf1_checkpoint(
        model, str(tmp_path / "tagger" / "model.ckpt"))
    blocks = (data_dir / "ner/wnut17/emerging.dev.conll").read_text(
        encoding="utf-8").split("\n\n")[:30]
    sentences = [[line.split("\t")[0] for line in block.strip().split("\n")]
                 for block in blocks]
    predict_file = tmp_path / "predict.conll"
    predict_file.write_text("".join(
        "".join(f"{word}\tO\n" for word in words) + "\n"
        for words in sentences), encoding="utf-8")
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    (output_dir / "label_list.txt").write_text("\n".join(LABELS) + "\n")
    run_task("run_ner.py", fixture_flags(
        fixture, output_dir, init_checkpoint=prefix, do_predict=True,
        predict_file=predict_file, do_lower_case=True, max_seq_length=32,
        doc_stride=16, predict_batch_size=7))
    written = [[line.split("\t") for line in block.split("\n")] for block in
               (output_dir / "predictions.txt").read_text(
                   encoding="utf-8")[:-2].split("\n\n")]
    assert max(len(words) for words in sentences) > 30  # several windows

    tagged = pipelines.tag(model, sentences, LABELS, doc_stride=16)
    assert [t["words"] for t in tagged] == sentences
    assert [t["tags"] for t in tagged] == [[tag for _, tag in s]
                                           for s in written]
    assert len({tag for t in tagged for tag in t["tags"]}) > 2
    for result in tagged:
        assert [(e["type"], e["word_start"], e["word_end"])
                for e in result["entities"]] == [
            tuple(e) for e in entity_spans(result["tags"])]
        for entity in result["entities"]:
            assert entity["text"] == " ".join(
                result["words"][entity["word_start"]:entity["word_end"]])
    # A string of those words split as the raw-text export splits them
    # gives the same tags, its entities with code point offsets too; a
    # model saved and loaded (its vocab then in no file) tags the same.
    model.save(tmp_path / "tagger.keras")
    loaded = keras.models.load_model(tmp_path / "tagger.keras")
    # The longest sentence of letters and digits only (no word splits).
    index = max((i for i, words in enumerate(sentences)
                 if all(word.isalnum() for word in words)),
                key=lambda i: len(sentences[i]))
    text = " ".join(sentences[index])
    from_text, empty = pipelines.tag(loaded, [text, ""], LABELS, doc_stride=16)
    assert empty == {"words": [], "tags": [], "entities": []}
    assert from_text["words"] == tagged[index]["words"]
    assert from_text["tags"] == tagged[index]["tags"]
    for entity, by_words in zip(from_text["entities"],
                                tagged[index]["entities"]):
        assert entity == dict(by_words, char_start=entity["char_start"],
                              char_end=entity["char_end"])
        assert text[entity["char_start"]:entity["char_end"]] == entity["text"]
