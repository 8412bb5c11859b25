"""Bad inputs of issue #38's first sweep, continued: numeric flags whose
valid range is known before any work, refused when the flags are parsed
(absl bounds), before anything is written."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    MRPC_HEADER, MRPC_ROWS, SQUAD, _classifier, _mrpc_data, _predict, _squad)


@case("run_classifier.py")
def classifier_save_checkpoints_steps_zero(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, save_checkpoints_steps=0),
            ["--save_checkpoints_steps=0"])


@case("run_classifier.py")
def classifier_keep_checkpoint_max_negative(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, keep_checkpoint_max=-1),
            ["--keep_checkpoint_max=-1"])


@case("run_squad.py")
def squad_max_query_length_zero(folder):
    return _squad(folder, max_query_length=0), ["--max_query_length=0"]


@case("predict_text.py")
def predict_squad_max_answer_length_zero(folder):
    return (_predict(folder, model_type="squad", task_name=None,
                     init_checkpoint=SQUAD, vocab_file=SQUAD / "vocab.txt",
                     bert_config_file=SQUAD / "bert_config.json",
                     text="Who?\tJohn is here.", max_answer_length=0),
            ["--max_answer_length=0"])
