"""Batch inference (--runner=DirectRunner) with the real pretrained BERT,
all-MiniLM-L6-v2: the same sentence embeddings as one extract_features.py
process, and batch composition moves them little. In a file of their own so
that pytest-xdist's --dist loadfile runs them beside
test_batch_inference.py's fixture-model runs (bert_tf1/serving/batch_inference.py).

Skipped without network, failed with CI=true (tests/helpers/real_model.py).
"""
import numpy as np
import pytest

pytest.importorskip(
    "apache_beam", reason="--runner needs the [beam] extra (pip install -e '.[beam]'; run_tests.sh installs it)")

from bert_tf1.serving.batch_inference import read_embeddings  # noqa: E402
from bert_tf1.tasks.feature_extraction import (FeatureExtractionConfig,  # noqa: E402
                                               FeatureExtractionTask)
from tests.serving.beam_inputs import (beam_options,  # noqa: E402
                                       sst2_sentences, write_lines)


@pytest.mark.slow
def test_real_model_on_beam_equals_extract_features(real_model_dir, data_dir,
                                                    tmp_path):
    """all-MiniLM-L6-v2 on the first 1,000 SST-2 train sentences (four
    250-line shards): DirectRunner in this process (token-bounded batches of
    similar length) against one extract_features.py process (batches of 64
    padded to 64 tokens; the longest sentence has 56 word pieces with [CLS]
    and [SEP], so nothing is cut). The largest difference, which batch
    composition alone causes, is printed. (It ran on the first 10,000
    sentences until the suite had to fit CI's time: 2.1e-6 there.)"""
    path = write_lines(tmp_path / "sst2.txt", sst2_sentences(data_dir))
    model = dict(vocab_file=str(real_model_dir / "vocab.txt"),
                 bert_config_file=str(real_model_dir / "bert_config.json"),
                 init_checkpoint=str(real_model_dir / "bert_model.ckpt"),
                 input_file=path, pooling="mean", max_seq_length=64)
    FeatureExtractionTask(FeatureExtractionConfig(
        batch=beam_options(tmp_path / "out"), **model)).run()
    FeatureExtractionTask(FeatureExtractionConfig(
        output_file=str(tmp_path / "local.npy"), batch_size=64,
        **model)).run()
    files, numbers, vectors = read_embeddings(str(tmp_path / "out"))
    assert set(files) == {path}
    assert sorted(numbers) == list(range(1, 1001))   # each line once
    local = np.load(tmp_path / "local.npy")
    assert vectors.shape == local.shape == (1000, 384)
    largest = np.abs(vectors - local[numbers - 1]).max()
    print("all-MiniLM-L6-v2, 1,000 lines: largest difference %.2g" % largest)
    assert largest <= 1e-5


@pytest.mark.slow
def test_real_model_batch_composition_moves_embeddings_little(
        real_model_dir, data_dir):
    """all-MiniLM-L6-v2: the same rows alone, in token-bounded batches and
    in one batch of every length; the largest difference is printed."""
    from bert_tf1.serving.batch_inference import ModelSpec, ReadShardFn, _LoadedModel

    vocab = str(real_model_dir / "vocab.txt")
    spec = ModelSpec(
        model_type="encoder", tokenizer=(vocab, True), max_seq_length=128,
        serving_arguments=dict(
            model_type="encoder", vocab_file=vocab, do_lower_case=True,
            bert_config_file=str(real_model_dir / "bert_config.json"),
            init_checkpoint=str(real_model_dir / "bert_model.ckpt"),
            max_seq_length=128, pooling="mean"))
    rows = list(ReadShardFn._rows(spec, enumerate(
        [(s,) for s in sst2_sentences(data_dir, 64)], 1)))
    model = _LoadedModel(spec)
    alone = np.stack([model([row])[0]["embedding"] for row in rows])
    together = np.stack([r["embedding"] for r in model(rows)])
    by_length = sorted(rows, key=lambda row: len(row.ids))
    grouped = {row.line: r["embedding"] for batch in (by_length[:32],
                                                      by_length[32:])
               for row, r in zip(batch, model(batch))}
    grouped = np.stack([grouped[row.line] for row in rows])
    # The text path: every row padded to max_seq_length.
    padded = np.array([r["embedding"] for r in model.predictor.predict(
        [row.fields for row in rows])])
    largest = max(np.abs(a - b).max() for a, b in (
        (alone, together), (alone, grouped), (alone, padded)))
    print("largest difference from batch composition: %.2g" % largest)
    assert largest <= 1e-5


