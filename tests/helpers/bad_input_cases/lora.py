"""Bad LoRA flags of the fine-tuning scripts, a checkpoint whose
adapters were never merged (it would load as the base model), and a resume
whose LoRA settings or precision differ from those output_dir records."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (MRPC, MRPC_HEADER,
                                                  MRPC_ROWS, _classifier,
                                                  _mrpc_data, _ner, _write)


@case("run_classifier.py")
def classifier_negative_lora_rank(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, lora_rank=-1),
            ["--lora_rank=-1", "integer >= 1"])


@case("run_classifier.py")
def classifier_unknown_lora_target(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, lora_rank=4,
                        lora_targets="query,output"),
            ["--lora_targets=query,output", "'output'", "attention_output"])


@case("run_classifier.py")
def classifier_lora_alpha_without_rank(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, lora_alpha=16.0),
            ["--lora_alpha", "--lora_rank"])


@case("run_classifier.py")
def classifier_checkpoint_with_unmerged_lora_adapters(folder):
    # What Keras alone saves of a LoRA model: base kernels + adapters.
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
    from bert_tf1.modeling.checkpoints.saving import write_tensors
    from bert_tf1.modeling.naming import tf1_name

    model = BertClassifier(BertConfig.from_json_file(
        MRPC / "bert_config.json"), 2)
    checkpoints.load_tf1_checkpoint(model, MRPC, verbose=False)
    model.enable_lora(2)
    prefix = write_tensors(str(folder / "ckpt/model.ckpt"), {
        tf1_name(v): v.value for v in model.weights})
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, init_checkpoint=prefix),
            [prefix, "LoRA adapters not merged", "--lora_rank"])


@case("run_ner.py")
def ner_lora_with_feature_layers(folder):
    return (_ner(folder, lora_rank=4, feature_layers="last"),
            ["--lora_rank=4", "--feature_layers"])


def _recorded(folder, lora=None, precision="float32"):
    """An output_dir whose earlier run recorded `lora` and `precision`."""
    import json

    from bert_tf1.tasks.model_folder import SETTINGS_FILE

    path = _write(folder / "out" / SETTINGS_FILE, json.dumps(
        {"lora": lora, "precision": precision}))
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return data, str(path)


RANK_4 = {"rank": 4, "alpha": 4.0, "targets": "query,value"}


@case("run_classifier.py")
def classifier_resume_without_the_recorded_lora(folder):
    data, path = _recorded(folder, lora=RANK_4)
    return (_classifier(folder, data, do_train=True),
            [path, "LoRA rank=4, alpha=4, targets=query,value",
             "--lora_rank=0"])


@case("run_classifier.py")
def classifier_resume_with_lora_after_full_fine_tuning(folder):
    data, path = _recorded(folder, lora=None)
    return (_classifier(folder, data, do_train=True, lora_rank=4),
            [path, "no LoRA", "--lora_rank=4"])


@case("run_classifier.py")
def classifier_resume_with_another_lora_rank(folder):
    data, path = _recorded(folder, lora=RANK_4)
    return (_classifier(folder, data, do_train=True, lora_rank=8,
                        lora_alpha=4.0),
            [path, "rank=4", "--lora_rank=8"])


@case("run_classifier.py")
def classifier_resume_with_other_lora_targets(folder):
    data, path = _recorded(folder, lora=RANK_4)
    return (_classifier(folder, data, do_train=True, lora_rank=4,
                        lora_targets="query,key"),
            [path, "targets=query,value", "--lora_targets=key,query"])


@case("run_classifier.py")
def classifier_resume_in_another_precision(folder):
    data, path = _recorded(folder, precision="float32")
    return (_classifier(folder, data, do_train=True,
                        mixed_precision="bfloat16"),
            [path, "precision float32", "bfloat16", "--mixed_precision"])


@case("run_classifier.py")
def classifier_lora_targets_without_rank(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True,
                        lora_targets="query,key"),
            ["--lora_targets=query,key", "--lora_rank"])


@case("run_ner.py")
def ner_resume_with_another_lora_alpha(folder):
    _, path = _recorded(folder, lora=RANK_4)
    return (_ner(folder, lora_rank=4, lora_alpha=16.0),
            [path, "alpha=4", "--lora_alpha=16"])
