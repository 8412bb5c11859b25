"""bert_tf1/tasks/checks.py (checks before any work) and bert_tf1/tasks/cli.py (one error line)."""
import os
import sys

import pytest

from bert_tf1.tasks import checks, cli
from bert_tf1.tasks.errors import UserError, one_line

MRPC = "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def mrpc_config(fixtures_dir):
    from bert_tf1.modeling import BertConfig

    return BertConfig.from_json_file(fixtures_dir / MRPC / "bert_config.json")


def test_sequence_length(mrpc_config):
    mrpc_config.check_sequence_length(512, "--max_seq_length", "c.json", minimum=3)
    with pytest.raises(UserError, match=r"sequence length 513 .* up to "
                                        r"sequence length 512 .*c\.json"):
        mrpc_config.check_sequence_length(513, "--max_seq_length", "c.json", minimum=3)
    with pytest.raises(UserError, match="at least 3"):
        mrpc_config.check_sequence_length(2, "--max_seq_length", "c.json", minimum=3)


def test_data_files(tmp_path):
    with pytest.raises(UserError, match=r"missing\.tsv: file not found \(needed "
                                        r"by --do_eval\)"):
        checks.check_data_file(str(tmp_path / "missing.tsv"), "--do_eval")
    with pytest.raises(UserError, match="is a directory"):
        checks.check_data_file(str(tmp_path), "--do_eval")
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(UserError, match="empty.tsv: file is empty"):
        checks.check_data_file(str(empty), "--do_train")
    with pytest.raises(UserError, match="--do_train needs a data file"):
        checks.check_data_file(None, "--do_train")
    with pytest.raises(UserError, match="no examples"):
        checks.check_examples([], "dev.tsv", "--do_eval")
    checks.check_examples([object()], "dev.tsv", "--do_eval")


def test_input_files(tmp_path):
    (tmp_path / "a.tfrecord").write_bytes(b"x")
    (tmp_path / "b.tfrecord").write_bytes(b"")
    assert checks.check_input_files(str(tmp_path / "a*")) == [
        str(tmp_path / "a.tfrecord")]
    with pytest.raises(UserError, match="matches no file"):
        checks.check_input_files(str(tmp_path / "c*"))
    with pytest.raises(UserError, match="b.tfrecord: file is empty"):
        checks.check_input_files(str(tmp_path / "*.tfrecord"))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may write anywhere")
def test_output_dir_not_writable(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(UserError, match="not writable"):
            checks.check_output_dir_writable(str(locked / "out"))
    finally:
        locked.chmod(0o700)


def test_output_dir_below_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="is a file, expected a folder"):
        checks.check_output_dir_writable(str(tmp_path / "file" / "out"))
    checks.check_output_dir_writable(str(tmp_path / "new" / "deeper"))
    assert not (tmp_path / "new").exists()  # nothing created


def _fake_training_checkpoint(output_dir, step):
    """A `checkpoint` state file naming model.ckpt-<step> (index present)."""
    output_dir.mkdir(exist_ok=True)
    (output_dir / f"model.ckpt-{step}.index").write_bytes(b"")
    (output_dir / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-{step}"\n'
        f'all_model_checkpoint_paths: "model.ckpt-{step}"\n')
    return str(output_dir / f"model.ckpt-{step}")


def test_choose_checkpoint_rule(tmp_path, fixtures_dir):
    init = str(fixtures_dir / MRPC / "bert_model.ckpt")
    out = tmp_path / "out"
    assert checks.choose_checkpoint(str(out), None).source == "none"
    choice = checks.choose_checkpoint(str(out), init)
    assert (choice.source, choice.path) == ("init_checkpoint", init)
    with pytest.raises(UserError, match="--init_checkpoint: Checkpoint not found"):
        checks.choose_checkpoint(str(out), str(tmp_path / "nothing"))

    latest = _fake_training_checkpoint(out, 7)
    # Resuming / fine-tuned weights: the output_dir's checkpoint.
    choice = checks.choose_checkpoint(str(out), None)
    assert (choice.source, choice.path) == ("output_dir", latest)
    assert "model.ckpt-7" in choice.describe()
    # --init_checkpoint the output_dir was not started from: refused.
    with pytest.raises(UserError) as error:
        checks.choose_checkpoint(str(out), init)
    message = str(error.value)
    assert latest in message and "unrecorded" in message
    assert "fresh --output_dir" in message and "drop --init_checkpoint" in message
    # Started from it (recorded when training began): the rerun resumes.
    checks.record_init_checkpoint(str(out), init)
    assert checks.read_init_checkpoint_record(str(out)) == init
    assert checks.choose_checkpoint(str(out), init).path == latest
    # Started from random values, now --init_checkpoint: refused.
    checks.record_init_checkpoint(str(out), None)
    with pytest.raises(UserError, match="started from random values"):
        checks.choose_checkpoint(str(out), init)
    # --init_checkpoint naming the newest training checkpoint itself is fine.
    assert checks.choose_checkpoint(str(out), latest).path == latest


