"""Tests of create_pretraining_data.py and its pipeline (shards, workers, edge cases).

Ground truth: shared/fixtures/pretraining_data (the original script's output
for sample_text.txt, seed 12345) and the original's flags
(shared/reference/original_bert.md section 2).
"""
import os
import re

import pytest
import tensorflow as tf

from bert_tf1.data.pretraining.corpus import plan_shards
from bert_tf1.data.pretraining.pipeline import (PretrainingOptions,
                                                create_pretraining_files, shard_seed)
from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import run_script_argv

UNCASED_VOCAB = "bert_models/uncased_L-12_H-768_A-12/vocab.txt"
FIXTURE = "pretraining_data/sample_text_seed12345.tfrecord"
FIXTURE_WWM = "pretraining_data/sample_text_seed12345_wwm.tfrecord"


def raw_records(path):
    return list(tf.data.TFRecordDataset(str(path)).as_numpy_iterator())


def contents(path):
    """Records as comparable feature dicts (map order of bytes ignored)."""
    out = []
    for raw in raw_records(path):
        feature = tf.train.Example.FromString(raw).features.feature
        out.append({key: list(value.int64_list.value or value.float_list.value)
                    for key, value in feature.items()})
    return out


def run_script(repo_root, *args):
    """create_pretraining_data.py with these arguments (from repo_root)."""
    assert repo_root == REPO_ROOT
    return run_script_argv("create_pretraining_data.py", *args)


# ---- the script against the original's output ------------------------------------

@pytest.mark.slow
def test_script_output_equals_original(tmp_path, repo_root, data_dir,
                                       fixtures_dir):
    outputs = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    result = run_script(
        repo_root,
        "--input_file=%s" % (data_dir / "pretraining/sample_text.txt"),
        "--output_file=%s" % ",".join(outputs),
        "--vocab_file=%s" % (data_dir / UNCASED_VOCAB),
        "--do_lower_case=True", "--max_seq_length=128",
        "--max_predictions_per_seq=20", "--masked_lm_prob=0.15",
        "--random_seed=12345", "--dupe_factor=10")
    assert result.returncode == 0, result.stderr[-3000:]
    expected = contents(fixtures_dir / FIXTURE)
    first, second = contents(outputs[0]), contents(outputs[1])
    # Round-robin: record k is in file k % 2.
    assert first == expected[0::2] and second == expected[1::2]
    assert result.stderr.count("*** Example ***") == 20
    assert "Wrote 118 total instances" in result.stderr
    # The first logged example is the first record.
    tokens_line = re.search(r"\] tokens: (.*)", result.stderr).group(1)
    assert tokens_line.split()[0] == "[CLS]"
    ids_line = re.search(r"\] input_ids: (.*)", result.stderr).group(1)
    assert [int(x) for x in ids_line.split()] == expected[0]["input_ids"]
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "b.tfrecord"]


def test_whole_word_mask_output_equals_original(tmp_path, data_dir,
                                                fixtures_dir):
    out = str(tmp_path / "wwm.tfrecord")
    count = create_pretraining_files(
        [str(data_dir / "pretraining/sample_text.txt")], [out],
        str(data_dir / UNCASED_VOCAB), do_lower_case=True,
        options=PretrainingOptions(do_whole_word_mask=True),
        random_seed=12345, show_progress=False)
    assert count == 122
    assert contents(out) == contents(fixtures_dir / FIXTURE_WWM)


def test_output_is_reproducible_byte_for_byte(tmp_path, data_dir):
    paths = []
    for name in ("one.tfrecord", "two.tfrecord"):
        paths.append(str(tmp_path / name))
        create_pretraining_files(
            [str(data_dir / "pretraining/sample_text.txt")], [paths[-1]],
            str(data_dir / UNCASED_VOCAB),
            options=PretrainingOptions(dupe_factor=2), random_seed=3,
            show_progress=False)
    with open(paths[0], "rb") as a, open(paths[1], "rb") as b:
        assert a.read() == b.read()


# ---- shards and workers --------------------------------------------------------------

def test_single_shard_when_input_fits(tmp_path, data_dir, fixtures_dir):
    out = str(tmp_path / "out.tfrecord")
    create_pretraining_files(
        [str(data_dir / "pretraining/sample_text.txt")], [out],
        str(data_dir / UNCASED_VOCAB), random_seed=12345,
        shard_size_bytes=16 << 20, num_workers=3, show_progress=False)
    assert contents(out) == contents(fixtures_dir / FIXTURE)


