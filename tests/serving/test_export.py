"""export_saved_model.py and serving: SavedModels serving raw text.

The exports are loaded in a fresh Python process (as a server would) and must
give the original's numbers: MRPC probabilities of `run_classifier.py
--do_predict` (the fixture's test_results.tsv), SQuAD logits of
`run_squad.py` (raw_logits.npz) and its answers, encoder outputs of the
original `BertModel` (reference_outputs.npz).
"""
import atexit
import csv
import json
import os
import pathlib
import subprocess
import sys
import threading
import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.serving import build_serving_module, export_saved_model
from bert_tf1.serving.squad import best_spans
from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import run_script

TOLERANCE = 1e-5
# saved_model_cli with the TF Text ops loaded (a bare `saved_model_cli run`
# fails on these exports: the tokenizer's ops are not registered).
SAVED_MODEL_CLI_WITH_TF_TEXT = (
    "import sys, tensorflow_text; "
    "from tensorflow.python.tools.saved_model_cli import main; "
    "sys.argv[0] = 'saved_model_cli'; sys.exit(main())")

# Runs in its own interpreter, which imports only TensorFlow and TF Text
# (never this project): one JSON request per line (export_dir, signature,
# inputs.npz, outputs.npz), each signature's outputs written to outputs.npz,
# then "ok" or the error on stdout. One such process serves every call of a
# test process (each SavedModel is loaded once): no TensorFlow import per call.
_LOADER = """
import json, sys, traceback
import numpy as np, tensorflow as tf, tensorflow_text  # noqa
loaded = {}
for line in sys.stdin:
    request = json.loads(line)
    try:
        export_dir = request["export_dir"]
        if export_dir not in loaded:
            loaded[export_dir] = tf.saved_model.load(export_dir)
        function = loaded[export_dir].signatures[request["signature"]]
        inputs = {k: tf.constant(v) for k, v in np.load(request["inputs"]).items()}
        outputs = {k: v.numpy() for k, v in function(**inputs).items()}
        np.savez(request["outputs"], **{
            k: v.astype(bytes) if v.dtype == object else v
            for k, v in outputs.items()})
        answer = "ok"
    except Exception:
        answer = json.dumps(traceback.format_exc())
    print(answer, flush=True)
"""
_loader = None
_loader_lock = threading.Lock()


def _loader_process():
    global _loader
    if _loader is None or _loader.poll() is not None:
        _loader = subprocess.Popen(
            [sys.executable, "-c", _LOADER], cwd=REPO_ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # errors come back as tracebacks
            env={"TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "",
                 "PATH": "/usr/bin:/bin",
                 # The same CPU kernels as this process (tests/conftest.py).
                 "TF_ENABLE_ONEDNN_OPTS": os.environ["TF_ENABLE_ONEDNN_OPTS"]})
        atexit.register(_loader.kill)
    return _loader


def run_signature(export_dir, signature, tmp_path, **inputs):
    """Outputs of `signature`, computed by another process that loads the
    SavedModel with TensorFlow alone."""
    inputs_path = tmp_path / f"{signature}_inputs.npz"
    outputs_path = tmp_path / f"{signature}_outputs.npz"
    np.savez(inputs_path, **{k: np.asarray(v) for k, v in inputs.items()})
    request = {"export_dir": str(export_dir), "signature": signature,
               "inputs": str(inputs_path), "outputs": str(outputs_path)}
    with _loader_lock:
        loader = _loader_process()
        loader.stdin.write(json.dumps(request) + "\n")
        loader.stdin.flush()
        answer = loader.stdout.readline().strip()
    assert answer == "ok", json.loads(answer) if answer else "the loader died"
    return dict(np.load(outputs_path))


def mrpc_rows(fixture):
    with open(fixture / "mrpc_test64.tsv", encoding="utf-8") as reader:
        return list(csv.reader(reader, delimiter="\t", quotechar=None))[1:]


def fixture_args(fixture, **extra):
    return dict(bert_config_file=str(fixture / "bert_config.json"),
                vocab_file=str(fixture / "vocab.txt"),
                init_checkpoint=str(fixture), **extra)


