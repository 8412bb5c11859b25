"""One subprocess run per script: flags -> config -> task works end to end,
and a user error is one line on stderr with exit status 1.

The numbers are checked in-process (tests/test_tasks_*.py); these runs check
the wiring a user sees: flag names, exit codes, files, messages.
"""
import json

import pytest

from tests.helpers.script_runner import assert_one_line_error, run_script

pytestmark = pytest.mark.slow

MRPC = "tf1_vocab_mrpc_classifier"


def test_run_classifier(fixtures_dir, tmp_path):
    fixture = fixtures_dir / MRPC
    data = tmp_path / "data"
    data.mkdir()
    lines = (fixture / "mrpc_test64.tsv").read_text().splitlines(keepends=True)
    (data / "test.tsv").write_text("".join(lines[:9]))
    flags = {"task_name": "MRPC", "data_dir": data,
             "vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "output_dir": tmp_path / "out", "do_predict": True,
             "max_seq_length": 128}
    process = run_script("run_classifier.py", flags)
    assert len((tmp_path / "out/test_results.tsv").read_text().splitlines()) == 8
    assert "Checkpoint: --init_checkpoint" in process.stderr

    process = run_script("run_classifier.py", dict(flags, do_eval=True,
                                                   output_dir=tmp_path / "o2"),
                         check=False)
    assert_one_line_error(process, str(data / "dev.tsv"))
    assert not (tmp_path / "o2").exists()

    help_text = run_script("run_classifier.py", {"help": True},
                           check=False).stdout  # exits 1
    # Booleans are listed as --[no]name.
    for name in ("]use_tpu:", "--save_checkpoints_steps:", "]verbose_errors:",
                 "]allow_partial_checkpoint:", "--distribution_strategy:",
                 "Known --task_name values: cola, mnli"):
        assert name in help_text


