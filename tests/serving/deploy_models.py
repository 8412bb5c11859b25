"""The served models the deployment-format tests export: one per model type,
built once per test module, and the 200 id rows each is compared on."""
import numpy as np

from bert_tf1.serving import build_serving_module
from tests.helpers.task_checkpoints import (TAGS,
                                            write_multiple_choice_checkpoint,
                                            write_tagger_checkpoint)

MRPC = "tf1_vocab_mrpc_classifier"
SQUAD = "tf1_vocab_squad"
NUM_ROWS = 200
#: model type -> the raw-text export's ids signature.
IDS_SIGNATURE = {"classifier": "classify_ids", "squad": "squad_ids",
                 "encoder": "encode_ids", "tagger": "tag_ids",
                 "multiple_choice": "multiple_choice_ids"}


def serving_arguments(model_type, fixtures_dir, tmp_path_factory,
                      real_model_dir=None):
    """`build_serving_module` keyword arguments for `model_type`."""
    fixture = fixtures_dir / (SQUAD if model_type == "squad" else MRPC)
    checkpoint = fixture
    extra = {"max_seq_length": 32}
    if model_type == "classifier":
        extra["label_list"] = ["0", "1"]
    elif model_type == "squad":
        extra["max_seq_length"] = 96
    elif model_type == "tagger":
        checkpoint = tmp_path_factory.mktemp("tagger")
        write_tagger_checkpoint(fixture, checkpoint, seed=1, scale=2.0)
        extra["label_list"] = TAGS
    elif model_type == "multiple_choice":
        checkpoint = tmp_path_factory.mktemp("choices")
        write_multiple_choice_checkpoint(fixture, checkpoint, seed=2,
                                         scale=2.0)
        extra["max_seq_length"] = 24
    elif model_type == "encoder" and real_model_dir is not None:
        fixture = checkpoint = real_model_dir
        extra = {"max_seq_length": 64, "pooling": "mean"}
    return dict(model_type=model_type,
                bert_config_file=str(fixture / "bert_config.json"),
                vocab_file=str(fixture / "vocab.txt"),
                init_checkpoint=str(checkpoint), do_lower_case=True, **extra)


def build(arguments):
    return build_serving_module(**arguments)


def id_rows(model_type, max_seq_length, vocab_size, seed=0):
    """NUM_ROWS random int32 (input_ids, input_mask, segment_ids), [rows,
    seq] ([rows, 4, seq] for multiple choice): real tokens then padding,
    two segments."""
    rng = np.random.default_rng(seed)
    shape = ((NUM_ROWS, 4) if model_type == "multiple_choice"
             else (NUM_ROWS,)) + (max_seq_length,)
    lengths = rng.integers(3, max_seq_length + 1, shape[:-1])[..., None]
    positions = np.arange(max_seq_length)
    mask = (positions < lengths).astype(np.int32)
    ids = rng.integers(1000 if vocab_size > 2000 else 5, vocab_size,
                       shape).astype(np.int32) * mask
    segments = ((positions >= lengths // 2) & (mask == 1)).astype(np.int32)
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments}
