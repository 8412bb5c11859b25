"""run_embeddings.py's task in-process on the tiny MRPC fixture (real
uncased vocab, hidden 32, dropout 0.1): training with gradient caching,
retrieval and STS evaluation recomputed from the written checkpoint, exact
resume, GLUE STS-B and QNLI folders, and the pooling record.
(The bad inputs run through the script in tests/scripts/test_bad_inputs.py,
tests/helpers/bad_input_cases/embeddings.py.)"""
import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.embeddings.metrics import (retrieval_metrics,
                                              sts_correlations)
from bert_tf1.data.embeddings.records import example_values
from bert_tf1.data.embeddings.examples import EmbeddingExample
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.modeling import SentenceEmbedder
from bert_tf1.modeling.pooling import POOLING_FILE, write_pooling_record
from bert_tf1.tasks import fine_tuning
from bert_tf1.tasks.embeddings import EmbeddingsConfig, EmbeddingsTask
from bert_tf1.tasks.errors import UserError

FIXTURE = "tf1_vocab_mrpc_classifier"
SEQ = 16
PAIRS = [("A man is playing a guitar.", "Someone plays an instrument."),
         ("The cat sleeps on the sofa.", "A cat is resting."),
         ("Stocks fell sharply today.", "The market dropped."),
         ("She is cooking pasta.", "A woman makes dinner."),
         ("The train was late.", "The railway service was delayed."),
         ("Kids play in the park.", "Children are playing outside."),
         ("He reads a book.", "A man is reading."),
         ("It is raining heavily.", "There is a storm.")]
SCORED = [("A man is playing a guitar.", "A man plays music.", 4.8),
          ("The cat sleeps.", "Stocks fell.", 0.2),
          ("She is cooking.", "A woman makes dinner.", 3.5),
          ("The train was late.", "Kids play outside.", 0.0),
          ("He reads a book.", "A man is reading.", 4.5),
          ("It rains.", "The sun shines.", 1.4)]


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


@pytest.fixture(scope="module")
def tokenizer(fixture):
    return FullTokenizer(str(fixture / "vocab.txt"), do_lower_case=True)


def make_config(fixture, output_dir, **fields):
    values = dict(vocab_file=str(fixture / "vocab.txt"),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  output_dir=str(output_dir), max_seq_length=SEQ)
    values.update({key: str(value) if hasattr(value, "__fspath__") else value
                   for key, value in fields.items()})
    return EmbeddingsConfig(**values)


def write_rows(path, rows):
    path.write_text("".join("\t".join(map(str, row)) + "\n" for row in rows),
                    encoding="utf-8")
    return path


def read_eval_results(output_dir):
    return {key: float(value) for key, value in (
        line.split(" = ") for line in
        (output_dir / "eval_results.txt").read_text().splitlines())}


def embed(model, texts, tokenizer):
    """Our own pass over `texts`: packed alone, full length, [n, hidden]."""
    rows = [example_values(EmbeddingExample((text,)), 1, SEQ, tokenizer)
            for text in texts]
    inputs = {key: np.array([row[key][0] for row in rows], "int32")
              for key in ("input_ids", "input_mask", "segment_ids")}
    return np.asarray(model(inputs, training=False), np.float64)


def checkpoint_weights(prefix):
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map()}


