"""SQuAD answers are the same whatever the road: on contexts longer than one
window (the fixture model, max_seq_length 64, doc_stride 32),
predict_text.py over every format of an export and the Python API
(`bert_tf1.serving.predictions.answer`) give run_squad.py's
predictions.json answers, text for text (the context's own characters:
the original's windows, n-best and `get_final_text`)."""
import json

import pytest

from bert_tf1.data.squad.examples import split_context
from bert_tf1.serving import export_model, load_served_model
from bert_tf1.serving.formats import FORMATS
from bert_tf1.serving.predictions import answer
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask
from tests.helpers.script_runner import run_script

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
SQUAD = "tf1_vocab_squad"
CONTEXTS = [
    "Pedagogy, the science of teaching, is studied by Teachers. Teachers, "
    "like other professionals, may have to continue their education after "
    "they qualify, a process known as continuing professional development. "
    "In 1850 the first Normal School opened in Boston, Massachusetts; its "
    "students (mostly women) paid $12.50 a term.",
    "The Amazon rainforest covers much of the Amazon basin of South America. "
    "This basin encompasses 7,000,000 square kilometres, of which 5,500,000 "
    "are covered by the rainforest. The region includes territory belonging "
    "to nine nations: Brazil, Peru, Colombia, Venezuela and others. "
    "Deforestation has been studied since the 1970s by Brazilian scientists.",
]
QUESTIONS = [(0, "What is pedagogy?"), (0, "Where did the Normal School open?"),
             (0, "How much did students pay?"), (1, "How large is the basin?"),
             (1, "Who studied deforestation?"), (1, "How many nations?")]


@pytest.fixture(scope="module")
def squad_roads(fixtures_dir, tmp_path_factory):
    """(questions as (question, context), run_squad.py's answers by
    question, the export_dir, the in-memory model and preprocessor)."""
    folder = tmp_path_factory.mktemp("squad_roads")
    fixture = fixtures_dir / SQUAD
    pairs = [(question, CONTEXTS[index]) for index, question in QUESTIONS]
    data = {"version": "1.1", "data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": [
            {"id": f"q{number}", "question": question}
            for number, (index, question) in enumerate(QUESTIONS)
            if index == context_index]}
        for context_index, context in enumerate(CONTEXTS)]}]}
    (folder / "dev.json").write_text(json.dumps(data), encoding="utf-8")
    flags = dict(vocab_file=fixture / "vocab.txt", do_lower_case=True,
                 bert_config_file=fixture / "bert_config.json",
                 init_checkpoint=fixture / "bert_model.ckpt",
                 max_seq_length=64, doc_stride=32, max_query_length=16)
    run_script("run_squad.py", dict(flags, do_predict=True,
                                    predict_file=folder / "dev.json",
                                    output_dir=folder / "out",
                                    allow_random_weights=False))
    predicted = json.loads((folder / "out" / "predictions.json").read_text())
    want = [predicted[f"q{number}"] for number in range(len(QUESTIONS))]
    model, preprocessor = load_served_model(
        "squad", str(flags["bert_config_file"]), str(flags["vocab_file"]),
        str(fixture), max_seq_length=64, max_query_length=16)
    export_dir = folder / "export"
    export_model(model, str(export_dir), formats=FORMATS,
                 preprocessor=preprocessor, doc_stride=32, max_query_length=16)
    return pairs, want, export_dir, model, preprocessor


def test_contexts_need_several_windows(squad_roads, fixtures_dir):
    pairs, _, _, _, preprocessor = squad_roads
    from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer

    tokenizer = FullTokenizer(str(fixtures_dir / SQUAD / "vocab.txt"), True)
    for _, context in pairs:
        pieces = sum(len(tokenizer.tokenize(word))
                     for word in split_context(context)[0])
        assert pieces > 64, pieces


def test_every_format_answers_as_run_squad(squad_roads):
    pairs, want, export_dir, _, _ = squad_roads
    # The context's own characters (the original's final text), not word
    # pieces joined by spaces.
    assert any(any(char.isupper() or char in ",.$" for char in text)
               for text in want), want
    for name in FORMATS:
        task = PredictTextTask(PredictTextConfig(
            export_dir=str(export_dir / name),
            text=[f"{question}\t{context}" for question, context in pairs],
            batch_size=3))
        task.prepare()
        results = task.results()
        assert [result["answer"] for result in results] == want, name
    info = json.loads((export_dir / "saved_model" / "export_info.json")
                      .read_text())
    assert info["squad_answer_windows"] == "first window only"
    assert info["doc_stride"] == 32


def test_the_python_api_answers_as_run_squad(squad_roads):
    pairs, want, _, model, preprocessor = squad_roads
    answers = answer(model, pairs, preprocessor=preprocessor, doc_stride=32,
                     max_query_length=16)
    assert [result["answer"] for result in answers] == want
