"""predict_text.py / extract_features.py with --runner=DirectRunner: the
same numbers as the one-process scripts, every line exactly once, and a
killed run resumed to the same output (bert_tf1/serving/batch_inference.py,
bert_tf1/tasks/batch_inference.py, bert_tf1/data/io/shard_folder.py).

Ground truth: the one-process paths (PredictTextTask without --runner, whose
classifier numbers tests/tasks/test_predict_text.py checks against the
original's run_classifier.py; FeatureExtractionTask's .npy). Inputs: the
first SST-2 train sentences and MRPC pairs, a few hundred to a thousand per
run, in shards of 250 lines (the properties checked do not depend on the
count: every run still has several shards and a last shard shorter than the
others). Two runs use 2 worker processes (the predict_text run and the
killed script); the others run DirectRunner in the test's process, since
each worker process loads TensorFlow and the model again (~10 CPU seconds)
and the shards they write are the same. The real-model runs:
test_batch_inference_real_model.py.
"""
import json
import os
import signal
import sys
import time

import numpy as np
import pytest

pytest.importorskip(
    "apache_beam", reason="--runner needs the [beam] extra (pip install -e '.[beam]'; run_tests.sh installs it)")

from bert_tf1.serving import export_saved_model  # noqa: E402
from bert_tf1.serving.batch_inference import read_embeddings  # noqa: E402
from bert_tf1.data.io.shard_folder import (PLAN_FILE, SUCCESS_FILE,  # noqa: E402
                                           ShardFolder)
from bert_tf1.tasks.feature_extraction import (FeatureExtractionConfig,  # noqa: E402
                                      FeatureExtractionTask)
from bert_tf1.tasks.predict_text import (PredictTextConfig,  # noqa: E402
                                PredictTextTask)
from tests.conftest import FIXTURES_DIR, REPO_ROOT  # noqa: E402
from tests.helpers.script_runner import start_process  # noqa: E402
from tests.serving.beam_inputs import (beam_options, mrpc_pairs,  # noqa: E402
                                       sst2_sentences, write_lines)

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"
MODEL = dict(bert_config_file=str(MRPC / "bert_config.json"),
             vocab_file=str(MRPC / "vocab.txt"))


@pytest.fixture(scope="module")
def classifier_export(tmp_path_factory):
    return export_saved_model(
        tmp_path_factory.mktemp("export") / "mrpc", model_type="classifier",
        label_list=["0", "1"], init_checkpoint=str(MRPC), max_seq_length=128,
        **MODEL)


def _json_shards(output_dir):
    names = sorted(n for n in os.listdir(output_dir) if n.endswith(".jsonl"))
    return [json.loads(line) for name in names
            for line in open(os.path.join(output_dir, name), encoding="utf-8")]


def _by_key(results):
    keys = [(r["file"], r["line"]) for r in results]
    assert len(set(keys)) == len(keys), "a key written twice"
    return dict(zip(keys, results))


def _assert_same_predictions(local, beamed, path):
    """`local`: predict_text's lines of `path`; `beamed`: {key: line}."""
    assert set(beamed) >= {(path, r["line"]) for r in local}
    for result in local:
        other = beamed[(path, result["line"])]
        assert other["label"] == result["label"]
        assert {k: v for k, v in other.items() if k not in (
            "file", "probabilities")} == {k: v for k, v in result.items()
                                          if k != "probabilities"}
        np.testing.assert_allclose(
            [other["probabilities"][k] for k in ("0", "1")],
            [result["probabilities"][k] for k in ("0", "1")], rtol=0,
            atol=1e-6)


@pytest.mark.slow
def test_predict_text_on_beam_equals_one_process(classifier_export, data_dir,
                                                 tmp_path):
    sentences = write_lines(tmp_path / "sst2.txt", sst2_sentences(data_dir))
    pairs = write_lines(tmp_path / "mrpc.txt",
                        ["\t".join(p) for p in mrpc_pairs(data_dir, 600)])
    total = PredictTextTask(PredictTextConfig(
        export_dir=classifier_export, input_file=str(tmp_path / "*.txt"),
        batch=beam_options(tmp_path / "out", num_workers=2))).run()
    assert total == 1000 + 600
    beamed = _by_key(_json_shards(tmp_path / "out"))
    assert len(beamed) == total
    for path in (sentences, pairs):
        local = PredictTextTask(PredictTextConfig(
            export_dir=classifier_export, input_file=path,
            output_file=str(tmp_path / "local.jsonl"))).run()
        os.remove(tmp_path / "local.jsonl")
        _assert_same_predictions(local, beamed, path)
    # 250-line shards: 4 of SST-2's 1,000 lines, 3 of MRPC's 600 (the last
    # one 100 lines).
    assert json.loads((tmp_path / "out" / SUCCESS_FILE).read_text()) == {
        "examples": total, "shards": 7}


def _extract(input_file, **changes):
    return FeatureExtractionConfig(
        input_file=input_file, init_checkpoint=str(MRPC / "bert_model.ckpt"),
        pooling="mean", max_seq_length=128, **MODEL, **changes)