def test_shard_seeds():
    assert shard_seed(12345, 0) == 12345
    seeds = {shard_seed(s, i) for s in range(5) for i in range(1, 50)}
    assert len(seeds) == 5 * 49 and all(0 <= x < 2 ** 63 for x in seeds)


def test_shards_are_independent_runs_interleaved(tmp_path, data_dir):
    corpus = str(data_dir / "pretraining/sample_text.txt")
    vocab = str(data_dir / UNCASED_VOCAB)
    options = PretrainingOptions(dupe_factor=3)
    shards = plan_shards([corpus], 1500)
    assert len(shards) == 2
    # Each shard alone, as its own file, with its derived seed.
    per_shard = []
    for index, shard in enumerate(shards):
        with open(corpus, "rb") as reader:
            reader.seek(shard[0].start)
            text = reader.read(shard[0].end - shard[0].start)
        part = tmp_path / ("part%d.txt" % index)
        part.write_bytes(text)
        out = str(tmp_path / ("part%d.tfrecord" % index))
        create_pretraining_files([str(part)], [out], vocab, options=options,
                                 random_seed=shard_seed(99, index),
                                 show_progress=False)
        per_shard.append(contents(out))
    merged = str(tmp_path / "merged.tfrecord")
    total = create_pretraining_files([corpus], [merged], vocab,
                                     options=options, random_seed=99,
                                     shard_size_bytes=1500,
                                     show_progress=False)
    # One record of each shard in turn; the longer shard finishes alone.
    expected = []
    for k in range(max(len(p) for p in per_shard)):
        expected.extend(p[k] for p in per_shard if k < len(p))
    assert total == len(expected)
    assert contents(merged) == expected
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["merged.tfrecord", "part0.txt", "part1.txt", "part0.tfrecord",
         "part1.tfrecord"])


@pytest.mark.slow
def test_workers_do_not_change_the_output(tmp_path, data_dir):
    # Spawned worker processes load TensorFlow: a few seconds each.
    corpus = str(data_dir / "pretraining/sample_text.txt")
    vocab = str(data_dir / UNCASED_VOCAB)
    outputs = []
    for workers in (1, 2):
        outputs.append([str(tmp_path / ("w%d_%d.tfrecord" % (workers, i)))
                        for i in range(3)])
        create_pretraining_files(
            [corpus, corpus], outputs[-1], vocab,
            options=PretrainingOptions(dupe_factor=2), random_seed=5,
            shard_size_bytes=1500, num_workers=workers, show_progress=True)
    for one, two in zip(*outputs):
        assert raw_records(one) == raw_records(two)
        assert raw_records(one)
    assert len(os.listdir(tmp_path)) == 6  # no shard temp files left


# ---- edge-case corpora --------------------------------------------------------------

@pytest.mark.parametrize("text,expect_instances", [
    ("", False),                                   # empty file
    ("\n\n   \n\t\n", False),                      # blank lines only
    ("\u0e38\n\x00\ufffd\n", False),               # lines tokenize to nothing
    ("the cat sat\n", True),                       # one one-sentence document
    ("the cat\n\n\na dog ran\n\n\nbig mat .\n", True),   # one-sentence docs
    ("the cat sat on the mat .\na dog ran .\nbig dog\n", True),  # one doc
    ("\n\nthe cat\n\u0e38\n\n a dog  \n\n", True),  # mixed
])
def test_edge_case_corpora(tmp_path, script_vocab, text, expect_instances):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    out = tmp_path / "out.tfrecord"
    count = create_pretraining_files(
        [str(corpus)], [str(out)], script_vocab,
        options=PretrainingOptions(max_seq_length=16,
                                   max_predictions_per_seq=3, dupe_factor=4),
        show_progress=False)
    records = contents(out)
    assert len(records) == count
    assert bool(count) == expect_instances
    for record in records:
        assert len(record["input_ids"]) == 16
        assert record["input_ids"][0] == 2  # [CLS]


def test_one_sentence_documents_give_random_next_labels(tmp_path,
                                                        script_vocab):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat\n\na dog ran\n\nbig mat .\n", encoding="utf-8")
    out = tmp_path / "out.tfrecord"
    create_pretraining_files([str(corpus)], [str(out)], script_vocab,
                             options=PretrainingOptions(max_seq_length=16,
                                                        dupe_factor=3),
                             show_progress=False)
    labels = [r["next_sentence_labels"] for r in contents(out)]
    assert labels == [[1]] * 9


