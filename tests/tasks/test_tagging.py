"""TaggingTask in-process: checks before work, one tag per word, the files
it writes, eval numbers against the metric, resume, the feature cache.

Model: the tf1_vocab_mrpc_classifier fixture encoder (uncased vocab, two
layers, hidden 32; its classifier head is not used). Data: slices of the
shared WNUT-17 files and small files written here.
"""
import math
import os

import numpy as np
import pytest

from bert_tf1.data.tagging.metric import conll_scores
from bert_tf1.data.tagging.readers import read_tagged_file
from bert_tf1.data.tagging.schemes import entity_types, scheme_labels
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.tagging import TaggingConfig, TaggingTask

FIXTURE = "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


def conll_slice(source, target, sentences):
    """The first `sentences` sentences of a conll file, as written there."""
    blocks = source.read_text(encoding="utf-8").split("\n\n")
    # WNUT-17's first part separates sentences with a TAB-only line.
    text = "\n\n".join(blocks)
    lines, kept, count = text.split("\n"), [], 0
    for line in lines:
        kept.append(line)
        if not line.strip():
            count += 1
            if count == sentences:
                break
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return target


@pytest.fixture
def wnut(tmp_path, data_dir):
    folder = data_dir / "ner/wnut17"
    return (conll_slice(folder / "wnut17train.conll", tmp_path / "train.conll",
                        40),
            conll_slice(folder / "emerging.dev.conll", tmp_path / "dev.conll",
                        20))


def make_config(fixture, output_dir, **fields):
    values = dict(vocab_file=str(fixture / "vocab.txt"),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  output_dir=str(output_dir), do_lower_case=True,
                  max_seq_length=32, doc_stride=16, train_batch_size=8,
                  eval_batch_size=5, predict_batch_size=7,
                  num_train_epochs=1.0, learning_rate=1e-3)
    values.update({key: str(value) if isinstance(value, os.PathLike)
                   else value for key, value in fields.items()})
    return TaggingConfig(**values)


