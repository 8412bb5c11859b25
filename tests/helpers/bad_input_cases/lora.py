"""Bad LoRA flags of the fine-tuning scripts, and a checkpoint whose
adapters were never merged (it would load as the base model)."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (MRPC, MRPC_HEADER,
                                                  MRPC_ROWS, _classifier,
                                                  _mrpc_data, _ner)


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