def test_documents_continue_across_input_files(tmp_path, script_vocab):
    # As in the original, only a blank line ends a document, not a new file.
    (tmp_path / "a.txt").write_text("the cat sat\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("a dog ran\n", encoding="utf-8")
    out = tmp_path / "out.tfrecord"
    create_pretraining_files(
        [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], [str(out)],
        script_vocab, options=PretrainingOptions(max_seq_length=16,
                                               dupe_factor=10,
                                               short_seq_prob=0.0),
        show_progress=False)
    labels = [r["next_sentence_labels"][0] for r in contents(out)]
    # One two-sentence document: the actual next sentence shows up.
    assert 0 in labels


# ---- errors ----------------------------------------------------------------------------

def test_vocab_without_mask_token_is_rejected(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nthe\n", encoding="utf-8")
    corpus = tmp_path / "c.txt"
    corpus.write_text("the\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"lacks \[MASK\]"):
        create_pretraining_files([str(corpus)], [str(tmp_path / "o")],
                                 str(vocab), show_progress=False)
    assert not (tmp_path / "o").exists()


def test_bad_utf8_input_names_file_and_line_and_writes_nothing(tmp_path,
                                                               script_vocab):
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"the cat\n\nbad \xc3\x28 line\n")
    with pytest.raises(ValueError, match=r"c\.txt:3: .*UTF-8"):
        create_pretraining_files([str(corpus)], [str(tmp_path / "o")],
                                 script_vocab, show_progress=False)
    assert sorted(os.listdir(tmp_path)) == ["c.txt", "vocab.txt"]


@pytest.mark.parametrize("options,message", [
    (PretrainingOptions(max_seq_length=4), "max_seq_length"),
    (PretrainingOptions(masked_lm_prob=1.5), "masked_lm_prob"),
    (PretrainingOptions(dupe_factor=0), "dupe_factor"),
    (PretrainingOptions(max_predictions_per_seq=0), "max_predictions"),
])
def test_bad_options_are_rejected(tmp_path, script_vocab, options, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        create_pretraining_files([str(corpus)], [str(tmp_path / "o")],
                                 script_vocab, options=options,
                                 show_progress=False)


@pytest.mark.slow
def test_script_reports_missing_input(tmp_path, repo_root, script_vocab):
    result = run_script(repo_root,
                        "--input_file=%s" % (tmp_path / "nothing*.txt"),
                        "--output_file=%s" % (tmp_path / "o.tfrecord"),
                        "--vocab_file=%s" % script_vocab)
    assert result.returncode != 0
    assert "matches no file" in result.stderr
    assert not (tmp_path / "o.tfrecord").exists()


def test_script_flags_and_defaults(repo_root):
    # absl prints the help and exits with status 1.
    result = run_script(repo_root, "--helpshort")
    flag_text = result.stdout.split("\nflags:\n", 1)[1]
    defaults = {}
    for block in re.split(r"\n  --", "\n" + flag_text)[1:]:
        name = re.match(r"(?:\[no\])?(\w+):", block).group(1)
        default = re.search(r"\(default: '([^']*)'\)", block)
        defaults[name] = default.group(1) if default else None
    # The original's flags and defaults (reference section 2; the three
    # files are required, without default), plus ours.
    assert defaults == {
        "input_file": None, "output_file": None, "vocab_file": None,
        "do_lower_case": "true", "do_whole_word_mask": "false",
        "max_seq_length": "128", "max_predictions_per_seq": "20",
        "random_seed": "12345", "dupe_factor": "10",
        "masked_lm_prob": "0.15", "short_seq_prob": "0.1",
        "num_workers": "1", "shard_size_mb": "16.0",
        "runner": "local", "beam_pipeline_options": ""}
    result = run_script(repo_root, "--input_file=x")
    assert result.returncode != 0
    assert "output_file" in result.stderr and "vocab_file" in result.stderr


def test_gzipped_corpus_says_to_extract_it(tmp_path, script_vocab):
    import gzip

    corpus = tmp_path / "corpus.txt.gz"
    corpus.write_bytes(gzip.compress(b"the cat sat on the mat .\n" * 50))
    with pytest.raises(ValueError, match=r"corpus.txt.gz: is a gzip file, expected a "
                       r"UTF-8 text corpus; gunzip it first"):
        create_pretraining_files([str(corpus)], [str(tmp_path / "o.tfrecord")],
                                 script_vocab, show_progress=False)
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt.gz", "vocab.txt"]
