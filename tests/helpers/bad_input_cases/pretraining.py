"""Bad inputs of run_pretraining.py: record files, shapes and the TPU address."""
from tests.helpers import damaged_files
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    RECORDS_128, TINY_PRETRAINING, _closed_port, _config, _pretraining)


@case("run_pretraining.py")
def pretraining_records_128_read_at_64(folder):
    return _pretraining(folder), [str(RECORDS_128), "128", "64"]


@case("run_pretraining.py")
def pretraining_records_with_other_max_predictions(folder):
    return (_pretraining(folder, max_seq_length=128,
                         bert_config_file=_config(
                             folder, TINY_PRETRAINING,
                             max_position_embeddings=128),
                         init_checkpoint="", max_predictions_per_seq=10),
            [str(RECORDS_128), "masked_lm_positions", "20", "10"])


@case("run_pretraining.py")
def pretraining_input_glob_matches_nothing(folder):
    pattern = folder / "records/*.tfrecord"
    return _pretraining(folder, input_file=pattern), [str(pattern)]


@case("run_pretraining.py")
def pretraining_tpu_address_with_nothing_listening(folder):
    address = f"grpc://127.0.0.1:{_closed_port()}"
    return (_pretraining(folder, use_tpu=True, tpu_name=address,
                         tpu_timeout_s=2, max_seq_length=128,
                         bert_config_file=_config(
                             folder, TINY_PRETRAINING,
                             max_position_embeddings=128),
                         init_checkpoint=""),
            [address, "--tpu_timeout_s"])


def _pretraining_128(folder, input_file):
    return _pretraining(folder, input_file=input_file, max_seq_length=128,
                        bert_config_file=_config(folder, TINY_PRETRAINING,
                                                 max_position_embeddings=128),
                        init_checkpoint="")


@case("run_pretraining.py")
def pretraining_record_file_cut_in_the_middle(folder):
    # TensorFlow reads such a file short (or fails at the first step
    # without naming it); the pre-check scans every record.
    cut = damaged_files.cut_record_file(RECORDS_128, folder / "cut.tfrecord",
                                        record=5)
    return _pretraining_128(folder, cut), [str(cut), "record 5", "cut short"]


@case("run_pretraining.py")
def pretraining_record_file_with_a_corrupt_record(folder):
    bad = damaged_files.corrupt_record_file(RECORDS_128,
                                            folder / "bad.tfrecord", record=4)
    return _pretraining_128(folder, bad), [str(bad), "record 4", "checksum"]
