"""--do_lower_case travels with the model folder: the record beside
--vocab_file (tokenizer_config.json) is the default when the flag is not
given; a given flag that contradicts it is one line; without a record the
scripts keep their own defaults (run_ner.py: cased).

Built as the scripts build their configs: `script_flags` definitions, absl
parsing, `cli.config_from_flags`.
"""
import shutil

import pytest
from absl import flags

from bert_tf1.data.tokenization.lower_case_record import write_lower_case
from bert_tf1.tasks import cli, script_flags
from bert_tf1.tasks.classification import ClassificationConfig
from bert_tf1.tasks.errors import UserError, one_line
from bert_tf1.tasks.feature_extraction import FeatureExtractionConfig
from bert_tf1.tasks.tagging import TaggingConfig
from tests.helpers.script_runner import assert_one_line_error, run_script

# script -> (its --do_lower_case default, its config class)
SCRIPTS = {"run_classifier.py": (True, ClassificationConfig),
           "extract_features.py": (True, FeatureExtractionConfig),
           "run_ner.py": (False, TaggingConfig)}


def script_config(script, *argv):
    default, config_class = SCRIPTS[script]
    flag_values = flags.FlagValues()
    script_flags.define_model_flags(do_lower_case=default,
                                    flag_values=flag_values)
    flag_values([script, *argv])
    return cli.config_from_flags(config_class, flag_values=flag_values)


@pytest.fixture
def model_folder(fixtures_dir, tmp_path):
    """A folder with vocab.txt and nothing recorded yet."""
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(fixtures_dir / "tf1_vocab_mrpc_classifier" / "vocab.txt",
                folder / "vocab.txt")
    return folder


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("recorded", [True, False])
def test_the_record_is_the_default(model_folder, script, recorded):
    vocab = f"--vocab_file={model_folder / 'vocab.txt'}"
    default = SCRIPTS[script][0]
    assert script_config(script, vocab).do_lower_case is default
    write_lower_case(model_folder, recorded)
    assert script_config(script, vocab).do_lower_case is recorded
    flag = "--do_lower_case" if recorded else "--nodo_lower_case"
    assert script_config(script, vocab, flag).do_lower_case is recorded
    with pytest.raises(UserError) as raised:
        script_config(script, vocab, "--do_lower_case=" + str(not recorded))
    record = model_folder / "tokenizer_config.json"
    assert one_line(raised.value) == (
        f"--do_lower_case={str(not recorded).lower()} contradicts {record}, "
        f"which records do_lower_case {str(recorded).lower()} for "
        f"{model_folder / 'vocab.txt'}; leave the flag out to use the "
        "recorded value.")


def test_without_vocab_or_record_the_flag_stands(model_folder):
    assert script_config("run_ner.py").do_lower_case is False
    assert script_config("run_ner.py", "--do_lower_case").do_lower_case is True
    (model_folder / "tokenizer_config.json").write_text('{"x": 1}')
    assert script_config(
        "run_classifier.py", f"--vocab_file={model_folder / 'vocab.txt'}",
        "--nodo_lower_case").do_lower_case is False


def test_help_names_the_record():
    flag_values = flags.FlagValues()
    script_flags.define_vocab_flags(flag_values=flag_values)
    assert flag_values["do_lower_case"].help == (
        script_flags.DO_LOWER_CASE_HELP + script_flags.LOWER_CASE_RECORD_HELP)


def test_run_ner_script_refuses_a_contradicting_flag(model_folder, fixtures_dir,
                                                    tmp_path):
    write_lower_case(model_folder, True)
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    process = run_script("run_ner.py", {
        "vocab_file": model_folder / "vocab.txt", "do_lower_case": False,
        "bert_config_file": fixture / "bert_config.json",
        "output_dir": tmp_path / "out", "do_train": True,
        "train_file": tmp_path / "train.txt"}, check=False)
    assert_one_line_error(process, "--do_lower_case=false contradicts")
    assert not (tmp_path / "out").exists()