def fake_training_output_dir(fixture, output_dir):
    """An output_dir as run_classifier.py leaves it: an older model.ckpt-1
    (other weights) and the newest, model.ckpt-7, holding the fixture's."""
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints

    model = BertClassifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), 2)
    checkpoints.save_tf1_checkpoint(model, output_dir / "model.ckpt-1",
                                    global_step=1)
    checkpoints.load_tf1_checkpoint(model, fixture, verbose=False)
    newest = checkpoints.save_tf1_checkpoint(model, output_dir / "model.ckpt-7",
                                             global_step=7)
    tf.compat.v1.train.update_checkpoint_state(
        str(output_dir), newest,
        all_model_checkpoint_paths=[str(output_dir / "model.ckpt-1"), newest])
    return output_dir


@pytest.mark.slow
def test_classifier_export_matches_run_classifier_predictions(fixtures_dir,
                                                              tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    output_dir = fake_training_output_dir(fixture, tmp_path / "mrpc_output")
    export_dir = tmp_path / "mrpc_export"
    args = fixture_args(fixture, task_name="MRPC", do_lower_case=True,
                        max_seq_length=128, export_dir=str(export_dir))
    args["init_checkpoint"] = str(output_dir)
    run_script("export_saved_model.py", args)

    rows = mrpc_rows(fixture)
    expected = np.loadtxt(fixture / "mrpc_test64_test_results.tsv",
                          delimiter="\t", dtype=np.float32)
    outputs = run_signature(export_dir, "classify_pair", tmp_path,
                            text_a=[row[3] for row in rows],
                            text_b=[row[4] for row in rows])
    assert outputs["probabilities"].shape == expected.shape
    np.testing.assert_allclose(outputs["probabilities"], expected, rtol=0,
                               atol=TOLERANCE)
    np.testing.assert_array_equal(outputs["label_id"], expected.argmax(-1))
    np.testing.assert_array_equal(
        outputs["label"], np.array([b"0", b"1"])[expected.argmax(-1)])

    # The same examples through the ids signature, packed in Python as
    # run_classifier.py packs them.
    from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
    from bert_tf1.data.tokenization.packing import pack_tokens
    tokenizer = FullTokenizer(str(fixture / "vocab.txt"), do_lower_case=True)
    packed = [pack_tokens(tokenizer.tokenize(row[3]), tokenizer.tokenize(row[4]),
                          128, tokenizer) for row in rows]
    ids_outputs = run_signature(
        export_dir, "classify_ids", tmp_path,
        **{key: np.array([getattr(p, key) for p in packed], np.int32)
           for key in ("input_ids", "input_mask", "segment_ids")})
    np.testing.assert_allclose(ids_outputs["probabilities"], expected, rtol=0,
                               atol=TOLERANCE)

    # An existing export is never replaced: one line, exit status 1.
    again = run_script("export_saved_model.py", args, check=False)
    assert again.returncode == 1
    assert "already exists" in again.stderr.strip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()
                  if ".tmp-" in p.name or p.name == ".bert-tmp") == []

    listing = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / "saved_model_cli"), "show", "--all",
         "--dir", str(export_dir)], capture_output=True, text=True,
        timeout=300)
    for name in ("serving_default", "classify_text", "classify_pair",
                 "classify_ids"):
        assert f"signature_def['{name}']" in listing.stdout

    # `saved_model_cli run` with the TF Text ops registered first (the
    # README's one-liner): its TF1-graph loader finds every variable.
    process = subprocess.run(
        [sys.executable, "-c", SAVED_MODEL_CLI_WITH_TF_TEXT, "run",
         "--dir", str(export_dir), "--tag_set", "serve",
         "--signature_def", "classify_pair",
         "--input_exprs", f"text_a={[rows[0][3]]!r};text_b={[rows[0][4]]!r}"],
        capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "",
             "TF_CPP_MIN_LOG_LEVEL": "2"})
    assert process.returncode == 0, process.stderr[-3000:]
    printed = process.stdout.split("Result for output key probabilities:")[1]
    values = np.array(printed.split("[[")[1].split("]]")[0].split(), float)
    np.testing.assert_allclose(values, expected[0], rtol=0, atol=1e-5)


