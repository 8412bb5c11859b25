"""create_pretraining_data on Apache Beam: the same bytes as the local pool.

Ground truth: the local pool's output files (create_pretraining_files, whose
one-shard output tests/data/pretraining/test_pipeline.py checks against the
original's), and shared/fixtures/pretraining_data (the original script's
records for sample_text.txt, seed 12345). Runs on Beam's local runners:
FnApiRunner (what --runner=DirectRunner selects) and, for retries,
BundleBasedDirectRunner, which retries a failed bundle up to 4 times.
"""
import logging
import os

import pytest

beam = pytest.importorskip(
    "apache_beam", reason="--runner needs the [beam] extra (pip install -e '.[beam]'; run_tests.sh installs it)")

import tensorflow as tf  # noqa: E402

from bert_tf1.data.io import atomic  # noqa: E402
from bert_tf1.data.io.errors import UserError  # noqa: E402
from bert_tf1.data.io.tfrecord import RecordFileWriter  # noqa: E402
from bert_tf1.data.io import beam_runners  # noqa: E402
from bert_tf1.data.pretraining import beam_pipeline  # noqa: E402
from bert_tf1.data.pretraining import shard_build, shard_records  # noqa: E402
from bert_tf1.data.pretraining.corpus import plan_shards  # noqa: E402
from bert_tf1.data.pretraining.pipeline import (PretrainingOptions,  # noqa: E402
                                       create_pretraining_files)
from bert_tf1.tasks.pretraining_data import (  # noqa: E402
    PretrainingDataConfig, PretrainingDataTask)
from tests.conftest import REPO_ROOT  # noqa: E402
from tests.data.pretraining.test_pipeline import run_script  # noqa: E402
from tests.helpers.script_runner import run_code  # noqa: E402

UNCASED_VOCAB = "bert_models/uncased_L-12_H-768_A-12/vocab.txt"
FIXTURE = "pretraining_data/sample_text_seed12345.tfrecord"


def file_bytes(path):
    with open(path, "rb") as reader:
        return reader.read()


