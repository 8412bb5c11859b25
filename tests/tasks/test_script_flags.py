"""bert_tf1/tasks/script_flags.py: the shared flags carry each original script's
defaults and help, and belong to the module that defines them (so absl's
--help lists them under the script's name).

Expected values are the original google-research/bert scripts' flag blocks
(run_classifier.py, run_squad.py, run_pretraining.py).
"""
import sys

from absl import flags

from bert_tf1.tasks import script_flags


def _classifier_flags():
    flag_values = flags.FlagValues()
    script_flags.define_output_dir_flag(flag_values=flag_values)
    script_flags.define_model_flags(flag_values=flag_values)
    script_flags.define_mode_flags(("train", "eval", "predict"),
                                   flag_values=flag_values)
    script_flags.define_learning_rate_flags(flag_values=flag_values)
    return flag_values


def test_run_classifier_defaults_and_help():
    flag_values = _classifier_flags()
    defaults = {name: flag_values[name].default for name in flag_values}
    assert defaults == {
        "output_dir": None, "bert_config_file": None, "vocab_file": None,
        "init_checkpoint": None, "do_lower_case": True, "max_seq_length": 128,
        "do_train": False, "do_eval": False, "do_predict": False,
        "train_batch_size": 32, "eval_batch_size": 8, "predict_batch_size": 8,
        "learning_rate": 5e-5, "num_train_epochs": 3.0,
        "warmup_proportion": 0.1}
    assert flag_values["do_predict"].help == (
        "Whether to run the model in inference mode on the test set.")
    assert flag_values["predict_batch_size"].help == (
        "Total batch size for predict.")
    assert flag_values["warmup_proportion"].help == (
        "Proportion of training to perform linear learning rate warmup for. "
        "E.g., 0.1 = 10% of training.")


def test_the_defining_module_owns_the_flags():
    """absl lists a module's key flags under its name in --help."""
    flag_values = _classifier_flags()
    owned = {flag.name for flag in
             flag_values.get_key_flags_for_module(sys.modules[__name__])}
    assert owned == set(flag_values)
    assert not flag_values.get_key_flags_for_module(script_flags)


def test_run_squad_wording_and_sequence_length():
    flag_values = flags.FlagValues()
    script_flags.define_model_flags(max_seq_length=384,
                                    flag_values=flag_values)
    script_flags.define_mode_flags(
        ("train", "predict"),
        do_predict_help="Whether to run eval on the dev set.",
        predict_batch_size_help="Total batch size for predictions.",
        flag_values=flag_values)
    assert flag_values["max_seq_length"].default == 384
    assert flag_values["do_predict"].help == (
        "Whether to run eval on the dev set.")
    assert flag_values["predict_batch_size"].help == (
        "Total batch size for predictions.")
    assert flag_values["predict_batch_size"].default == 8
    assert "do_eval" not in flag_values


def test_run_pretraining_leaves_out_vocab_case_and_epochs():
    flag_values = flags.FlagValues()
    script_flags.define_model_flags(
        max_seq_length_help=script_flags.MAX_SEQ_LENGTH_HELP
        + " Must match data generation.",
        vocab_file=False, do_lower_case=False, flag_values=flag_values)
    script_flags.define_learning_rate_flags(epochs=False,
                                            flag_values=flag_values)
    assert sorted(flag_values) == ["bert_config_file", "init_checkpoint",
                                   "learning_rate", "max_seq_length"]
    assert flag_values["max_seq_length"].help.endswith(
        "shorter than this will be padded. Must match data generation.")


def test_run_multiple_choice_paper_defaults():
    """A script can change a mode's batch size and the learning rate
    default (run_multiple_choice.py: BERT paper §4.4, batch 16, 2e-5); the
    other modes keep run_classifier.py's defaults and every help text."""
    flag_values = flags.FlagValues()
    script_flags.define_mode_flags(("train", "eval", "predict"),
                                   batch_sizes={"train": 16},
                                   flag_values=flag_values)
    script_flags.define_learning_rate_flags(learning_rate=2e-5,
                                            flag_values=flag_values)
    defaults = {name: flag_values[name].default for name in flag_values}
    assert defaults == {
        "do_train": False, "do_eval": False, "do_predict": False,
        "train_batch_size": 16, "eval_batch_size": 8, "predict_batch_size": 8,
        "learning_rate": 2e-5, "num_train_epochs": 3.0,
        "warmup_proportion": 0.1}
    assert flag_values["train_batch_size"].help == (
        "Total batch size for training.")
