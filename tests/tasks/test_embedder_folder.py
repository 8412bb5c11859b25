"""A sentence embedder's model folder (its pooling.json, as run_embeddings.py
writes it) is all the scripts need: export_saved_model.py exports an
encoder pooled as recorded, predict_text.py --init_checkpoint embeds lines
with it and extract_features.py pools as recorded when --pooling is not
given (bert_tf1/tasks/served_model.py `pooling_of`); each gives the
in-memory `SentenceEmbedder`'s vectors. A flag that differs from the record
is refused (tests/helpers/bad_input_cases/embedder_folders.py runs the
scripts; here the library's messages).

Model: run_embeddings.py's task for 3 steps from the fixture encoder
(tf1_vocab_mrpc_classifier, H=32) with max pooling and L2 normalisation
(neither default), its output_dir read as a user's would be.
"""
import io
import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.modeling.models import SentenceEmbedder
from bert_tf1.serving.predictions import open_export
from bert_tf1.tasks.errors import UserError, one_line
from bert_tf1.tasks.export import ExportConfig, ExportTask
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask
from bert_tf1.tasks.served_model import (ServedModel, ServedModelConfig,
                                         pooling_of)
from bert_tf1.tasks.embeddings import EmbeddingsConfig, EmbeddingsTask
from tests.conftest import FIXTURES_DIR
from tests.helpers.task_runner import run_task

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"
PAIRS = ["A man plays a guitar.\tSomeone plays music.",
         "The cat sleeps on the sofa.\tA cat rests.",
         "Stocks fell sharply today.\tThe market dropped.",
         "She is cooking pasta.\tA woman makes dinner."]

TEXTS = ["A man with a hard hat is dancing.",
         "A young child is riding a horse, and the horse is tired.", "Hi"]
MAX_SEQ_LENGTH = 16
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def embedder_folder(tmp_path_factory):
    """(the trained model folder, the in-memory embedder's vectors of
    TEXTS)."""
    work = tmp_path_factory.mktemp("run")
    (work / "pairs.tsv").write_text("\n".join(PAIRS) + "\n")
    folder = work / "out"
    EmbeddingsTask(EmbeddingsConfig(
        vocab_file=str(MRPC / "vocab.txt"),
        bert_config_file=str(MRPC / "bert_config.json"),
        init_checkpoint=str(MRPC / "bert_model.ckpt"), output_dir=str(folder),
        max_seq_length=MAX_SEQ_LENGTH, loss="mnrl",
        train_file=str(work / "pairs.tsv"), do_train=True, train_batch_size=4,
        num_train_epochs=3.0, learning_rate=1e-3, pooling="max",
        l2_normalize=True)).run()
    assert (folder / "model.ckpt-3.index").is_file()
    preprocessor = BertPreprocessor.from_checkpoint(
        folder, sequence_length=MAX_SEQ_LENGTH)
    embedder = SentenceEmbedder.from_checkpoint(folder, pooling="max",
                                                l2_normalize=True)
    vectors = np.asarray(embedder(preprocessor(tf.constant(TEXTS)),
                                  training=False))
    return folder, vectors


def test_the_record_gives_the_model_type_and_the_pooling(embedder_folder):
    folder, _ = embedder_folder
    served = ServedModel(ServedModelConfig(init_checkpoint=str(folder)))
    served.resolve()
    assert (served.config.model_type, served.config.pooling,
            served.config.l2_normalize) == ("encoder", "max", True)
    assert served.serving_arguments()["pooling"] == "max"
    # Flags that agree with the record are no disagreement.
    assert pooling_of(str(folder), "max", True) == ("max", True)
    # Without a record: the flags, else mean and no normalisation.
    assert pooling_of(str(folder / "nothing"), None, None) == ("mean", False)
    assert pooling_of(None, "cls", True) == ("cls", True)


def test_export_without_flags_serves_the_recorded_pooling(embedder_folder,
                                                          tmp_path):
    folder, want = embedder_folder
    export_dir = ExportTask(ExportConfig(
        init_checkpoint=str(folder), export_dir=str(tmp_path / "export"),
        max_seq_length=MAX_SEQ_LENGTH, format=["numeric"])).run()
    info = json.loads((tmp_path / "export" / "numeric" / "export_info.json")
                      .read_text())
    assert (info["model_type"], info["pooling"], info["l2_normalize"]) == (
        "encoder", "max", True)
    got = open_export(f"{export_dir}/numeric").predict([(t,) for t in TEXTS])
    np.testing.assert_allclose([r["embedding"] for r in got], want, rtol=0,
                               atol=TOLERANCE)


def test_predict_text_embeds_lines_with_the_folder_alone(embedder_folder):
    folder, want = embedder_folder
    stdout = io.StringIO()
    results = PredictTextTask(PredictTextConfig(
        init_checkpoint=str(folder), text=TEXTS,
        max_seq_length=MAX_SEQ_LENGTH)).run(stdout=stdout)
    assert [json.loads(line) for line in stdout.getvalue().splitlines()] == (
        results)
    assert [r["text"] for r in results] == TEXTS
    np.testing.assert_allclose([r["embedding"] for r in results], want,
                               rtol=0, atol=TOLERANCE)


def test_extract_features_pools_as_recorded(embedder_folder, tmp_path):
    folder, want = embedder_folder
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    flags = {"input_file": tmp_path / "in.txt",
             "vocab_file": folder / "vocab.txt",
             "bert_config_file": folder / "bert_config.json",
             "init_checkpoint": folder, "max_seq_length": MAX_SEQ_LENGTH}
    run_task("extract_features.py", dict(flags,
                                         output_file=tmp_path / "v.npy"))
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), want, rtol=0,
                               atol=TOLERANCE)
    # --pooling=none asks for the tokens: no pooling, nothing to disagree.
    run_task("extract_features.py", dict(flags, pooling="none", layers="-1",
                                         output_file=tmp_path / "t.jsonl"))
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 3


@pytest.mark.parametrize("given, message", [
    (dict(pooling="cls"), "--pooling=cls differs from {} (pooling=max, the "
     "model's own); leave --pooling out to use the recorded one."),
    (dict(l2_normalize=False), "--l2_normalize=false differs from {} "
     "(l2_normalize=true, the model's own)"),
])
def test_a_flag_that_differs_from_the_record_is_refused(embedder_folder,
                                                        tmp_path, given,
                                                        message):
    folder, _ = embedder_folder
    with pytest.raises(UserError) as raised:
        ExportTask(ExportConfig(init_checkpoint=str(folder),
                                export_dir=str(tmp_path / "export"),
                                **given)).run()
    assert one_line(raised.value).startswith(
        message.format(folder / "pooling.json"))
    assert list(tmp_path.iterdir()) == []
