"""Bad inputs of create_pretraining_data.py."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _create_data


@case("create_pretraining_data.py")
def create_data_input_glob_matches_nothing(folder):
    pattern = folder / "texts/*.txt"
    return _create_data(folder, input_file=pattern), [str(pattern)]


@case("create_pretraining_data.py")
def create_data_missing_vocab_file(folder):
    vocab = folder / "no_vocab.txt"
    return _create_data(folder, vocab_file=vocab), [str(vocab)]


@case("create_pretraining_data.py")
def create_data_masked_lm_prob_out_of_range(folder):
    return _create_data(folder, masked_lm_prob=1.5), ["masked_lm_prob", "1.5"]


@case("create_pretraining_data.py")
def create_data_output_folder_is_a_file(folder):
    not_a_folder = folder / "plain_file"
    not_a_folder.write_text("x")
    output = not_a_folder / "out.tfrecord"
    return (_create_data(folder, output_file=output),
            [str(not_a_folder), "is a file, expected a folder"])


@case("create_pretraining_data.py")
def create_data_output_file_is_a_folder(folder):
    return (_create_data(folder, output_file=folder),
            [f"--output_file={folder} is a folder"])


@case("create_pretraining_data.py")
def create_data_beam_options_without_beam_runner(folder):
    return (_create_data(folder, beam_pipeline_options="--project=p"),
            ["--beam_pipeline_options needs a Beam runner"])
