"""A model folder is all export_saved_model.py and predict_text.py need
(bert_tf1/tasks/served_model.py): its bert_config.json, vocab.txt, casing
and max_seq_length record and label_list.txt fill the flags not given;
flags given win, and a folder lacking a file is named in one line."""
import shutil

import pytest

from bert_tf1.data.tokenization.lower_case_record import write_lower_case
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.served_model import ServedModel, ServedModelConfig
from tests.conftest import FIXTURES_DIR

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"


def _folder(tmp_path, labels=("not", "yes"), max_seq_length=48,
            lower=False):
    folder = tmp_path / "output_dir"
    folder.mkdir()
    for name in ("bert_config.json", "vocab.txt"):
        shutil.copy(MRPC / name, folder / name)
    write_lower_case(folder, lower, max_seq_length)
    if labels:
        (folder / "label_list.txt").write_text("".join(
            label + "\n" for label in labels))
    return folder


def test_a_model_folder_alone_gives_every_flag(tmp_path):
    folder = _folder(tmp_path)
    served = ServedModel(ServedModelConfig(init_checkpoint=str(folder),
                                           do_lower_case=None))
    served.resolve()
    config = served.config
    assert config.bert_config_file == str(folder / "bert_config.json")
    assert config.vocab_file == str(folder / "vocab.txt")
    assert (config.max_seq_length, config.do_lower_case) == (48, False)
    assert (served.label_list, served.num_labels) == (["not", "yes"], None)


def test_flags_given_win_over_the_folder(tmp_path):
    folder = _folder(tmp_path)
    served = ServedModel(ServedModelConfig(
        init_checkpoint=str(folder / "model.ckpt-3"), max_seq_length=32,
        do_lower_case=True, num_labels=3))
    served.resolve()
    assert (served.config.max_seq_length, served.config.do_lower_case) == (
        32, True)
    assert (served.label_list, served.num_labels) == (None, 3)


def test_a_folder_without_the_files_is_named(tmp_path):
    folder = _folder(tmp_path, labels=None)
    (folder / "vocab.txt").unlink()
    with pytest.raises(UserError, match=r"--vocab_file is needed: "
                       r"--init_checkpoint \(.*output_dir\) is no model "
                       r"folder holding vocab.txt"):
        ServedModel(ServedModelConfig(init_checkpoint=str(folder))).resolve()
    shutil.copy(MRPC / "vocab.txt", folder / "vocab.txt")
    with pytest.raises(UserError, match="needs exactly one of --task_name, "
                       r"--label_list, --num_labels; got none \(and no "
                       "label_list.txt"):
        ServedModel(ServedModelConfig(init_checkpoint=str(folder))).resolve()
