"""A sentence embedder's model folder, as run_embeddings.py leaves one: the
fixture encoder's files (shared/fixtures/tf1_vocab_mrpc_classifier: config,
vocab, checkpoint) and a pooling record (bert_tf1/modeling/pooling.py)."""
import shutil

from bert_tf1.modeling.pooling import write_pooling_record
from tests.conftest import FIXTURES_DIR

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"


def write_embedder_folder(folder, pooling, l2_normalize):
    """Copies the fixture's bert_config.json, vocab.txt and bert_model.ckpt
    into `folder` (created) and records `pooling`, `l2_normalize`; returns
    `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in MRPC.iterdir():
        if path.name.startswith(("bert_config", "vocab", "bert_model.ckpt")):
            shutil.copy(path, folder / path.name)
    write_pooling_record(folder, pooling, l2_normalize)
    return folder