def all_files(folder):
    """Every file and folder under `folder`, hidden ones included."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(root, name), folder))
    return sorted(found)


@pytest.fixture
def sample(data_dir):
    return str(data_dir / "pretraining/sample_text.txt")


@pytest.fixture
def vocab(data_dir):
    return str(data_dir / UNCASED_VOCAB)


def run_both(tmp_path, inputs, vocab, num_outputs, runner="DirectRunner",
             before_beam=None, **kwargs):
    """Local pool and Beam on the same arguments; returns both file lists.

    before_beam: optional callable run between the two (to inject faults
    into the Beam run only)."""
    local = [str(tmp_path / "local" / ("out%d.tfrecord" % i))
             for i in range(num_outputs)]
    beamed = [str(tmp_path / "beam" / ("out%d.tfrecord" % i))
              for i in range(num_outputs)]
    local_total = create_pretraining_files(inputs, local, vocab,
                                           show_progress=False, **kwargs)
    if before_beam is not None:
        before_beam()
    beam_total = beam_pipeline.create_pretraining_files_beam(
        inputs, beamed, vocab, runner=runner, **kwargs)
    assert beam_total == local_total
    return local, beamed


# ---- byte-identical output ------------------------------------------------------

def test_one_shard_equals_local_and_original(tmp_path, sample, vocab,
                                             fixtures_dir):
    local, beamed = run_both(tmp_path, [sample], vocab, 2,
                             random_seed=12345)
    for one, two in zip(local, beamed):
        assert file_bytes(one) == file_bytes(two)
    # The original's records (its feature maps in hash order), written with
    # sorted keys, are our bytes; record k is in file k % 2.
    original = [tf.train.Example.FromString(raw).SerializeToString(
        deterministic=True) for raw in shard_records.read_records(
            str(fixtures_dir / FIXTURE))]
    assert len(original) == 118
    assert list(shard_records.read_records(beamed[0])) == original[0::2]
    assert list(shard_records.read_records(beamed[1])) == original[1::2]
    assert all_files(tmp_path / "beam") == ["out0.tfrecord", "out1.tfrecord"]


def test_several_shards_whole_word_mask_equal_local(tmp_path, sample, vocab):
    assert len(plan_shards([sample, sample], 1500)) == 4
    local, beamed = run_both(
        tmp_path, [sample, sample], vocab, 3, random_seed=7,
        shard_size_bytes=1500,
        options=PretrainingOptions(dupe_factor=3, do_whole_word_mask=True))
    for one, two in zip(local, beamed):
        assert file_bytes(one) == file_bytes(two)
        assert file_bytes(one)
    assert all_files(tmp_path / "beam") == [
        "out0.tfrecord", "out1.tfrecord", "out2.tfrecord"]


@pytest.mark.slow
def test_more_shards_than_open_files_equal_local(tmp_path, script_vocab):
    # 70 one-document shards: the merge holds 64 open and queues the rest.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(
        "the cat sat on the mat .\na dog ran .\n%s\n\n"
        % " ".join(["big"] * (i % 5 + 1)) for i in range(70)),
        encoding="utf-8")
    assert len(plan_shards([str(corpus)], 1)) == 70
    local, beamed = run_both(
        tmp_path, [str(corpus)], script_vocab, 2, random_seed=3,
        shard_size_bytes=1,
        options=PretrainingOptions(max_seq_length=16,
                                   max_predictions_per_seq=3, dupe_factor=2))
    for one, two in zip(local, beamed):
        assert file_bytes(one) == file_bytes(two)


def test_empty_corpus_gives_empty_files_as_local(tmp_path, script_vocab):
    corpus = tmp_path / "blank.txt"
    corpus.write_text("\n\n  \n", encoding="utf-8")
    local, beamed = run_both(tmp_path, [str(corpus)], script_vocab, 2)
    for one, two in zip(local, beamed):
        assert file_bytes(one) == file_bytes(two) == b""


# ---- retries and failures --------------------------------------------------------

def crash_once(monkeypatch, module, name, after):
    """Makes the first call of module.name stop after `after` records, as a
    killed worker would: its partial file is not cleaned up."""
    real = getattr(module, name)
    calls = []

    def crashing(records):
        for index, record in enumerate(records):
            if index == after:
                raise IOError("simulated worker crash")
            yield record

    def wrapped(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(args)
        if len(calls) != 1:
            return result
        if name == "build_shard_records":
            result.records = crashing(result.records)
            return result
        return crashing(result)

    monkeypatch.setattr(module, name, wrapped)
    # A killed worker removes nothing.
    monkeypatch.setattr(RecordFileWriter, "_discard", lambda self: None)
    return calls


@pytest.mark.parametrize("stage", ["build", "write"])
def test_retried_bundle_gives_same_output_and_no_stray_files(
        tmp_path, monkeypatch, sample, vocab, stage):
    calls = []

    def inject():
        if stage == "build":
            # Midway through the records of the first shard built.
            calls.append(crash_once(monkeypatch, shard_build,
                                    "build_shard_records", 5))
        else:
            # Midway through writing the first output file.
            calls.append(crash_once(monkeypatch, shard_records,
                                    "output_records", 4))

    local, beamed = run_both(tmp_path, [sample], vocab, 2, random_seed=11,
                             shard_size_bytes=1500,
                             options=PretrainingOptions(dupe_factor=3),
                             runner="BundleBasedDirectRunner",
                             before_beam=inject)
    # The failed attempt, then the retried bundle (2 shards, 2 outputs).
    assert len(calls[0]) >= 3
    for one, two in zip(local, beamed):
        assert file_bytes(one) == file_bytes(two)
    assert all_files(tmp_path / "beam") == ["out0.tfrecord", "out1.tfrecord"]


def test_failed_pipeline_leaves_no_partial_or_stray_file(
        tmp_path, monkeypatch, sample, vocab):
    real = shard_records.output_records

    def failing(*args):
        records = real(*args)
        yield next(records)
        raise IOError("disk full")

    monkeypatch.setattr(shard_records, "output_records", failing)
    out = tmp_path / "out"
    out.mkdir()
    (out / "old1.tfrecord").write_bytes(b"previous run")
    with pytest.raises(Exception, match="disk full"):
        beam_pipeline.create_pretraining_files_beam(
            [sample], [str(out / "old1.tfrecord"), str(out / "new.tfrecord")],
            vocab, options=PretrainingOptions(dupe_factor=2))
    # The earlier file is untouched, no half-written one appears, and the
    # run's work folder is gone.
    assert all_files(out) == ["old1.tfrecord"]
    assert (out / "old1.tfrecord").read_bytes() == b"previous run"


def test_work_folder_of_a_killed_run_is_removed(tmp_path, sample, vocab):
    out = tmp_path / "out.tfrecord"
    # A driver that ends without cleaning up (as after kill -9).
    code = ("import sys; sys.path.insert(0, %r); "
            "from bert_tf1.data.pretraining import beam_pipeline; "
            "print(beam_pipeline.RunFiles.create([%r]).main_dir)"
            % (str(REPO_ROOT), str(out)))
    result = run_code(code)
    assert result.returncode == 0, result.stderr[-3000:]
    killed = result.stdout.strip().splitlines()[-1]
    assert os.path.isdir(os.path.join(killed, "shards"))
    alive = beam_pipeline.RunFiles.create([str(out)])  # this process: kept
    # What check_run does for every output before a Beam run.
    removed = atomic.remove_stale_temp_files(str(out))
    assert killed in removed and not os.path.exists(killed)
    assert os.path.isdir(alive.main_dir)
    alive.remove()
    assert all_files(tmp_path) == []


# ---- bad input: the local path's errors, before the pipeline starts --------------

def errors_of_both(tmp_path, monkeypatch, inputs, vocab, **kwargs):
    local_error = beam_error = None
    try:
        create_pretraining_files(inputs, [str(tmp_path / "l.tfrecord")],
                                 vocab, show_progress=False, **kwargs)
    except Exception as error:  # noqa: BLE001 (compared below)
        local_error = error

    def no_pipeline(*args, **kw):
        raise AssertionError("the pipeline started despite bad input")

    monkeypatch.setattr(beam, "Pipeline", no_pipeline)
    try:
        beam_pipeline.create_pretraining_files_beam(
            inputs, [str(tmp_path / "b.tfrecord")], vocab, **kwargs)
    except Exception as error:  # noqa: BLE001
        beam_error = error
    assert local_error is not None and beam_error is not None
    assert type(beam_error) is type(local_error)
    assert str(beam_error) == str(local_error)
    return str(beam_error)


def test_bad_utf8_gives_the_local_error(tmp_path, monkeypatch, script_vocab):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"the cat\n\nbad \xc3\x28 line\n")
    message = errors_of_both(tmp_path, monkeypatch, [str(corpus)],
                             script_vocab)
    assert message.startswith(str(corpus) + ":3: ")
    assert "UTF-8" in message


def test_bad_utf8_in_a_later_shard(tmp_path, monkeypatch, script_vocab):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"the cat\n\n" * 300 + b"a dog \xff\n")
    message = errors_of_both(tmp_path, monkeypatch, [str(corpus)],
                             script_vocab, shard_size_bytes=100)
    assert message.startswith(str(corpus) + ":601: ")


def test_gzip_gives_the_local_error(tmp_path, monkeypatch, script_vocab):
    import gzip

    corpus = tmp_path / "corpus.txt.gz"
    corpus.write_bytes(gzip.compress(b"the cat sat on the mat .\n" * 50))
    message = errors_of_both(tmp_path, monkeypatch, [str(corpus)],
                             script_vocab)
    assert "is a gzip file, expected a UTF-8 text corpus; gunzip it" in message


def test_missing_input_and_bad_vocab_give_the_local_errors(
        tmp_path, monkeypatch, script_vocab):
    message = errors_of_both(tmp_path, monkeypatch,
                             [str(tmp_path / "nothing.txt")], script_vocab)
    assert message == "input file not found: %s" % (tmp_path / "nothing.txt")
    vocab = tmp_path / "no_mask.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n", encoding="utf-8")
    corpus = tmp_path / "c.txt"
    corpus.write_text("the\n", encoding="utf-8")
    message = errors_of_both(tmp_path, monkeypatch, [str(corpus)], str(vocab))
    assert "lacks [MASK]" in message
    message = errors_of_both(tmp_path, monkeypatch, [str(corpus)], script_vocab,
                             options=PretrainingOptions(dupe_factor=0))
    assert "dupe_factor" in message
    assert all_files(tmp_path) == ["c.txt", "no_mask.txt", "vocab.txt"]


# ---- runner choice and options -----------------------------------------------------

def test_beam_args():
    assert beam_runners.beam_args("DirectRunner") == ["--runner=FnApiRunner"]
    assert beam_runners.beam_args("DirectRunner", "", num_workers=2) == [
        "--runner=FnApiRunner", "--direct_num_workers=2",
        "--direct_running_mode=multi_processing"]
    assert beam_runners.beam_args(
        "DataflowRunner", "--project=p --region='us central'", 8) == [
        "--runner=DataflowRunner", "--project=p", "--region=us central",
        "--num_workers=8"]
    assert beam_runners.beam_args("DataflowRunner", "--num_workers=3", 8) == [
        "--runner=DataflowRunner", "--num_workers=3"]
    assert beam_runners.beam_args("FlinkRunner", "", 4) == [
        "--runner=FlinkRunner", "--parallelism=4"]
    with pytest.raises(UserError, match="must not set --runner"):
        beam_runners.beam_args("DirectRunner", "--runner=DataflowRunner")
    with pytest.raises(UserError, match="beam_pipeline_options"):
        beam_runners.beam_args("DirectRunner", "--project='p")
    with pytest.raises(UserError, match="--runner=NoSuchRunner"):
        beam_runners.pipeline_options(["--runner=NoSuchRunner"])


def test_local_runners_hide_beams_info_lines_only_while_running(caplog):
    caplog.set_level(logging.INFO)  # As a script's absl logging is.
    echo = logging.getLogger("apache_beam.runners.portability.local_job_service")
    beam_logger = logging.getLogger("apache_beam")
    before = beam_logger.level
    assert echo.isEnabledFor(logging.INFO)
    with beam_runners.quiet_local_runner("DirectRunner"):
        # The runner's echo of each worker line (INFO) is hidden; warnings
        # are not.
        assert not echo.isEnabledFor(logging.INFO)
        assert echo.isEnabledFor(logging.WARNING)
    assert beam_logger.level == before
    assert echo.isEnabledFor(logging.INFO)
    with beam_runners.quiet_local_runner("DataflowRunner"):
        assert echo.isEnabledFor(logging.INFO)


def test_local_runner_rejects_beam_options(tmp_path, sample, vocab):
    config = PretrainingDataConfig(
        input_file=str(sample), output_file=str(tmp_path / "o"),
        vocab_file=str(vocab), beam_pipeline_options="--project=p")
    with pytest.raises(UserError, match="needs a Beam runner"):
        PretrainingDataTask(config).run()
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_script_direct_runner_equals_original(tmp_path, repo_root, data_dir,
                                              fixtures_dir):
    outputs = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    result = run_script(
        repo_root, "--runner=DirectRunner",
        "--input_file=%s" % (data_dir / "pretraining/sample_text.txt"),
        "--output_file=%s" % ",".join(outputs),
        "--vocab_file=%s" % (data_dir / UNCASED_VOCAB),
        "--random_seed=12345", "--dupe_factor=10")
    assert result.returncode == 0, result.stderr[-3000:]
    original = [tf.train.Example.FromString(raw).SerializeToString(
        deterministic=True) for raw in shard_records.read_records(
            str(fixtures_dir / FIXTURE))]
    assert list(shard_records.read_records(outputs[0])) == original[0::2]
    assert list(shard_records.read_records(outputs[1])) == original[1::2]
    assert result.stderr.count("*** Example ***") == 20
    assert "Wrote 118 total instances" in result.stderr
    assert "Beam counters: documents=" in result.stderr
    assert all_files(tmp_path) == ["a.tfrecord", "b.tfrecord"]


@pytest.mark.slow
def test_script_bad_input_same_one_line_error(tmp_path, repo_root,
                                              script_vocab):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"the cat\n\nbad \xc3\x28 line\n")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")

    def error_line(runner, path):
        result = run_script(
            repo_root, "--runner=%s" % runner, "--input_file=%s" % path,
            "--output_file=%s" % (tmp_path / "o.tfrecord"),
            "--vocab_file=%s" % script_vocab)
        assert result.returncode == 1
        lines = [line for line in result.stderr.splitlines()
                 if line.startswith("create_pretraining_data.py: error:")]
        assert len(lines) == 1, result.stderr[-2000:]
        return lines[0]

    prefix = "create_pretraining_data.py: error: "
    # Found while reading by the local pool, before the pipeline by Beam.
    local = error_line("local", corpus)
    assert local == prefix + (
        "%s:3: the line is not valid UTF-8 ('utf-8' codec can't decode byte "
        "0xc3 in position 4: invalid continuation byte)" % corpus)
    assert error_line("DirectRunner", corpus) == local
    # Checked by the script for every runner (bert_tf1/tasks/checks.py).
    assert error_line("DirectRunner", empty) == prefix + (
        "%s: file is empty (needed by --input_file)" % empty)
    missing = tmp_path / "none*.txt"
    assert error_line("DirectRunner", missing) == prefix + (
        "--input_file=%s: input file pattern '%s' matches no file"
        % (missing, missing))
    assert sorted(os.listdir(tmp_path)) == ["c.txt", "empty.txt", "vocab.txt"]