class StopAt(keras.callbacks.Callback):
    """Stops training after optimizer step `step` (a run cut short)."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.step:
            self.model.stop_training = True


# -- end to end ---------------------------------------------------------------

@pytest.mark.slow  # trains three times (fit traces the cached step): ~60 s
def test_train_with_caching_retrieval_eval_and_exact_resume(
        fixture, tokenizer, tmp_path, monkeypatch):
    pairs = write_rows(tmp_path / "pairs.tsv", PAIRS)
    train = dict(loss="mnrl", train_file=pairs, do_train=True,
                 train_batch_size=4, num_train_epochs=2.0,
                 learning_rate=1e-3, mini_batch_size=3, pooling="mean",
                 l2_normalize=True)
    for kind in ("whole", "cut"):
        (tmp_path / kind).mkdir()
    whole = tmp_path / "whole" / "out"
    config = make_config(fixture, whole, do_eval=True, eval_file=pairs,
                         eval_kind="retrieval", eval_batch_size=3, **train)
    config.runtime.seed = 7
    results = EmbeddingsTask(config).run()
    assert results["train"]["global_step"] == 4  # 8 / 4 * 2

    # The model folder: encoder-only TF1 checkpoint and the pooling record.
    assert json.loads((whole / POOLING_FILE).read_text()) == {
        "pooling": "mean", "l2_normalize": True}
    final = checkpoint_weights(whole / "model.ckpt-4")
    assert all(name.startswith(("bert/", "global_step"))
               or "adam" in name for name in final), sorted(final)[:5]
    # eval_results.txt: the metrics of the written checkpoint, recomputed
    # with our own packing and model call over the queries and documents.
    model = SentenceEmbedder.from_checkpoint(str(whole / "model.ckpt-4"),
                                             l2_normalize=True)
    queries = embed(model, [a for a, _ in PAIRS], tokenizer)
    documents = embed(model, [b for _, b in PAIRS], tokenizer)
    expected = retrieval_metrics(queries, documents,
                                 [{i} for i in range(len(PAIRS))])
    written = read_eval_results(whole)
    assert set(written) == set(expected) | {"global_step"}
    for name, value in expected.items():
        assert written[name] == pytest.approx(value, abs=1e-5), name
    initial = checkpoint_weights(fixture / "bert_model.ckpt")
    moved = max(np.abs(final[name] - initial[name]).max()
                for name in initial if name.startswith("bert/encoder"))
    assert moved > 1e-4

    # Cut after step 2, then the same command again: the weights of step 4
    # are the uninterrupted run's (the data stream and the dropout masks
    # continue where they stopped).
    cut = tmp_path / "cut" / "out"
    monkeypatch.setattr(fine_tuning.eval_during_training, "callbacks",
                        lambda task, count: [StopAt(2)])
    config = make_config(fixture, cut, **train)
    config.runtime.seed = 7
    assert EmbeddingsTask(config).run()["train"]["global_step"] == 2
    monkeypatch.undo()
    config = make_config(fixture, cut, **train)
    config.runtime.seed = 7
    again = EmbeddingsTask(config)
    assert again.run()["train"]["global_step"] == 4
    assert again.checkpoint.source == "output_dir"
    resumed = checkpoint_weights(cut / "model.ckpt-4")
    assert resumed.keys() == final.keys()
    for name in final:
        np.testing.assert_allclose(resumed[name], final[name], rtol=0,
                                   atol=1e-6, err_msg=name)


def test_sts_eval_of_a_glue_folder(fixture, tokenizer, tmp_path):
    """--task_name=STS-B: dev.tsv's pairs, spearman and pearson of the
    --init_checkpoint encoder (cls pooling), recomputed."""
    glue = tmp_path / "STS-B"
    glue.mkdir()
    header = ("index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\t"
              "sentence1\tsentence2\tscore\n")
    rows = "".join(f"{i}\tmain\tx\t2012\t{i}\tnone\tnone\t{a}\t{b}\t{s}\n"
                   for i, (a, b, s) in enumerate(SCORED))
    for name in ("train.tsv", "dev.tsv"):
        (glue / name).write_text(header + rows, encoding="utf-8")
    out = tmp_path / "out"
    task = EmbeddingsTask(make_config(
        fixture, out, task_name="STS-B", data_dir=glue, loss="cosent",
        do_eval=True, pooling="cls", eval_batch_size=4))
    results = task.run()["eval"]
    model = SentenceEmbedder.from_checkpoint(str(fixture), pooling="cls")
    expected = sts_correlations(embed(model, [a for a, _, _ in SCORED],
                                      tokenizer),
                                embed(model, [b for _, b, _ in SCORED],
                                      tokenizer),
                                [s for _, _, s in SCORED])
    for name in ("spearman", "pearson"):
        assert results[name] == pytest.approx(expected[name], abs=1e-5)
        assert read_eval_results(out)[name] == pytest.approx(
            expected[name], abs=1e-5)
    # An evaluation writes no pooling record (no model was trained).
    assert not (out / POOLING_FILE).exists()


def test_qnli_folder_and_cosine_scores(fixture, tmp_path):
    glue = tmp_path / "QNLI"
    glue.mkdir()
    rows = [("0", "Who wrote it?", "Ann wrote it.", "entailment"),
            ("1", "Who wrote it?", "It rained.", "not_entailment"),
            ("2", "Where is Rome?", "Rome is in Italy.", "entailment"),
            ("3", "Who wrote it?", "Bob co-wrote it.", "entailment")]
    for name in ("train.tsv", "dev.tsv"):
        write_rows(glue / name, [("index", "question", "sentence", "label")]
                   + rows)
    task = EmbeddingsTask(make_config(
        fixture, tmp_path / "out", task_name="QNLI", data_dir=glue,
        do_train=True, do_eval=True, train_batch_size=2))
    task.prepare()
    assert [e.texts for e in task.examples_of("train")] == [
        ("Who wrote it?", "Ann wrote it."),
        ("Where is Rome?", "Rome is in Italy."),
        ("Who wrote it?", "Bob co-wrote it.")]
    # Evaluation: 2 queries, then the 3 entailed sentences as the corpus.
    assert [e.texts[0] for e in task.examples_of("eval")] == [
        "Who wrote it?", "Where is Rome?", "Ann wrote it.",
        "Rome is in Italy.", "Bob co-wrote it."]
    assert task.retrieval == (2, [{0, 2}, {1}])
    task.close()
    scored = write_rows(tmp_path / "scored.tsv", SCORED)
    cosine = EmbeddingsTask(make_config(
        fixture, tmp_path / "out2", loss="cosine", score_range="0,5",
        train_file=scored, do_train=True, train_batch_size=2))
    cosine.prepare()
    assert [e.score for e in cosine.examples_of("train")] == pytest.approx(
        [s / 5 for _, _, s in SCORED])
    cosine.close()


def test_pooling_follows_and_guards_the_records(fixture, tmp_path):
    pairs = write_rows(tmp_path / "pairs.tsv", PAIRS)
    # An init folder recording cls + L2: the run takes it when no flag says
    # otherwise, and refuses a --pooling that disagrees, naming both.
    init = tmp_path / "init"
    init.mkdir()
    for suffix in (".index", ".data-00000-of-00001"):
        (init / f"bert_model.ckpt{suffix}").write_bytes(
            (fixture / f"bert_model.ckpt{suffix}").read_bytes())
    record = write_pooling_record(init, "cls", True)
    task = EmbeddingsTask(make_config(
        fixture, tmp_path / "a", init_checkpoint=init / "bert_model.ckpt",
        train_file=pairs, do_train=True, train_batch_size=4))
    task.prepare()
    assert (task.model.pooling, task.model.l2_normalize) == ("cls", True)
    task.close()
    with pytest.raises(UserError) as error:
        EmbeddingsTask(make_config(
            fixture, tmp_path / "b", init_checkpoint=init,
            train_file=pairs, do_train=True, pooling="max")).prepare()
    assert "--pooling=max" in str(error.value) and record in str(error.value)
    assert not (tmp_path / "b").exists()
    with pytest.raises(UserError, match="--l2_normalize=false"):
        EmbeddingsTask(make_config(
            fixture, tmp_path / "c", init_checkpoint=init,
            train_file=pairs, do_train=True, l2_normalize=False)).prepare()
    assert not (tmp_path / "c").exists()