@pytest.mark.slow
def test_extract_features_on_beam_equals_one_process(data_dir, tmp_path):
    lines = sst2_sentences(data_dir) + [
        f"{a} ||| {b}" for a, b in mrpc_pairs(data_dir, 100)]
    path = write_lines(tmp_path / "in.txt", lines)
    FeatureExtractionTask(_extract(
        path, batch=beam_options(tmp_path / "out"))).run()
    FeatureExtractionTask(_extract(
        path, output_file=str(tmp_path / "local.npy"))).run()
    files, numbers, vectors = read_embeddings(str(tmp_path / "out"))
    assert set(files) == {path}
    assert sorted(numbers) == list(range(1, len(lines) + 1))  # each once
    local = np.load(tmp_path / "local.npy")
    assert vectors.shape == local.shape == (len(lines), 32)
    np.testing.assert_allclose(vectors, local[numbers - 1], rtol=0, atol=1e-6)


def _start_script(argv, log):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=str(REPO_ROOT))
    return start_process([str(REPO_ROOT / "predict_text.py")] + argv, env,
                         log, log)


@pytest.mark.slow
def test_killed_run_resumes_to_the_uninterrupted_output(classifier_export,
                                                        data_dir, tmp_path):
    path = write_lines(tmp_path / "sst2.txt", sst2_sentences(data_dir, 1500))
    killed = tmp_path / "killed"
    argv = [f"--export_dir={classifier_export}", f"--input_file={path}",
            "--runner=DirectRunner", "--num_workers=2",
            "--lines_per_shard=50", f"--output_dir={killed}"]
    with open(tmp_path / "log.txt", "wb") as log:
        process = _start_script(argv, log)
        deadline = time.monotonic() + 600
        # Killed once the first shard is being written (30 shards): the plan
        # is there (it is written through .bert-tmp/ too, so .bert-tmp/
        # alone may be the plan's).
        while not (killed / PLAN_FILE).exists() or (
                not (killed / ".bert-tmp").exists()
                and not any(killed.glob("part-*"))):
            assert process.poll() is None and time.monotonic() < deadline, (
                tmp_path / "log.txt").read_text(errors="replace")[-3000:]
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert not (killed / SUCCESS_FILE).exists()
    assert (killed / PLAN_FILE).exists()
    parts = sorted(killed.glob("part-*.jsonl"))
    assert len(parts) < 30
    print("killed with %d of 30 shards written" % len(parts))
    for part in parts:   # a shard there is a whole shard
        assert len(part.read_text(encoding="utf-8").splitlines()) == 50
    # The rerun resumes: the same set as a run never killed (both in this
    # process: the killed run's 2 worker processes wrote the shards kept).
    PredictTextTask(PredictTextConfig(
        export_dir=classifier_export, input_file=path,
        batch=beam_options(killed, lines_per_shard=50))).run()
    PredictTextTask(PredictTextConfig(
        export_dir=classifier_export, input_file=path,
        batch=beam_options(tmp_path / "whole", lines_per_shard=50))).run()
    resumed, whole = (_by_key(_json_shards(tmp_path / name))
                      for name in ("killed", "whole"))
    assert len(resumed) == len(whole) == 1500
    assert sorted(resumed) == sorted(whole)
    for key, result in whole.items():
        assert resumed[key]["label"] == result["label"]
        np.testing.assert_allclose(list(resumed[key]["probabilities"].values()),
                                   list(result["probabilities"].values()),
                                   rtol=0, atol=1e-6)
    assert sorted(os.listdir(killed)) == sorted(os.listdir(tmp_path / "whole"))


def test_beam_not_installed_is_one_user_error(monkeypatch, tmp_path):
    from bert_tf1.tasks.errors import UserError

    path = write_lines(tmp_path / "in.txt", ["a line"])
    monkeypatch.setitem(sys.modules, "apache_beam", None)  # import fails
    with pytest.raises(UserError, match="--runner=DirectRunner needs Apache "
                       "Beam, which is not installed"):
        FeatureExtractionTask(_extract(path, batch=beam_options(
            tmp_path / "out"))).run()
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]   # nothing written