def test_run_squad(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_squad"
    folder = fixture / "squad_v1_windows"
    flags = {"vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "output_dir": tmp_path / "out", "do_predict": True,
             "predict_file": folder / "input.json", "max_seq_length": 128,
             "doc_stride": 48}
    run_script("run_squad.py", flags)
    assert ((tmp_path / "out/predictions.json").read_text()
            == (folder / "predictions.json").read_text())

    zipped = tmp_path / "dev.json"
    zipped.write_bytes(b"PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe")
    process = run_script("run_squad.py", dict(flags, predict_file=zipped,
                                              output_dir=tmp_path / "o2"),
                         check=False)
    assert_one_line_error(process, str(zipped))
    assert not (tmp_path / "o2").exists()


def test_run_ner(fixtures_dir, tmp_path):
    fixture = fixtures_dir / MRPC
    train = tmp_path / "train.conll"
    train.write_text("-DOCSTART- O\n\nJohn B-PER\nlives O\nin O\n"
                     "New B-LOC\nYork I-LOC\n\nHe O\nleft O\n\n",
                     encoding="utf-8")
    flags = {"vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "do_lower_case": True, "output_dir": tmp_path / "out",
             "train_file": train, "eval_file": train, "predict_file": train,
             "do_train": True, "do_eval": True, "do_predict": True,
             "max_seq_length": 8, "doc_stride": 3, "train_batch_size": 2}
    process = run_script("run_ner.py", flags)
    assert "Checkpoint: --init_checkpoint" in process.stderr
    out = tmp_path / "out"
    assert (out / "label_list.txt").read_text() == (
        "O\nB-LOC\nI-LOC\nB-PER\nI-PER\n")
    lines = (out / "predictions.txt").read_text().split("\n")
    assert [line.split("\t")[0] for line in lines] == [
        "John", "lives", "in", "New", "York", "", "He", "left", "", ""]
    assert (out / "eval_predictions.txt").read_text() == "\n".join(lines)
    assert "eval_f1 = " in (out / "eval_results.txt").read_text()

    process = run_script("run_ner.py", dict(
        flags, do_train=False, do_eval=False, output_dir=tmp_path / "o2"),
        check=False)
    assert_one_line_error(process, str(tmp_path / "o2" / "label_list.txt"))
    assert not (tmp_path / "o2").exists()


def test_run_pretraining(fixtures_dir, tmp_path):
    from tests.tasks.test_pretraining import write_reference_records
    import numpy as np

    fixture = fixtures_dir / "tf1_tiny_pretraining"
    reference = dict(np.load(fixture / "reference_outputs.npz"))
    records = tmp_path / "reference.tfrecord"
    write_reference_records(reference, records)
    flags = {"input_file": records, "output_dir": tmp_path / "out",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt", "do_eval": True,
             "max_seq_length": 24, "max_predictions_per_seq": 4,
             "eval_batch_size": 3, "max_eval_steps": 1}
    run_script("run_pretraining.py", flags)
    assert (tmp_path / "out/eval_results.txt").exists()

    process = run_script("run_pretraining.py",
                         dict(flags, max_seq_length=32,
                              output_dir=tmp_path / "o2"), check=False)
    assert_one_line_error(process, str(records), "input_ids", "24")
    assert not (tmp_path / "o2").exists()


def test_extract_features(fixtures_dir, tmp_path):
    fixture = fixtures_dir / MRPC
    input_file = tmp_path / "input.txt"
    input_file.write_text("Hello world ||| How are you?\n", encoding="utf-8")
    flags = {"input_file": input_file, "output_file": tmp_path / "f.jsonl",
             "vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "layers": "-1", "max_seq_length": 16}
    run_script("extract_features.py", flags)
    line = json.loads((tmp_path / "f.jsonl").read_text())
    assert line["linex_index"] == 0 and line["features"][0]["token"] == "[CLS]"

    process = run_script("extract_features.py",
                         dict(flags, init_checkpoint=tmp_path / "none.ckpt",
                              output_file=tmp_path / "g.jsonl"), check=False)
    assert_one_line_error(process, "--init_checkpoint", "none.ckpt")
    assert not (tmp_path / "g.jsonl").exists()


def test_create_pretraining_data(fixtures_dir, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat. It was happy.\n"
                      "A second sentence is here.\n\n"
                      "Another document starts now. It ends here.\n",
                      encoding="utf-8")
    flags = {"input_file": corpus, "output_file": tmp_path / "out.tfrecord",
             "vocab_file": fixtures_dir / MRPC / "vocab.txt",
             "max_seq_length": 32, "max_predictions_per_seq": 5,
             "dupe_factor": 1}
    run_script("create_pretraining_data.py", flags)
    assert (tmp_path / "out.tfrecord").stat().st_size > 0

    process = run_script("create_pretraining_data.py",
                         dict(flags, unknown_flag=1), check=False)
    assert_one_line_error(process, "unknown_flag")


def test_run_multiple_choice(fixtures_dir, data_dir, tmp_path):
    fixture = fixtures_dir / MRPC
    swag = data_dir / "multiple_choice/swag/swag.csv"
    flags = {"data_format": "swag", "train_file": swag, "eval_file": swag,
             "predict_file": swag, "do_train": True, "do_eval": True,
             "do_predict": True, "vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "output_dir": tmp_path / "out", "max_seq_length": 32,
             "train_batch_size": 4, "num_train_epochs": 1}
    process = run_script("run_multiple_choice.py", flags)
    assert "Checkpoint: --init_checkpoint" in process.stderr
    out = tmp_path / "out"
    # 11 SWAG rows: 11 lines of 4 probabilities; int(11 / 4) = 2 steps.
    rows = [line.split("\t") for line in
            (out / "test_results.tsv").read_text().splitlines()]
    assert len(rows) == 11 and {len(row) for row in rows} == {4}
    results = dict(line.split(" = ") for line in
                   (out / "eval_results.txt").read_text().splitlines())
    assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step",
                               "loss"]
    assert results["global_step"] == "2"
    assert (out / "model.ckpt-2.index").exists()

    missing = tmp_path / "test.csv"
    process = run_script("run_multiple_choice.py",
                         dict(flags, predict_file=missing,
                              output_dir=tmp_path / "o2"), check=False)
    assert_one_line_error(process, str(missing), "--predict_file")
    assert not (tmp_path / "o2").exists()

    help_text = run_script("run_multiple_choice.py", {"help": True},
                           check=False).stdout  # exits 1
    for name in ("--train_file:", "--eval_file:", "--predict_file:",
                 "--data_format: <swag|hellaswag|tsv>", "--num_choices:",
                 "]use_tpu:", "]verbose_errors:"):
        assert name in help_text
    # The paper's defaults (§4.4): batch 16, learning rate 2e-5, 3 epochs.
    for flag, default in (("train_batch_size", "'16'"),
                          ("learning_rate", "'2e-05'"),
                          ("num_train_epochs", "'3.0'")):
        text = help_text.split(f"--{flag}:", 1)[1].split("--", 1)[0]
        assert f"(default: {default})" in text, (flag, text)