def read_predictions(path):
    """[[(token, tag), ...] per sentence] of a predictions file, read here
    by its documented layout: `token<TAB>tag` lines, a blank line after
    each sentence."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n\n")
    return [[tuple(line.split("\t")) for line in block.split("\n")]
            for block in text[:-2].split("\n\n")]


# ----- checks before any write ------------------------------------------------

def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


TRAIN = "John\tB-person\nlives\tO\nin\tO\nParis\tB-location\n\n"


@pytest.mark.parametrize("case", [
    "missing_eval_file", "no_eval_file_flag", "type_not_in_training",
    "bad_line", "tag_outside_scheme", "bad_scheme", "bad_format",
    "too_few_layers", "no_label_list",
    "other_label_list"])
def test_bad_input_fails_before_any_write(case, fixture, tmp_path):
    train = _write(tmp_path / "train.conll", TRAIN)
    output_dir = tmp_path / "out"
    fields = dict(do_train=True, train_file=train)
    if case == "missing_eval_file":
        fields.update(do_eval=True, eval_file=tmp_path / "dev.conll")
        pattern = f"{tmp_path / 'dev.conll'}: file not found"
    elif case == "no_eval_file_flag":
        fields.update(do_eval=True)
        pattern = "--do_eval needs --eval_file"
    elif case == "type_not_in_training":
        dev = _write(tmp_path / "dev.conll", "a\tO\n\nRex\tB-animal\n\n")
        fields.update(do_eval=True, eval_file=dev)
        pattern = f"{dev}, line 3: tag 'B-animal' is not in the label list"
    elif case == "bad_line":
        _write(train, TRAIN + "New York\tB-location\textra\n\n")
        pattern = f"{train}, line 6: 3 columns"
    elif case == "tag_outside_scheme":
        _write(train, TRAIN + "Rome\tX-location\n\n")
        pattern = f"{train}, line 6: .*X-location"
    elif case == "bad_scheme":
        fields.update(tag_scheme="iob3")
        pattern = "--tag_scheme=iob3"
    elif case == "bad_format":
        fields.update(data_format="csv")
        pattern = "--data_format=csv: expected one of conll, uner, chinese_bio"
    elif case == "too_few_layers":
        fields.update(feature_layers="concat_last_four")
        pattern = ("--feature_layers=concat_last_four: concat_last_four needs "
                   "at least 4 encoder layers.*num_hidden_layers=2")
    elif case == "no_label_list":
        fields = dict(do_predict=True, predict_file=train)
        pattern = f"{output_dir / 'label_list.txt'}: no such file"
    else:
        output_dir.mkdir()
        _write(output_dir / "label_list.txt", "O\nB-PER\nI-PER\n")
        pattern = "label_list.txt holds the labels of another training"
    task = TaggingTask(make_config(fixture, output_dir, **fields))
    with pytest.raises(UserError, match=pattern):
        task.prepare()
    assert not output_dir.exists() or sorted(os.listdir(output_dir)) == [
        "label_list.txt"]


# ----- prediction: one tag per word, in the file's scheme ---------------------

@pytest.mark.slow  # predicts ~150 windows: ~10-20 s
def test_predict_gives_every_word_one_tag_in_the_file_scheme(fixture,
                                                             tmp_path):
    """No training: label_list.txt written here, the fixture encoder with a
    fresh head. A long IOB1 document (more than three windows), a
    one-word sentence, a word that has no word pieces."""
    rng = np.random.default_rng(0)
    words = ["the", "cat", "sat", "on", "a", "mat", "unbelievable",
             "\u200b", "London", "."]
    lines, sentences = ["-DOCSTART- -X- O O", ""], []
    for length in [1, 2000, 7, 1]:
        sentence = [str(rng.choice(words)) for _ in range(length)]
        sentences.append(sentence)
        lines += [f"{word} NN I-LOC" for word in sentence] + [""]
    lines += ["-DOCSTART- -X- O O", "", "Paris NN I-LOC", ""]
    sentences.append(["Paris"])
    predict_file = _write(tmp_path / "test.txt", "\n".join(lines) + "\n")
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    labels = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    _write(output_dir / "label_list.txt", "".join(l + "\n" for l in labels))
    task = TaggingTask(make_config(fixture, output_dir, do_predict=True,
                                   predict_file=predict_file,
                                   tag_scheme="iob1"))
    tags = task.run()["predict"]
    # The first document (1 + 2000 + 7 + 1 words) spans many windows.
    assert sum(f.document_index == 0 for f in task.features["predict"]) > 3
    written = read_predictions(output_dir / "predictions.txt")
    assert [[token for token, _ in s] for s in written] == sentences
    assert [[tag for _, tag in s] for s in written] == [
        s for d in tags for s in d]
    # IOB1: a B- only where an entity of the same type ends just before.
    for sentence in written:
        previous = "O"
        for _, tag in sentence:
            assert tag in labels
            if tag.startswith("B-"):
                assert previous[2:] == tag[2:] and previous != "O"
            previous = tag


# ----- train, evaluate, predict ------------------------------------------------

@pytest.mark.slow  # trains (model.fit compiles): ~30-60 s
def test_train_evaluate_predict(fixture, wnut, tmp_path):
    from bert_tf1.data.tagging.records import tagging_dataset
    from bert_tf1.modeling import BertConfig, BertTokenClassifier, checkpoints

    train_file, dev_file = wnut
    output_dir = tmp_path / "out"
    config = make_config(fixture, output_dir, do_train=True, do_eval=True,
                         do_predict=True, train_file=train_file,
                         eval_file=dev_file, predict_file=dev_file)
    task = TaggingTask(config)
    results = task.run()
    assert results["train"]["global_step"] == int(
        len(task.features["train"]) / 8)

    # label_list.txt: the IOB2 labels of the training file's types.
    train_docs = read_tagged_file(train_file, "conll", "iob2")
    labels = scheme_labels(entity_types(
        [w.tag for d in train_docs for w in d.words]), "iob2")
    assert (output_dir / "label_list.txt").read_text().split("\n")[:-1] \
        == labels

    # predictions.txt: every dev token, in order, with one tag.
    dev_docs = read_tagged_file(dev_file, "conll", "iob2")
    written = read_predictions(output_dir / "predictions.txt")
    assert [[token for token, _ in s] for s in written] == [
        s.tokens for d in dev_docs for s in d.sentences]

    # eval_results: the metric on eval_predictions.txt against the gold.
    predicted = read_predictions(output_dir / "eval_predictions.txt")
    assert predicted == written
    scores = conll_scores([s.tags for d in dev_docs for s in d.sentences],
                          [[tag for _, tag in s] for s in predicted])
    evaluation = results["eval"]
    expected = {"eval_f1": scores.overall.f1,
                "eval_precision": scores.overall.precision,
                "eval_recall": scores.overall.recall,
                "eval_accuracy": scores.accuracy}
    expected.update((f"eval_f1_{name}", counts.f1)
                    for name, counts in scores.per_type.items())
    assert set(evaluation) == set(expected) | {"eval_loss", "global_step"}
    for key, value in expected.items():
        assert evaluation[key] == pytest.approx(value, abs=1e-12), key
    assert evaluation["global_step"] == results["train"]["global_step"]

    # eval_loss: a fresh model from the written checkpoint, by hand.
    bert_config = BertConfig.from_json_file(fixture / "bert_config.json")
    model = BertTokenClassifier(bert_config, len(labels))
    checkpoints.load_tf1_checkpoint(model, str(output_dir), verbose=False)
    dataset = tagging_dataset(str(output_dir / "eval.tf_record"), 32, False, 5)
    logits = model.predict(dataset.map(lambda x, y: x), verbose=0)
    label_ids = np.concatenate([y for _, y in dataset.as_numpy_iterator()])
    weights = np.concatenate([x["label_weights"]
                              for x, _ in dataset.as_numpy_iterator()])
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, label_ids[..., None], -1)[..., 0]
    assert evaluation["eval_loss"] == pytest.approx(
        (nll * weights).sum() / weights.sum(), rel=1e-5)
    assert weights.sum() == sum(d.num_words for d in dev_docs)
    written_results = dict(
        line.split(" = ") for line in
        (output_dir / "eval_results.txt").read_text().splitlines())
    assert float(written_results["eval_f1"]) == pytest.approx(
        evaluation["eval_f1"], abs=1e-7)

    # A predict-only run reads label_list.txt and the fine-tuned weights.
    before = (output_dir / "predictions.txt").read_text()
    (output_dir / "predictions.txt").unlink()
    again = TaggingTask(make_config(fixture, output_dir, init_checkpoint=None,
                                    do_predict=True, predict_file=dev_file))
    again.run()
    assert again.label_list == labels
    assert (output_dir / "predictions.txt").read_text() == before


@pytest.mark.slow  # trains twice: ~30-60 s
def test_rerun_resumes(fixture, wnut, tmp_path):
    train_file, _ = wnut
    output_dir = tmp_path / "out"
    first = TaggingTask(make_config(fixture, output_dir, do_train=True,
                                    train_file=train_file))
    steps = first.run()["train"]["global_step"]
    again = TaggingTask(make_config(fixture, output_dir, do_train=True,
                                    train_file=train_file,
                                    num_train_epochs=2.0))
    # The original's count over the windows: int(windows / batch * epochs).
    windows = len(first.features["train"])
    assert steps == int(windows / first.config.train_batch_size)
    assert again.run()["train"]["global_step"] == int(
        windows / first.config.train_batch_size * 2.0) > steps
    assert again.checkpoint.source == "output_dir"


# ----- the feature-based tagger ----------------------------------------------

@pytest.mark.parametrize("feature_layers,given,expected", [
    (None, None, "fine-tuning"), ("concat_last_four", None, "feature"),
    ("concat_last_four", 3e-4, 3e-4), (None, 3e-4, 3e-4)])
def test_learning_rate_default_depends_on_the_tagger(fixture, tmp_path,
                                                     feature_layers, given,
                                                     expected):
    from bert_tf1.tasks import tagging

    expected = {"fine-tuning": tagging.FINE_TUNING_LEARNING_RATE,
                "feature": tagging.FEATURE_BASED_LEARNING_RATE}.get(
                    expected, expected)
    config = make_config(fixture, tmp_path / "out", do_train=True,
                         feature_layers=feature_layers, learning_rate=given)
    assert TaggingTask(config).config.learning_rate == expected
    assert tagging.FEATURE_BASED_LEARNING_RATE != \
        tagging.FINE_TUNING_LEARNING_RATE


def test_run_ner_leaves_the_learning_rate_default_to_the_task():
    # In another process: importing a script module defines its flags
    # globally. A fork of the warm script server (`python -c`) is one; the
    # flag default does not depend on a fresh interpreter.
    from tests.conftest import REPO_ROOT
    from tests.helpers.script_runner import shared_server

    code = ("import bert_tf1.run_ner; from absl import flags; "
            "print(repr(flags.FLAGS['learning_rate'].default))")
    result = shared_server().run(
        ["-c", code], REPO_ROOT, dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "None"


@pytest.mark.slow  # trains twice: ~1-2 min
def test_feature_cache_is_computed_once_and_reused(fixture, wnut, tmp_path,
                                                   monkeypatch):
    from bert_tf1.modeling import BertModel

    train_file, dev_file = wnut
    output_dir = tmp_path / "out"
    fields = dict(do_train=True, train_file=train_file, feature_layers="last",
                  lstm_units=4, num_train_epochs=2.0)
    task = TaggingTask(make_config(fixture, output_dir, **fields))
    encoder_calls = []
    original_call = BertModel.call
    monkeypatch.setattr(BertModel, "call", lambda self, *args, **kwargs: (
        encoder_calls.append(1), original_call(self, *args, **kwargs))[1])
    specs, calls_during_fit, batch_sizes = [], [], []
    original_train_model = task.train_model

    def spy(dataset, *args, **kwargs):
        specs.append(dataset.element_spec)
        batch_sizes.append([int(batch[0]["features"].shape[0])
                            for batch in dataset.take(3)])
        before = len(encoder_calls)
        result = original_train_model(dataset, *args, **kwargs)
        calls_during_fit.append(len(encoder_calls) - before)
        return result

    task.train_model = spy
    steps = task.run()["train"]["global_step"]
    windows = len(task.features["train"])
    assert steps == int(windows / 8 * 2)
    # The encoder ran once over the windows (batches of the largest batch
    # size, 8), for both epochs; fit itself never called it.
    assert task.feature_cache.encoder_batches == math.ceil(windows / 8)
    assert calls_during_fit == [0]
    inputs = specs[0][0]
    assert set(inputs) == {"features", "input_mask", "label_weights"}
    # Width 32 (the hidden size), lengths bucketed; the batch dimension is
    # not static after bucket_by_sequence_length, but every batch holds 8.
    assert inputs["features"].shape.as_list()[1:] == [None, 32]
    assert batch_sizes[0] == [8, 8, 8]
    (cache,) = [p for p in os.listdir(output_dir)
                if p.startswith("train_features.")]
    stamp = os.stat(output_dir / cache).st_mtime_ns

    # A rerun (resume to 4 epochs) and an evaluation: the training cache is
    # read again, only the eval windows meet the encoder.
    again = TaggingTask(make_config(fixture, output_dir, eval_file=dev_file,
                                    do_eval=True,
                                    **dict(fields, num_train_epochs=4.0)))
    results = again.run()
    assert results["train"]["global_step"] == 2 * steps
    assert os.stat(output_dir / cache).st_mtime_ns == stamp
    assert again.feature_cache.encoder_batches == math.ceil(
        len(again.features["eval"]) / 8)
    assert 0 <= results["eval"]["eval_f1"] <= 1

    # The cached path gives what the model computes from token ids.
    from bert_tf1.tasks.tagging_cache import window_arrays

    arrays = window_arrays(again.features["eval"])
    end_to_end = np.asarray(again.model(
        {key: arrays[key] for key in ("input_ids", "input_mask",
                                      "segment_ids")}, training=False))
    logits, _, _, num_actual = again.predict_logits("eval", 5)
    cached = logits[:num_actual]
    mask = arrays["input_mask"].astype(bool)
    np.testing.assert_allclose(cached[mask], end_to_end[mask], atol=1e-5)


