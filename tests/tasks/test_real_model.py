"""The real pretrained BERT, all-MiniLM-L6-v2, as fetch_pretrained.py fetches
it, against transformers' outputs for it
(shared/fixtures/hf_all_minilm_l6_v2/reference_outputs.npz, written by
transformers 5.24 on PyTorch; see that folder's README.md).

- token ids: the folder's vocab.txt and recorded do_lower_case through
  FullTokenizer and the scripts' packing give the fast tokenizer's ids;
  pairs longer than 64 pieces are cut by the original's rule (drop the last
  piece of the longer segment, B on ties), which Hugging Face's
  longest-first truncation does not always match;
- the encoder fed the reference ids: sequence output (real tokens) and the
  tanh pooler within 1e-5, mean-pooled L2-normalised sentence embeddings
  (sentence-transformers' `encode()`) within 1e-5.

Skipped without network (failed with CI=true): tests/helpers/real_model.py.
"""
import numpy as np
import pytest

from bert_tf1.data.glue.processors import MrpcProcessor
from bert_tf1.data.tokenization import FullTokenizer
from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.data.tokenization.packing import pack_tokens
from tests.helpers.real_model import REFERENCE

SEQ_LENGTH = 64
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def reference(fixtures_dir):
    return dict(np.load(fixtures_dir / REFERENCE))


@pytest.fixture(scope="module")
def tokenizer(real_model_dir):
    do_lower_case = read_lower_case(real_model_dir)
    assert do_lower_case is True  # the converter read the normaliser
    return FullTokenizer(str(real_model_dir / "vocab.txt"), do_lower_case)


@pytest.fixture(scope="module")
def encoder(real_model_dir):
    import tensorflow as tf

    from bert_tf1.modeling import BertConfig, BertModel, checkpoints

    model = BertModel(BertConfig.from_json_file(
        real_model_dir / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, str(real_model_dir), verbose=False)

    @tf.function(reduce_retracing=True)
    def run(input_ids, input_mask, segment_ids):
        return model({"input_ids": input_ids, "input_mask": input_mask,
                      "segment_ids": segment_ids}, training=False)
    return run


def test_single_sentences_give_the_reference_ids(reference, tokenizer):
    for sentence, expected in zip(reference["sentences"],
                                  reference["sentence_input_ids"]):
        packed = pack_tokens(tokenizer.tokenize(str(sentence)), None,
                             SEQ_LENGTH, tokenizer)
        assert packed.input_ids == expected.tolist(), sentence


def original_truncation(tokens_a, tokens_b, budget):
    """google-research/bert _truncate_seq_pair, written out for the test."""
    a, b = list(tokens_a), list(tokens_b)
    while len(a) + len(b) > budget:
        (a if len(a) > len(b) else b).pop()
    return a, b


def test_pairs_give_the_reference_ids_or_the_original_truncation(
        reference, tokenizer, data_dir):
    examples = MrpcProcessor().get_train_examples(str(data_dir / "glue" /
                                                      "MRPC"))[:32]
    fits = truncated = 0
    for row, example in enumerate(examples):
        tokens_a = tokenizer.tokenize(example.text_a)
        tokens_b = tokenizer.tokenize(example.text_b)
        packed = pack_tokens(tokens_a, tokens_b, SEQ_LENGTH, tokenizer)
        if len(tokens_a) + len(tokens_b) + 3 <= SEQ_LENGTH:
            fits += 1
            assert packed.input_ids == reference["pair_input_ids"][row].tolist()
            assert packed.input_mask == reference["pair_input_mask"][row].tolist()
            assert packed.segment_ids == (
                reference["pair_segment_ids"][row].tolist())
            continue
        truncated += 1
        a, b = original_truncation(tokens_a, tokens_b, SEQ_LENGTH - 3)
        assert packed.tokens == ["[CLS]", *a, "[SEP]", *b, "[SEP]"]
        assert packed.segment_ids == [0] * (len(a) + 2) + [1] * (len(b) + 1)
    # The first 32 MRPC train pairs: most fit in 64 pieces, some do not.
    assert fits >= 24 and truncated >= 4, (fits, truncated)


def test_encoder_outputs_match_transformers(reference, encoder):
    outputs = encoder(reference["pair_input_ids"], reference["pair_input_mask"],
                      reference["pair_segment_ids"])
    real = reference["pair_input_mask"].astype(bool)
    np.testing.assert_allclose(
        np.asarray(outputs["sequence_output"])[real],
        reference["pair_sequence_output"][real], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(np.asarray(outputs["pooled_output"]),
                               reference["pair_pooled_output"], rtol=0,
                               atol=TOLERANCE)


def test_sentence_embeddings_match_sentence_transformers(reference, encoder):
    from bert_tf1.modeling.pooling import pool_sequence

    input_ids = reference["sentence_input_ids"]
    input_mask = (input_ids != 0).astype(np.int32)
    outputs = encoder(input_ids, input_mask, np.zeros_like(input_ids))
    embeddings = np.asarray(pool_sequence(outputs["sequence_output"],
                                          input_mask, "mean",
                                          l2_normalize=True))
    np.testing.assert_allclose(embeddings, reference["sentence_embeddings"],
                               rtol=0, atol=TOLERANCE)
    # The tanh pooler is another vector (STS-B: docs/real_model.md).
    pooled = np.asarray(outputs["pooled_output"])
    assert np.abs(pooled - embeddings).max() > 0.1


@pytest.mark.slow
def test_sts_b_dev_spearman_through_extract_features(real_model_dir,
                                                      data_dir, tmp_path):
    """MTEB publishes 86.72 for STS-B dev with this model (mean pooling,
    L2, cosine); the 3,000 sentences have at most 51 word pieces here."""
    from bert_tf1.data.glue.metrics import spearman
    from bert_tf1.data.glue.processors import StsbProcessor
    from tests.helpers.script_runner import run_script

    examples = StsbProcessor().get_dev_examples(str(data_dir / "glue" /
                                                    "STS-B"))
    assert len(examples) == 1500
    lines = tmp_path / "sentences.txt"
    lines.write_text("".join(f"{e.text_a}\n{e.text_b}\n" for e in examples),
                     encoding="utf-8")
    output = tmp_path / "embeddings.npy"
    run_script("extract_features.py", {
        "input_file": lines, "output_file": output,
        "vocab_file": real_model_dir / "vocab.txt",
        "bert_config_file": real_model_dir / "bert_config.json",
        "init_checkpoint": real_model_dir / "bert_model.ckpt",
        "pooling": "mean", "l2_normalize": True, "max_seq_length": 64,
        "batch_size": 64})
    embeddings = np.load(output)
    assert embeddings.shape == (3000, 384)
    cosine = np.sum(embeddings[0::2] * embeddings[1::2], axis=1)
    labels = [float(e.label) for e in examples]
    assert abs(spearman(cosine, labels) - 0.8672) <= 0.0005