@pytest.mark.slow
def test_int8_classifier_export_close_to_run_classifier_predictions(
        fixtures_dir, tmp_path):
    # Loaded by TensorFlow alone: the int8 Dense layers and their XLA
    # function need nothing of this project nor oneDNN settings.
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    export_dir = export_saved_model(
        tmp_path / "mrpc_int8", model_type="classifier", num_labels=2,
        do_lower_case=True, max_seq_length=128, quantize="int8",
        **fixture_args(fixture))
    rows = mrpc_rows(fixture)
    expected = np.loadtxt(fixture / "mrpc_test64_test_results.tsv",
                          delimiter="\t", dtype=np.float32)
    outputs = run_signature(export_dir, "classify_pair", tmp_path,
                            text_a=[row[3] for row in rows],
                            text_b=[row[4] for row in rows])
    error = np.abs(outputs["probabilities"] - expected).max()
    assert 0 < error < 0.02, error
    confident = np.abs(expected[:, 1] - 0.5) > 0.05
    np.testing.assert_array_equal(outputs["label_id"][confident],
                                  expected.argmax(-1)[confident])


def _fold(text):
    """Lower-case, accents and spaces removed: compares the in-graph
    `tok_text` answer with the original's `get_final_text` answer."""
    text = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in text if not c.isspace()
                   and unicodedata.category(c) != "Mn")


