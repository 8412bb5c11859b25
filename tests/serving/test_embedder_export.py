"""A `SentenceEmbedder` on every runtime (issue #46): `export_model` serves
it as model type `encoder` with its own pooling and L2 normalisation
(bert_tf1/serving/modules.py `served_encoder`), inside the raw-text
SavedModel's `embed_text` and the numeric graph the OpenVINO, LiteRT and
ONNX formats are made from; each gives the in-memory embedder's vectors
(its own `call` on its preprocessor's ids) within 1e-4 on 200 STS-B dev
sentences, and the Beam pipeline over TFRecord text gives them too.

Models: the fixture encoder (shared/fixtures/tf1_vocab_mrpc_classifier,
H=32) as the session's `encoder` export (mean, L2: tests/serving/conftest.py)
and, exported here to the numeric graph and LiteRT only, the same weights
pooled by [CLS] without normalisation.
"""
import csv
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.models import SentenceEmbedder
from bert_tf1.serving import export_model, serving_module
from bert_tf1.serving.formats import FORMATS
from bert_tf1.serving.predictions import embed, open_export
from tests.serving.conftest import EMBEDDER_POOLING

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def sentences(data_dir):
    """The first 100 STS-B dev pairs' two sentences: 200 texts."""
    with open(data_dir / "glue/STS-B/dev.tsv", encoding="utf-8") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quotechar=None))[1:101]
    return [text for row in rows for text in (row[7], row[8])]


def _own_vectors(embedder, preprocessor, texts):
    """The embedder's own call on its preprocessor's ids (in-graph
    tokenizer), float32 numpy [len(texts), hidden]."""
    return np.concatenate([np.asarray(embedder(preprocessor(
        tf.constant(texts[begin:begin + 50])), training=False))
        for begin in range(0, len(texts), 50)])


def _format_vectors(folder, texts):
    """predict_text's rules over one format folder: the `embedding`s."""
    predictor = open_export(folder, "encoder")
    return predictor, np.array([result["embedding"] for result in
                                predictor.predict([(t,) for t in texts],
                                                  batch_size=50)],
                               np.float32)


def test_every_format_gives_the_embedders_vectors(exports, sentences):
    folder, _ = exports("encoder")
    embedder, preprocessor = exports.models["encoder"]
    want = _own_vectors(embedder, preprocessor, sentences)
    assert want.shape == (200, 32)
    # The record the exports must follow: unit vectors, mean-pooled.
    np.testing.assert_allclose(np.linalg.norm(want, axis=1), 1.0, atol=1e-5)
    differences, predictors = {}, {}
    for name in FORMATS:
        predictors[name], got = _format_vectors(folder / name, sentences)
        assert (predictors[name].settings.pooling,
                predictors[name].settings.l2_normalize) == ("mean", True)
        differences[name] = float(np.abs(got - want).max())
    # The raw-text graph's own tokenizer and pooling, text in (the
    # SavedModel the saved_model runner loaded).
    loaded = predictors["saved_model"].run.loaded
    got = loaded.signatures["embed_text"](text=tf.constant(sentences))
    differences["embed_text"] = float(np.abs(
        got["embedding"].numpy() - want).max())
    print(f"embedder: largest difference {differences}", file=sys.stderr)
    assert max(differences.values()) <= TOLERANCE, differences
    # embed() of the in-memory embedder: its own pooling by default.
    np.testing.assert_allclose(embed(embedder, sentences[:8]), want[:8],
                               rtol=0, atol=TOLERANCE)


def test_cls_without_normalisation_in_the_numeric_graph_and_litert(
        exports, sentences, tmp_path):
    """A non-default pooling, cheaply: the numeric graph (what OpenVINO
    and ONNX are made from too) and LiteRT, and the raw-text graph's
    `embed_text` in memory (not saved)."""
    mean_embedder, preprocessor = exports.models["encoder"]
    embedder = SentenceEmbedder(encoder=mean_embedder.bert, pooling="cls",
                                l2_normalize=False, preprocessor=preprocessor)
    want = _own_vectors(embedder, preprocessor, sentences)
    # Not the mean vectors, nor unit ones: a pooling ignored would show.
    assert np.abs(want - _own_vectors(mean_embedder, preprocessor,
                                      sentences)).max() > 0.1
    assert np.abs(np.linalg.norm(want, axis=1) - 1.0).max() > 0.1
    folder = tmp_path / "export"
    export_model(embedder, str(folder), formats=["numeric", "litert"])
    for name in ("numeric", "litert"):
        predictor, got = _format_vectors(folder / name, sentences)
        assert (predictor.settings.pooling,
                predictor.settings.l2_normalize) == ("cls", False)
        np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE,
                                   err_msg=name)
    module = serving_module(embedder)
    got = module.embed_text(tf.constant(sentences[:20]))["embedding"]
    np.testing.assert_allclose(got.numpy(), want[:20], rtol=0,
                               atol=TOLERANCE)


def test_a_pooling_other_than_the_embedders_is_refused(exports, tmp_path):
    embedder, _ = exports.models["encoder"]
    for given, message in (
            ({"pooling": "cls"}, "pooling='cls' differs from the "
             "SentenceEmbedder's own pooling='mean'"),
            ({"l2_normalize": False}, "l2_normalize=False differs from the "
             "SentenceEmbedder's own l2_normalize=True"),
            ({"model_type": "classifier"}, "A SentenceEmbedder is served as "
             "model_type encoder, not classifier")):
        with pytest.raises(UserError, match=message):
            export_model(embedder, str(tmp_path / "export"), **given)
        assert list(tmp_path.iterdir()) == []
    # Its own values, given, are no disagreement.
    assert serving_module(embedder, **EMBEDDER_POOLING).pooling == "mean"


def test_beam_over_tfrecord_text_gives_the_same_vectors(exports, sentences,
                                                        tmp_path):
    """predict_text.py --runner=DirectRunner --input_format=tfrecord over
    the raw-text SavedModel (rows tokenized once in Python, batched by
    length, pooled as export_info.json records): the embedder's vectors,
    each record once, in the Parquet shards."""
    pytest.importorskip("apache_beam", reason="--runner needs the [beam] "
                        "extra (pip install -e '.[beam]')")
    from bert_tf1.serving.batch_inference import read_embeddings
    from bert_tf1.tasks.batch_inference import BatchOptions
    from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask
    from tests.helpers.bad_input_cases.batch_inference import _records

    folder, _ = exports("encoder")
    embedder, preprocessor = exports.models["encoder"]
    texts = sentences[:40]
    want = _own_vectors(embedder, preprocessor, texts)
    path = _records(tmp_path / "corpus.tfrecord",
                    [text.encode("utf-8") for text in texts])
    total = PredictTextTask(PredictTextConfig(
        export_dir=str(folder / "saved_model"), input_file=str(path),
        batch=BatchOptions(runner="DirectRunner", num_workers=1,
                           output_dir=str(tmp_path / "out"),
                           input_format="tfrecord", text_feature="text",
                           max_tokens=256))).run()
    assert total == len(texts)
    _, lines, vectors = read_embeddings(str(tmp_path / "out"))
    assert sorted(lines) == list(range(1, len(texts) + 1))
    np.testing.assert_allclose(vectors[np.argsort(lines)], want, rtol=0,
                               atol=TOLERANCE)
