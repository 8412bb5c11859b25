"""SQuAD prediction on a file where some questions lack answers: the others
are still scored (it used to skip evaluation for all), and the log says so."""
import json

from bert_tf1.data.squad.evaluate import split_by_gold_answers
from bert_tf1.tasks.squad import SquadConfig, SquadTask

DATA = [{"title": "T", "paragraphs": [
    {"context": "The cat sat on the mat.", "qas": [
        {"id": "q1", "question": "Where?", "answers": [{"text": "on the mat", "answer_start": 12}]},
        {"id": "q2", "question": "Who?"}]},
    {"context": "It rained.", "qas": [{"id": "q3", "question": "What?"}]},
    {"context": "Dogs bark.", "qas": [
        {"id": "q4", "question": "Which?", "answers": [{"text": "Dogs", "answer_start": 0}]}]}]}]


def test_split_keeps_graded_questions_in_their_paragraphs():
    graded, ungraded = split_by_gold_answers(DATA)
    assert ungraded == ["q2", "q3"]
    paragraphs = graded[0]["paragraphs"]
    assert [[qa["id"] for qa in p["qas"]] for p in paragraphs] == [["q1"], ["q4"]]
    assert paragraphs[1]["context"] == "Dogs bark."


def test_eval_results_cover_the_graded_questions(fixtures_dir, tmp_path, caplog):
    predict_file = tmp_path / "dev.json"
    predict_file.write_text(json.dumps({"version": "1.1", "data": DATA}))
    fixture = fixtures_dir / "tf1_vocab_squad"
    task = SquadTask(SquadConfig(bert_config_file=str(fixture / "bert_config.json"),
                                 predict_file=str(predict_file),
                                 output_dir=str(tmp_path / "out"), do_predict=True))
    (tmp_path / "out").mkdir()
    predictions = {"q1": "on the mat", "q2": "cat", "q3": "rained", "q4": "cats"}
    with caplog.at_level("WARNING"):
        result = task.write_eval_results(predictions, {})
    # q1 exact; q4 "cats" vs "Dogs": exact 0, F1 0: exact 50, f1 50 over 2.
    assert result["total"] == 2
    assert result["exact"] == 50.0 and result["f1"] == 50.0
    assert json.loads((tmp_path / "out/eval_results.json").read_text())["total"] == 2
    assert "2 question(s) have no \"answers\" list" in caplog.text
    assert "q2, q3" in caplog.text