def test_checkpoint_fits_shapes_and_layers(tmp_path, fixtures_dir):
    import json

    from bert_tf1.modeling import BertClassifier, BertConfig

    fixture = fixtures_dir / MRPC
    checkpoint = str(fixture / "bert_model.ckpt")
    values = json.loads((fixture / "bert_config.json").read_text())

    def model_with(**changes):
        return BertClassifier(BertConfig(**dict(values, **changes)), 2)

    assert checks.check_checkpoint_fits(model_with(), checkpoint, "c.json") == checkpoint
    for layers in (1, 3):
        model = model_with(num_hidden_layers=layers)
        with pytest.raises(UserError, match=rf"has 2 encoder layers \(0\.\.1\) but "
                                            rf"c\.json has num_hidden_layers={layers}"):
            checks.check_checkpoint_fits(model, checkpoint, "c.json")
        checks.check_checkpoint_fits(model, checkpoint, "c.json", allow_partial=True)
    # Shapes: one line with three of the 38 mismatches and the likely cause.
    with pytest.raises(UserError) as error:
        checks.check_checkpoint_fits(model_with(hidden_size=64), checkpoint, "c.json")
    message = str(error.value)
    assert "\n" not in message and "... 35 more" in message
    assert "38 shape mismatch(es): " in message and ":;" not in message
    assert "hidden_size: the checkpoint has 32, the config 64" in message
    # A new task head the checkpoint lacks (and a head the model does not
    # use) is normal fine-tuning: accepted.
    from bert_tf1.modeling import BertSquad

    assert checks.check_checkpoint_fits(
        BertSquad(BertConfig(**values)), checkpoint, "c.json") == checkpoint


def test_one_line_messages():
    from bert_tf1.data.tokenization.full_tokenizer import VocabLookupError

    assert one_line(ValueError("a\n  b\n\nc")) == "a; b; c"
    assert one_line(VocabLookupError("zz", "v.txt")).startswith(
        "token 'zz' is not in v.txt")
    assert one_line(FileNotFoundError(2, "No such file", "x.json")) == (
        "[Errno 2] No such file: 'x.json'")


def test_user_error_is_one_line_and_exit_1(capsys, monkeypatch):
    monkeypatch.delenv(cli.VERBOSE_ERRORS_ENV, raising=False)
    monkeypatch.setattr(sys, "argv", ["run_x.py"])

    def bad():
        raise UserError("f.tsv, line 3: found 2 columns\nexpected 5")

    with pytest.raises(SystemExit) as exit_info:
        cli.call_reporting_user_errors(bad)
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == (
        "run_x.py: error: f.tsv, line 3: found 2 columns; expected 5\n")

    # A bug keeps its traceback.
    def buggy():
        raise TypeError("bug")

    with pytest.raises(TypeError):
        cli.call_reporting_user_errors(buggy)
    # BERT_VERBOSE_ERRORS=1: the user error is raised with its traceback.
    monkeypatch.setenv(cli.VERBOSE_ERRORS_ENV, "1")
    with pytest.raises(UserError):
        cli.call_reporting_user_errors(bad)


def test_config_from_flags():
    from absl import flags

    from bert_tf1.modeling.training import runtime
    from bert_tf1.tasks.classification import ClassificationConfig

    values = flags.FlagValues()
    flags.DEFINE_string("task_name", None, "", flag_values=values)
    flags.DEFINE_integer("max_seq_length", 128, "", flag_values=values)
    flags.DEFINE_bool("do_train", False, "", flag_values=values)
    values(["x", "--task_name=MRPC", "--max_seq_length=64", "--do_train"])
    config = cli.config_from_flags(ClassificationConfig, values,
                                   learning_rate=1e-4)
    assert (config.task_name, config.max_seq_length, config.do_train) == (
        "MRPC", 64, True)
    assert config.learning_rate == 1e-4  # an override
    assert config.train_batch_size == 32  # no flag: the default
    # No runtime flags defined: the default options.
    assert config.runtime == runtime.RuntimeOptions()