def test_finished_or_foreign_output_dir_is_refused(tmp_path):
    from bert_tf1.serving.batch_inference import ModelSpec
    from bert_tf1.tasks.batch_inference import plan_shards
    from bert_tf1.tasks.errors import UserError

    path = write_lines(tmp_path / "in.txt", ["a", "", "b", "c"])
    shards = plan_shards([path], beam_options(tmp_path, lines_per_shard=2),
                         lambda _, __, line: (line,) if line else None)
    assert [(s.text_range.first_line, s.examples) for s in shards] == [
        (1, 1), (3, 2)]
    blank = write_lines(tmp_path / "blank.txt", ["a", "", "", "", "b"])
    assert [(s.index, s.num_shards, s.text_range.first_line, s.examples)
            for s in plan_shards([blank], beam_options(tmp_path, lines_per_shard=2),
                                 lambda _, __, line: (line,) if line else None)
            ] == [(0, 2, 1, 1), (1, 2, 5, 1)]   # lines 3-4: no shard
    spec = ModelSpec(model_type="classifier", export_dir="x")
    out = tmp_path / "out"
    out.mkdir()
    folder = ShardFolder(str(out), tuple(shards), spec, spec.suffix)
    assert folder.shards_to_run() == shards   # empty: all
    (out / "mine.txt").write_text("a user's file")
    with pytest.raises(UserError, match="holds no _PLAN.json"):
        folder.shards_to_run()
    (out / SUCCESS_FILE).write_text("{}")
    with pytest.raises(UserError, match="finished run"):
        folder.shards_to_run()
    assert sorted(os.listdir(out)) == [SUCCESS_FILE, "mine.txt"]


def test_worker_requirements_name_setup_pins():
    setup = (REPO_ROOT / "setup.py").read_text()
    wanted = (REPO_ROOT / "bert_tf1/serving/worker_requirements.txt").read_text()
    lines = [line for line in wanted.splitlines()
             if line and not line.startswith("#")]
    for package in ("tensorflow", "tensorflow-text", "keras", "apache-beam",
                    "google-apitools"):
        pins = [line for line in lines if line.split(">")[0] == package]
        assert len(pins) == 1, package
        assert f'"{pins[0]}"' in setup, pins[0]   # setup.py's exact pin


def test_batches_end_with_their_shard_and_bound_tokens():
    """What lets WriteShard write a shard without a shuffle: no batch
    mixes shards, and a shard's batches all come before the next's."""
    from bert_tf1.serving.batch_inference import Row, TokenBoundedBatches

    lengths = [3, 17, 9, 30, 4, 12, 25, 7, 16, 2]
    rows = [Row(shard, "f", line, ("x",), ids=(1,) * n, segment_ids=(0,) * n)
            for shard in (0, 1, 2) for line, n in enumerate(lengths, 1)]
    batcher = TokenBoundedBatches(max_tokens=48, fixed_length=128)
    batcher.start_bundle()
    batches = [b for row in rows for b in batcher.process(row)]
    batches += [value.value for value in batcher.finish_bundle()]
    assert sorted((r.shard, r.line) for b in batches for r in b) == sorted(
        (r.shard, r.line) for r in rows)
    shards = [{row.shard for row in batch} for batch in batches]
    assert all(len(s) == 1 for s in shards)
    order = [s.pop() for s in shards]
    assert order == sorted(order)   # shard 0's batches, then 1's, then 2's
    for batch in batches:   # lengths rounded up to 8: rows x bucket <= 48
        bucket = max(-(-len(row.ids) // 8) * 8 for row in batch)
        assert len(batch) * bucket <= 48 or len(batch) == 1


@pytest.mark.slow
def test_a_versioned_export_runs_on_beam_without_length_or_casing(data_dir,
                                                                 tmp_path):
    """A --serving_version export (TF Serving's `N/` layout) runs on Beam
    as it is, with max_seq_length and casing from its export_info.json: the
    same lines as plain predict_text.py over the same folder, for the
    raw-text SavedModel (ids path) and the numeric one (text path)."""
    export = export_saved_model(
        tmp_path / "export", formats=["saved_model", "numeric"],
        serving_version=3, model_type="classifier", label_list=["0", "1"],
        init_checkpoint=str(MRPC), max_seq_length=64, **MODEL)
    assert (tmp_path / "export" / "saved_model" / "3" / "saved_model.pb"
            ).is_file()
    lines = write_lines(tmp_path / "mrpc.txt", [
        "\t".join(pair) for pair in mrpc_pairs(data_dir)[:200]])
    for name in ("saved_model", "numeric"):
        folder = os.path.join(export, name)
        total = PredictTextTask(PredictTextConfig(
            export_dir=folder, input_file=lines,
            batch=beam_options(tmp_path / f"out_{name}", lines_per_shard=100))).run()
        assert total == 200
        local = PredictTextTask(PredictTextConfig(
            export_dir=folder, input_file=lines,
            output_file=str(tmp_path / f"local_{name}.jsonl"))).run()
        _assert_same_predictions(local, _by_key(_json_shards(
            tmp_path / f"out_{name}")), lines)


def test_tfrecord_input_is_counted_and_checked(tmp_path):
    """The driver counts a TFRecord input's records (the plan), each one's
    --text_feature read as UTF-8 text; bad ones are the bad-input table's."""
    from bert_tf1.tasks.batch_inference import _count_records
    from bert_tf1.tasks.errors import UserError
    from tests.helpers.bad_input_cases.batch_inference import _records

    path = _records(tmp_path / "in.tfrecord", [b"one", "tw\xf6".encode(), b"3"])
    assert _count_records(str(path), ["text"]) == 3
    with pytest.raises(UserError, match=r"record 1: no string feature 'b'"):
        _count_records(str(path), ["text", "b"])