@pytest.mark.slow
def test_squad_export_matches_run_squad(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_squad"
    sample = fixture / "squad_v1_sample"  # max_seq_length 384: one window each
    export_dir = export_saved_model(
        tmp_path / "squad_export", model_type="squad", do_lower_case=True,
        max_seq_length=384, **fixture_args(fixture))
    data = json.loads((sample / "input.json").read_text())["data"]
    questions = [(qa["id"], qa["question"], paragraph["context"])
                 for article in data for paragraph in article["paragraphs"]
                 for qa in paragraph["qas"]]
    inputs = dict(question=[q[1] for q in questions],
                  context=[q[2] for q in questions])

    raw = np.load(sample / "raw_logits.npz")
    assert len(raw["unique_ids"]) == len(questions)
    logits = run_signature(export_dir, "squad", tmp_path, **inputs)
    for key in ("start_logits", "end_logits"):
        np.testing.assert_allclose(logits[key], raw[key], rtol=0,
                                   atol=TOLERANCE)

    answers = run_signature(export_dir, "squad_answer", tmp_path, **inputs)
    predictions = json.loads((sample / "predictions.json").read_text())
    for (qid, _, _), text in zip(questions, answers["answer_text"]):
        original = predictions[qid]
        expected = "" if original == "empty" else _fold(original)
        assert _fold(text.decode("utf-8")) == expected, qid


@pytest.mark.slow
def test_squad_export_serves_the_first_window(fixtures_dir, tmp_path):
    """max_seq_length 128: long contexts are cut where run_squad.py's first
    window (doc_stride 48) ends."""
    from bert_tf1.data.squad.examples import read_squad_examples
    from bert_tf1.data.squad.features import convert_examples_to_features
    from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer

    fixture = fixtures_dir / "tf1_vocab_squad"
    windows = fixture / "squad_v1_windows"
    examples = read_squad_examples(str(windows / "input.json"), is_training=False)
    features = []
    convert_examples_to_features(
        examples, FullTokenizer(str(fixture / "vocab.txt"), do_lower_case=True),
        max_seq_length=128, doc_stride=48, max_query_length=64,
        is_training=False, output_fn=features.append)
    raw = np.load(windows / "raw_logits.npz")
    row_of = {unique_id: row for row, unique_id in enumerate(raw["unique_ids"])}
    first_window = {}
    for feature in features:
        first_window.setdefault(feature.example_index, row_of[feature.unique_id])
    assert len(features) > len(examples)  # some contexts need several windows

    export_dir = export_saved_model(
        tmp_path / "squad128", model_type="squad", max_seq_length=128,
        **fixture_args(fixture))
    data = json.loads((windows / "input.json").read_text())["data"]
    contexts = [paragraph["context"] for article in data
                for paragraph in article["paragraphs"] for _ in paragraph["qas"]]
    assert len(contexts) == len(examples)
    outputs = run_signature(
        export_dir, "squad", tmp_path,
        question=[example.question_text for example in examples],
        context=contexts)
    rows = [first_window[index] for index in range(len(examples))]
    for key in ("start_logits", "end_logits"):
        np.testing.assert_allclose(outputs[key], raw[key][rows], rtol=0,
                                   atol=TOLERANCE)


@pytest.mark.slow
def test_encoder_export_matches_original_encoder(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    export_dir = export_saved_model(
        tmp_path / "encoder_export", model_type="encoder", do_lower_case=True,
        max_seq_length=24, **fixture_args(fixture))
    reference = np.load(fixture / "reference_outputs.npz")
    outputs = run_signature(
        export_dir, "encode_ids", tmp_path,
        **{key: reference[key] for key in ("input_ids", "input_mask",
                                           "segment_ids")})
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(outputs[key], reference[key], rtol=0,
                                   atol=TOLERANCE)
    # Text in: the packed ids are the Python tokenizer's.
    texts = run_signature(export_dir, "encode_text", tmp_path,
                          text=["Hello, World!", ""])
    assert texts["sequence_output"].shape == (2, 24, 32)
    np.testing.assert_array_equal(texts["input_ids"][0, :6],
                                  [101, 7592, 1010, 2088, 999, 102])
    np.testing.assert_array_equal(texts["input_mask"].sum(1), [6, 2])


def test_export_refuses_existing_directory(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="already exists"):
        export_saved_model(tmp_path / "taken", model_type="encoder")


def test_export_refuses_checkpoint_without_the_head(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    with pytest.raises(ValueError, match="cls/squad/output_weights"):
        export_saved_model(tmp_path / "squad", model_type="squad",
                           **fixture_args(fixture))
    assert not (tmp_path / "squad").exists()


def test_squad_export_needs_room_for_the_question(fixtures_dir):
    fixture = fixtures_dir / "tf1_vocab_squad"
    with pytest.raises(ValueError, match=r"max_query_length \(64\) \+ 3"):
        build_serving_module("squad", max_seq_length=67, **fixture_args(fixture))


def test_classifier_export_needs_labels(fixtures_dir):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    with pytest.raises(ValueError, match="label_list or num_labels"):
        build_serving_module("classifier", **fixture_args(fixture))


def _brute_force_span(start, end, context, max_answer_length, n_best_size):
    """The original's write_predictions loop for one window."""
    top_start = sorted(range(len(start)), key=lambda i: -start[i])[:n_best_size]
    top_end = sorted(range(len(end)), key=lambda i: -end[i])[:n_best_size]
    best = None
    for i in top_start:
        for j in top_end:
            if not (context[i] and context[j]) or j < i:
                continue
            if j - i + 1 > max_answer_length:
                continue
            if best is None or start[i] + end[j] > best[2]:
                best = (i, j, start[i] + end[j])
    return best


def test_best_spans_follow_the_original_rule():
    rng = np.random.default_rng(7)
    batch, seq_length = 16, 40
    start = rng.normal(size=(batch, seq_length)).astype(np.float32)
    end = rng.normal(size=(batch, seq_length)).astype(np.float32)
    context = np.zeros((batch, seq_length), bool)
    for row in range(batch):
        first = rng.integers(2, 20)
        context[row, first:rng.integers(first, seq_length)] = True
    got_start, got_end, score = (t.numpy() for t in best_spans(
        tf.constant(start), tf.constant(end), tf.constant(context),
        max_answer_length=5, n_best_size=6))
    for row in range(batch):
        best = _brute_force_span(start[row], end[row], context[row], 5, 6)
        if best is None:
            assert (got_start[row], got_end[row]) == (0, 0)
            assert score[row] == -np.inf
        else:
            assert (got_start[row], got_end[row]) == best[:2]
            assert score[row] == pytest.approx(best[2])
