"""How a script ends: a stop by signal exits 128 + signal with one line; no
error line is longer than half a screen."""
import sys

import pytest

from bert_tf1.modeling.training.preemption import TrainingInterrupted
from bert_tf1.tasks import cli
from bert_tf1.tasks.errors import UserError


def test_training_stopped_by_sigterm_exits_143_with_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["run_x.py"])

    def stopped():
        raise TrainingInterrupted(15, 7, "/out/model.ckpt-7", "/out")
    with pytest.raises(SystemExit) as exit_info:
        cli.call_reporting_user_errors(stopped)
    assert exit_info.value.code == 143
    assert capsys.readouterr().err == (
        "run_x.py: stopped by SIGTERM after step 7: wrote the checkpoint "
        "/out/model.ckpt-7; run the same command again to resume from it "
        "(exit status 143)\n")


def test_a_worker_without_checkpoint_says_the_chief_wrote_it():
    stopped = TrainingInterrupted(2, 5, None, "/shared/out")
    assert stopped.exit_status == 130
    assert "SIGINT after step 5: the chief wrote the checkpoint of step 5 in /shared/out" in str(stopped)


def test_a_long_error_line_is_cut_saying_how_much(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["run_x.py"])
    monkeypatch.delenv(cli.VERBOSE_ERRORS_ENV, raising=False)

    def long_error():
        raise UserError("x" * 5000)
    with pytest.raises(SystemExit):
        cli.call_reporting_user_errors(long_error)
    line = capsys.readouterr().err
    assert line.count("\n") == 1 and len(line) <= cli.MAX_LINE + 1
    # What is shown plus what is counted as left out is the whole message.
    shown = line[len("run_x.py: error: "):].split(" ... (")[0]
    left_out = int(line.split(" ... (")[1].split(" more characters")[0])
    assert len(shown) + left_out == 5000
