"""Bad inputs of issue #38's first sweep: flag values whose valid values
are known before any work (metric names, sequence lengths, label lists),
found in the pre-flight, before output_dir is even made."""
import json

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    MRPC, MRPC_HEADER, MRPC_ROWS, NER_TRAIN, SQUAD_V1, _classifier, _convert,
    _export, _mrpc_data, _ner, _pretraining, _squad, _write)


@case("run_classifier.py")
def classifier_keep_best_checkpoint_misspelled(folder):
    # Was found at the first evaluation, after records and checkpoints.
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS,
                      dev=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, do_eval=True,
                        eval_every_epoch=True,
                        keep_best_checkpoint="eval_acuracy"),
            ["--keep_best_checkpoint=eval_acuracy", "eval_accuracy",
             "eval_f1"])


@case("run_classifier.py")
def classifier_keep_best_accuracy_of_a_regression(folder):
    # STS-B is scored by correlation; it has no accuracy.
    header = "index\tg\tf\tn\tgs\tsource\tid\tsentence1\tsentence2\tscore\n"
    rows = "".join(f"{i}\tx\tx\tx\tx\tx\tx\tA cat sat.\tA cat.\t{i}.5\n"
                   for i in range(2))
    data = _mrpc_data(folder, train=header + rows, dev=header + rows)
    return (_classifier(folder, data, task_name="STS-B", do_train=True,
                        init_checkpoint="",
                        do_eval=True, eval_every_epoch=True,
                        keep_best_checkpoint="eval_accuracy"),
            ["--keep_best_checkpoint=eval_accuracy", "eval_pearson"])


@case("run_ner.py")
def ner_keep_best_checkpoint_of_an_unknown_type(folder):
    dev = _write(folder / "dev.conll", NER_TRAIN)
    return (_ner(folder, do_eval=True, eval_file=dev, eval_every_epoch=True,
                 keep_best_checkpoint="eval_f1_LOC"),
            ["--keep_best_checkpoint=eval_f1_LOC", "eval_f1_location"])


@case("run_classifier.py")
def classifier_learning_rate_not_positive(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, learning_rate=-2e-5),
            ["--learning_rate=-2e-05", "> 0"])


@case("run_squad.py")
def squad_warmup_proportion_over_one(folder):
    flags = _squad(folder, do_predict=False, do_train=True,
                   train_file=_write(folder / "train.json",
                                     json.dumps(SQUAD_V1)),
                   train_batch_size=1, warmup_proportion=10)
    return flags, ["--warmup_proportion=10", "[0, 1]"]


@case("run_pretraining.py")
def pretraining_learning_rate_zero(folder):
    return _pretraining(folder, learning_rate=0), ["--learning_rate=0"]


@case("export_saved_model.py")
def export_label_list_with_a_label_twice(folder):
    return (_export(folder, task_name=None, label_list="0,1,0"),
            ["--label_list", "'0'", "twice"])


@case("convert_checkpoint.py")
def convert_bert_config_file_for_a_hugging_face_input(folder):
    # The folder's own config.json is read; the flag would be ignored.
    hf = folder / "hf_in"
    _write(hf / "config.json", json.dumps(dict(model_type="bert")))
    return (_convert(folder, input_format="huggingface", input_path=hf,
                     output_format="tf1", output_path=folder / "tf1",
                     bert_config_file=MRPC / "bert_config.json"),
            ["--bert_config_file", "--input_format=huggingface"])


@case("convert_checkpoint.py")
def convert_label_list_file_with_encoder_only(folder):
    labels = _write(folder / "labels.txt", "O\nB-PER\nI-PER\n")
    return (_convert(folder, label_list_file=labels, encoder_only=True),
            [f"--label_list_file={labels}", "--encoder_only"])
