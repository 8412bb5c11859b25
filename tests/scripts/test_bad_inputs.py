"""Issue #10's table of bad inputs: one clear line, exit 1, nothing written.

Each case writes tiny data into a folder of its own, runs one of the
scripts as a user would (a subprocess from the repository root, with the
tiny checkpoints of ../shared/fixtures) and checks:

- exit status 1 and exactly one `<script>: error: ...` line, the last line
  of stderr, naming the place at fault (file, line, flag or config field);
- no "Traceback" on stderr;
- the case's folder (its inputs, output_dir, output_file) is exactly as it
  was: no record file, checkpoint, result file or temporary file was
  written, because every check runs before any work.

The scripts spend most of their few seconds importing TensorFlow, so the
selected cases are started together by a module fixture, BERT_TEST_JOBS at
a time (default: the CPU count, at most 4); each test then checks its own
case's outcome.
"""
import concurrent.futures
import dataclasses
import json
import os
import pathlib
import shutil
import socket
import zipfile

import pytest

from tests.conftest import FIXTURES_DIR
from tests.helpers import damaged_files
from tests.helpers.script_runner import assert_one_line_error, run_script

pytestmark = pytest.mark.slow

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"   # V=30522, P=512, L=2
SQUAD = FIXTURES_DIR / "tf1_vocab_squad"            # same encoder
TINY_PRETRAINING = FIXTURES_DIR / "tf1_tiny_pretraining"  # V=512, P=64
# The original create_pretraining_data.py output: max_seq_length=128,
# max_predictions_per_seq=20.
RECORDS_128 = FIXTURES_DIR / "pretraining_data/sample_text_seed12345.tfrecord"

MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
MRPC_ROWS = ("1\t1\t2\tThe cat sat on the mat.\tA cat was on the mat.\n"
             "0\t3\t4\tIt rained all day.\tThe sun was out.\n")
SQUAD_V1 = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{
    "context": "The cat sat on the mat.",
    "qas": [{"id": "q1", "question": "Where did the cat sit?",
             "answers": [{"text": "on the mat", "answer_start": 12}]}]}]}]}


@dataclasses.dataclass
class Case:
    """One bad input: `build(folder)` writes its data, returns (flags, names).

    `names` are the strings the one error line must contain.
    """
    name: str
    script: str
    build: object


CASES = []


def case(script):
    def register(build):
        CASES.append(Case(build.__name__, script, build))
        return build
    return register


# -- data helpers -----------------------------------------------------------

def _write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _mrpc_data(folder, **files):
    """`folder/glue` with the given `<set>.tsv` files (train="...")."""
    data = folder / "glue"
    data.mkdir(exist_ok=True)
    for set_name, content in files.items():
        _write(data / f"{set_name}.tsv", content)
    return data


def _classifier(folder, data, **extra):
    flags = {"task_name": "MRPC", "data_dir": data,
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": folder / "out", "max_seq_length": 32,
             "train_batch_size": 2}
    flags.update(extra)
    return flags


def _config(folder, source, **changes):
    """A copy of `source`'s bert_config.json with `changes` (None: drop)."""
    config = json.loads((source / "bert_config.json").read_text())
    for key, value in changes.items():
        if value is None:
            del config[key]
        else:
            config[key] = value
    return _write(folder / "bert_config.json", json.dumps(config))


def _copy_checkpoint(source_prefix, target_prefix):
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(f"{source_prefix}{suffix}", f"{target_prefix}{suffix}")


def _pretraining(folder, **extra):
    flags = {"input_file": RECORDS_128, "output_dir": folder / "out",
             "bert_config_file": TINY_PRETRAINING / "bert_config.json",
             "init_checkpoint": TINY_PRETRAINING / "bert_model.ckpt",
             "do_train": True, "max_seq_length": 64,
             "max_predictions_per_seq": 20, "train_batch_size": 2,
             "num_train_steps": 1, "num_warmup_steps": 0}
    flags.update(extra)
    return flags


def _squad(folder, **extra):
    flags = {"vocab_file": SQUAD / "vocab.txt",
             "bert_config_file": SQUAD / "bert_config.json",
             "init_checkpoint": SQUAD / "bert_model.ckpt",
             "output_dir": folder / "out", "do_predict": True,
             "predict_file": _write(folder / "dev.json", json.dumps(SQUAD_V1)),
             "max_seq_length": 96, "doc_stride": 32, "max_query_length": 16}
    flags.update(extra)
    return flags


def _extract(folder, **extra):
    flags = {"input_file": _write(folder / "input.txt", "Hello world\n"),
             "output_file": folder / "features.jsonl",
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "layers": "-1", "max_seq_length": 16}
    flags.update(extra)
    return flags


def _create_data(folder, **extra):
    corpus = _write(folder / "corpus.txt",
                    "The cat sat on the mat. It was happy.\n\n"
                    "Another document starts now. It ends here.\n")
    flags = {"input_file": corpus, "output_file": folder / "out.tfrecord",
             "vocab_file": MRPC / "vocab.txt", "max_seq_length": 32,
             "max_predictions_per_seq": 5, "dupe_factor": 1}
    flags.update(extra)
    return flags


NER_TRAIN = ("@paulwalk\tO\nIt\tO\nis\tO\nParis\tB-location\n\n"
             "John\tB-person\nSmith\tI-person\nsaid\tO\n\n")


def _ner(folder, train=NER_TRAIN, **extra):
    flags = {"vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "do_lower_case": True, "output_dir": folder / "out",
             "do_train": True, "train_file": _write(folder / "train.conll",
                                                    train),
             "max_seq_length": 32, "doc_stride": 16, "train_batch_size": 2}
    flags.update(extra)
    return flags


def _multiple_choice(folder, **extra):
    flags = {"vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": folder / "out", "max_seq_length": 32,
             "train_batch_size": 2}
    flags.update(extra)
    return flags


SWAG_HEADER = "sent1,sent2,ending0,ending1,ending2,ending3,label\n"
SWAG_ROWS = ("The cat sat.,It,purred.,barked.,flew.,swam.,0\n"
             "He ran fast.,He,won.,lost.,slept.,sang.,0\n")
HELLASWAG_ROW = {"ctx_a": "A man sits on a roof.", "ctx_b": "he",
                 "endings": ["waves.", "falls.", "sings.", "sleeps."],
                 "label": 0}


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- run_classifier.py --------------------------------------------------------

@case("run_classifier.py")
def classifier_missing_dev_tsv_with_do_eval(folder):
    # Found before training (the original failed after it).
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, do_eval=True),
            [str(data / "dev.tsv")])


@case("run_classifier.py")
def classifier_config_shapes_differ_from_checkpoint(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    config = _config(folder, MRPC, intermediate_size=48)
    return (_classifier(folder, data, do_train=True, bert_config_file=config),
            [str(config), "intermediate"])


@case("run_classifier.py")
def classifier_config_with_more_layers_than_checkpoint(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    config = _config(folder, MRPC, num_hidden_layers=3)
    return (_classifier(folder, data, do_train=True, bert_config_file=config),
            [str(config), "num_hidden_layers=3", "--allow_partial_checkpoint"])


@case("run_classifier.py")
def classifier_config_with_fewer_layers_than_checkpoint(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    config = _config(folder, MRPC, num_hidden_layers=1)
    return (_classifier(folder, data, do_train=True, bert_config_file=config),
            [str(config), "num_hidden_layers=1", "--allow_partial_checkpoint"])


@case("run_classifier.py")
def classifier_init_checkpoint_with_other_checkpoint_in_output_dir(folder):
    # output_dir holds a training checkpoint from another start: it would win
    # over --init_checkpoint, so the run refuses and says how to choose.
    data = _mrpc_data(folder, test=MRPC_HEADER.replace("Quality", "Index")
                      + MRPC_ROWS)
    output_dir = folder / "out"
    output_dir.mkdir()
    _copy_checkpoint(MRPC / "bert_model.ckpt", output_dir / "model.ckpt-3")
    _write(output_dir / "checkpoint",
           'model_checkpoint_path: "model.ckpt-3"\n'
           'all_model_checkpoint_paths: "model.ckpt-3"\n')
    return (_classifier(folder, data, do_predict=True),
            ["--init_checkpoint", "model.ckpt-3", str(output_dir)])


@case("run_classifier.py")
def classifier_truncated_checkpoint_data(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    prefix = folder / "ckpt/bert_model.ckpt"
    prefix.parent.mkdir()
    _copy_checkpoint(MRPC / "bert_model.ckpt", prefix)
    data_file = folder / "ckpt/bert_model.ckpt.data-00000-of-00001"
    data_file.write_bytes(data_file.read_bytes()[:100000])
    return (_classifier(folder, data, do_train=True, init_checkpoint=prefix),
            [str(data_file)])


@case("run_classifier.py")
def classifier_empty_dev_tsv(folder):
    data = _mrpc_data(folder, dev="")
    return _classifier(folder, data, do_eval=True), [str(data / "dev.tsv")]


@case("run_classifier.py")
def classifier_empty_train_tsv(folder):
    data = _mrpc_data(folder, train="")
    return _classifier(folder, data, do_train=True), [str(data / "train.tsv")]


@case("run_classifier.py")
def classifier_header_only_train_tsv(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER)
    return (_classifier(folder, data, do_train=True),
            [str(data / "train.tsv"), "no examples"])


@case("run_classifier.py")
def classifier_vocab_duplicate_plus_extra_line(folder):
    # 30523 lines, 30522 distinct tokens: the duplicate's id is 30522,
    # outside the config's vocab_size.
    vocab = _write(folder / "vocab.txt",
                   (MRPC / "vocab.txt").read_text(encoding="utf-8") + "the\n")
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_eval=True, vocab_file=vocab),
            [str(vocab), "30522"])


@case("run_classifier.py")
def classifier_config_missing_hidden_size(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    config = _config(folder, MRPC, hidden_size=None)
    return (_classifier(folder, data, do_eval=True, bert_config_file=config),
            [str(config), "hidden_size"])


@case("run_classifier.py")
def classifier_max_seq_length_over_max_position_embeddings(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_eval=True, max_seq_length=600),
            ["600", "max_position_embeddings", str(MRPC / "bert_config.json")])


@case("run_classifier.py")
def classifier_unknown_task_name(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_eval=True, task_name="nosuchtask"),
            ["--task_name", "nosuchtask", "mrpc"])


@case("run_classifier.py")
def classifier_no_do_flag(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    return _classifier(folder, data), ["do_train", "do_eval", "do_predict"]


@case("run_classifier.py")
def classifier_missing_vocab_file(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    vocab = folder / "no_vocab.txt"
    return (_classifier(folder, data, do_eval=True, vocab_file=vocab),
            [str(vocab)])


@case("run_classifier.py")
def classifier_non_utf8_tsv(folder):
    data = _mrpc_data(folder, train=(MRPC_HEADER + MRPC_ROWS).encode()
                      + "1\t5\t6\tCaf\xe9 au lait.\tA caf\xe9.\n".encode(
                          "latin-1"))
    return (_classifier(folder, data, do_train=True),
            [str(data / "train.tsv"), "UTF-8"])


@case("run_classifier.py")
def classifier_row_with_too_few_columns(folder):
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS
                      + "1\t5\t6\tOnly one sentence here.\n")
    return (_classifier(folder, data, do_train=True),
            [str(data / "train.tsv"), "line 4", "columns"])


@case("run_classifier.py")
def classifier_label_not_in_label_list(folder):
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS
                      + "7\t5\t6\tOne sentence.\tAnother one.\n")
    return (_classifier(folder, data, do_eval=True),
            [str(data / "dev.tsv"), "line 4", "'7'"])


@case("run_classifier.py")
def classifier_nan_in_init_checkpoint(folder):
    # One NaN embedding row would give NaN predictions for the rows using it.
    data = _mrpc_data(folder, test=MRPC_HEADER.replace("Quality", "Index")
                      + MRPC_ROWS)
    prefix = folder / "ckpt/bert_model.ckpt"
    prefix.parent.mkdir()
    damaged_files.nan_checkpoint(MRPC / "bert_model.ckpt", prefix)
    return (_classifier(folder, data, do_predict=True, init_checkpoint=prefix),
            [str(prefix), "bert/embeddings/word_embeddings (32 of ",
             "--allow_non_finite_checkpoint"])


@case("run_classifier.py")
def classifier_state_file_points_outside_output_dir(folder):
    data = _mrpc_data(folder, test=MRPC_HEADER.replace("Quality", "Index")
                      + MRPC_ROWS)
    other = folder / "other"
    other.mkdir()
    _copy_checkpoint(MRPC / "bert_model.ckpt", other / "model.ckpt-3")
    output_dir = folder / "out"
    output_dir.mkdir()
    _write(output_dir / "checkpoint",
           'model_checkpoint_path: "../other/model.ckpt-3"\n'
           'all_model_checkpoint_paths: "../other/model.ckpt-3"\n')
    return (_classifier(folder, data, do_predict=True, init_checkpoint=""),
            [str(output_dir / "checkpoint"), "../other/model.ckpt-3",
             "outside"])


@case("run_classifier.py")
def classifier_state_file_names_a_missing_checkpoint(folder):
    # It used to predict with random weights and exit 0.
    data = _mrpc_data(folder, test=MRPC_HEADER.replace("Quality", "Index")
                      + MRPC_ROWS)
    output_dir = folder / "out"
    output_dir.mkdir()
    _write(output_dir / "checkpoint",
           'model_checkpoint_path: "model.ckpt-9"\n'
           'all_model_checkpoint_paths: "model.ckpt-9"\n')
    return (_classifier(folder, data, do_predict=True, init_checkpoint=""),
            [str(output_dir / "checkpoint"), "model.ckpt-9", "missing"])


@case("run_classifier.py")
def classifier_predict_without_any_checkpoint(folder):
    data = _mrpc_data(folder, test=MRPC_HEADER.replace("Quality", "Index")
                      + MRPC_ROWS)
    return (_classifier(folder, data, do_predict=True, init_checkpoint=""),
            ["no checkpoint", "--init_checkpoint", "--allow_random_weights"])


@case("run_classifier.py")
def classifier_non_utf8_vocab(folder):
    # Same number of lines (ids fit), one line in Latin-1.
    lines = (MRPC / "vocab.txt").read_bytes().split(b"\n")
    lines[2000] = "caf\xe9".encode("latin-1")
    vocab = _write(folder / "vocab.txt", b"\n".join(lines))
    data = _mrpc_data(folder, dev=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_eval=True, vocab_file=vocab),
            [f"{vocab}, line 2001", "UTF-8"])


# -- run_pretraining.py -------------------------------------------------------

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


# -- run_squad.py -------------------------------------------------------------

@case("run_squad.py")
def squad_zipped_predict_file(folder):
    zipped = folder / "dev-v1.1.json"
    with zipfile.ZipFile(folder / "dev.zip", "w") as archive:
        archive.writestr("dev-v1.1.json", json.dumps(SQUAD_V1))
    os.replace(folder / "dev.zip", zipped)
    return _squad(folder, predict_file=zipped), [str(zipped)]


@case("run_squad.py")
def squad_doc_stride_below_1(folder):
    return _squad(folder, doc_stride=0), ["doc_stride", "0"]


@case("run_squad.py")
def squad_predict_file_without_data_field(folder):
    path = _write(folder / "bad.json", json.dumps({"version": "1.1"}))
    return _squad(folder, predict_file=path), [str(path), "data"]


# -- run_ner.py ---------------------------------------------------------------

@case("run_ner.py")
def ner_line_with_another_column_count(folder):
    flags = _ner(folder, train=NER_TRAIN + "New York\tB-location\tx\n\n")
    return flags, [str(flags["train_file"]), "line 10", "3 columns"]


@case("run_ner.py")
def ner_tag_outside_the_scheme(folder):
    flags = _ner(folder, train=NER_TRAIN + "Rome\tX-location\n\n")
    return flags, [str(flags["train_file"]), "line 10", "X-location"]


@case("run_ner.py")
def ner_missing_eval_file(folder):
    # Found before training.
    dev = folder / "dev.conll"
    return _ner(folder, do_eval=True, eval_file=dev), [str(dev)]


# -- extract_features.py ------------------------------------------------------

@case("extract_features.py")
def extract_missing_input_file(folder):
    path = folder / "no_input.txt"
    return _extract(folder, input_file=path), [str(path), "--input_file"]


@case("extract_features.py")
def extract_non_utf8_input_file(folder):
    path = _write(folder / "latin1.txt",
                  "Hello\nCaf\xe9 au lait\n".encode("latin-1"))
    return _extract(folder, input_file=path), [str(path), "2", "UTF-8"]


@case("extract_features.py")
def extract_layer_out_of_range(folder):
    return _extract(folder, layers="-1,-5"), ["--layers", "-5"]


# -- export_saved_model.py ----------------------------------------------------

def _export(folder, **extra):
    flags = {"model_type": "classifier", "task_name": "MRPC",
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC, "max_seq_length": 32,
             "export_dir": folder / "export"}
    flags.update(extra)
    return {key: value for key, value in flags.items() if value is not None}


@case("export_saved_model.py")
def export_config_does_not_fit_checkpoint(folder):
    config = _config(folder, MRPC, hidden_size=64, intermediate_size=128)
    return (_export(folder, bert_config_file=config),
            [str(config), "does not fit", "mismatch", "more"])


@case("export_saved_model.py")
def export_dir_exists(folder):
    (folder / "export").mkdir()
    return _export(folder), [str(folder / "export"), "already exists"]


@case("export_saved_model.py")
def export_classifier_without_labels(folder):
    return (_export(folder, task_name=None),
            ["--task_name", "--label_list", "--num_labels"])


# -- convert_checkpoint.py ----------------------------------------------------

def _convert(folder, **extra):
    flags = {"input_format": "tf1", "input_path": MRPC,
             "output_format": "huggingface", "output_path": folder / "hf"}
    flags.update(extra)
    return flags


@case("convert_checkpoint.py")
def convert_output_path_exists(folder):
    (folder / "hf").mkdir()
    return _convert(folder), [str(folder / "hf"), "already exists"]


@case("convert_checkpoint.py")
def convert_damaged_safetensors_file(folder):
    hf = folder / "from_hub"
    _write(hf / "config.json", json.dumps({
        "model_type": "bert", "vocab_size": 30522, "hidden_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 512,
        "type_vocab_size": 2}))
    weights = _write(hf / "model.safetensors", b"\x08\x00\x00\x00not a header")
    return (_convert(folder, input_format="huggingface", input_path=hf,
                     output_format="tf1", output_path=folder / "tf1"),
            [str(weights), "safetensors"])


@case("convert_checkpoint.py")
def convert_missing_input(folder):
    missing = folder / "nowhere"
    return _convert(folder, input_path=missing), [str(missing)]


# -- create_pretraining_data.py -----------------------------------------------

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


# -- export_saved_model.py: the tagger and multiple-choice heads ----------------

@case("export_saved_model.py")
def export_tagger_without_its_tags(folder):
    # No label_list.txt beside the checkpoint and no --label_list_file.
    return (_export(folder, model_type="tagger", task_name=None),
            [str(MRPC), "label_list.txt", "--label_list_file"])


@case("export_saved_model.py")
def export_tagger_from_a_classifier_checkpoint(folder):
    labels = _write(folder / "labels.txt", "O\nB-PER\nI-PER\n")
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list_file=labels),
            ["cls/tagging/output_weights", "run_ner.py"])


@case("export_saved_model.py")
def export_multiple_choice_from_a_classifier_checkpoint(folder):
    return (_export(folder, model_type="multiple_choice", task_name=None),
            ["cls/multiple_choice/output_weights"])


@case("export_saved_model.py")
def export_tagger_label_list_with_a_blank_line(folder):
    labels = _write(folder / "labels.txt", "O\n\nB-PER\n")
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list_file=labels),
            [str(labels), "line 2"])


@case("export_saved_model.py")
def export_tagger_label_without_a_scheme(folder):
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list="O,PERSON"),
            ["'PERSON'", "<prefix>-<type>"])


# -- convert_checkpoint.py ----------------------------------------------------

@case("convert_checkpoint.py")
def convert_missing_label_list_file(folder):
    labels = folder / "no_labels.txt"
    return ({"input_format": "tf1", "input_path": MRPC,
             "output_format": "huggingface", "output_path": folder / "hf",
             "label_list_file": labels}, [str(labels)])


@case("convert_checkpoint.py")
def convert_huggingface_folder_without_config(folder):
    (folder / "hf").mkdir()
    return ({"input_format": "huggingface", "input_path": folder / "hf",
             "output_format": "tf1", "output_path": folder / "tf1"},
            [str(folder / "hf"), "config.json"])


# -- predict_text.py ----------------------------------------------------------

def _predict(folder, **extra):
    flags = {"init_checkpoint": MRPC, "model_type": "classifier",
             "task_name": "MRPC", "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json"}
    flags.update(extra)
    return {key: value for key, value in flags.items() if value is not None}


@case("predict_text.py")
def predict_line_with_three_fields(folder):
    path = _write(folder / "in.txt", "a\tb\nc\td\te\n")
    return _predict(folder, input_file=path), [str(path), "line 2",
                                               "1 or 2"]


@case("predict_text.py")
def predict_non_utf8_input_file(folder):
    path = _write(folder / "in.txt", "fine\nCaf\xe9\n".encode("latin-1"))
    return _predict(folder, input_file=path), [str(path), "line 2", "UTF-8"]


@case("predict_text.py")
def predict_export_dir_without_a_saved_model(folder):
    (folder / "export").mkdir()
    return ({"export_dir": folder / "export", "text": "hello"},
            ["No SavedModel in", str(folder / "export")])


@case("predict_text.py")
def predict_tagger_checkpoint_without_its_tags(folder):
    return (_predict(folder, model_type="tagger", task_name=None,
                     text="John lives here"),
            ["label_list.txt", "--label_list_file"])


@case("predict_text.py")
def predict_checkpoint_without_model_type(folder):
    return _predict(folder, model_type=None, text="x"), ["--model_type"]


# -- run_multiple_choice.py ---------------------------------------------------

@case("run_multiple_choice.py")
def multiple_choice_row_with_three_endings(folder):
    rows = [HELLASWAG_ROW, dict(HELLASWAG_ROW, endings=["a.", "b.", "c."])]
    path = _write(folder / "train.jsonl",
                  "".join(json.dumps(row) + "\n" for row in rows))
    return (_multiple_choice(folder, data_format="hellaswag", do_train=True,
                             train_file=path),
            [str(path), "line 2", "found 3 endings", "num_choices=4"])


@case("run_multiple_choice.py")
def multiple_choice_label_out_of_range(folder):
    path = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS
                  + "It rained.,It,poured.,shone.,froze.,fell.,4\n")
    return (_multiple_choice(folder, data_format="swag", do_train=True,
                             train_file=path),
            [str(path), "line 4", "label 4 is outside 0..3"])


@case("run_multiple_choice.py")
def multiple_choice_missing_eval_file(folder):
    # Found before training.
    train = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS)
    missing = folder / "val.csv"
    return (_multiple_choice(folder, data_format="swag", do_train=True,
                             train_file=train, do_eval=True,
                             eval_file=missing),
            [str(missing), "--eval_file"])


@case("run_multiple_choice.py")
def multiple_choice_header_with_other_num_choices(folder):
    path = _write(folder / "dev.tsv", "context\tending0\tending1\tending2"
                  "\tlabel\nThe cat sat.\tIt purred.\tIt flew.\tIt swam.\t0\n")
    return (_multiple_choice(folder, data_format="tsv", do_eval=True,
                             eval_file=path),
            [str(path), "line 1", "found 3 ending columns",
             "num_choices=4"])


@case("run_multiple_choice.py")
def multiple_choice_eval_file_without_labels(folder):
    path = _write(folder / "test.csv", SWAG_HEADER.replace(",label", "")
                  + "The cat sat.,It,purred.,barked.,flew.,swam.\n")
    return (_multiple_choice(folder, data_format="swag", do_eval=True,
                             eval_file=path),
            [str(path), "no labels", "--do_eval"])


@case("run_multiple_choice.py")
def multiple_choice_unknown_data_format(folder):
    path = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS)
    return (_multiple_choice(folder, data_format="csv", do_train=True,
                             train_file=path),
            ["data_format", "csv"])


# -- the runner ---------------------------------------------------------------

@dataclasses.dataclass
class Outcome:
    process: object
    names: list
    files_before: dict
    files_after: dict


def _files(folder):
    """{relative path: (size, mtime_ns)} of everything under `folder`."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = pathlib.Path(root, name)
            stat = path.lstat()
            found[str(path.relative_to(folder))] = (
                None if path.is_dir() else stat.st_size, stat.st_mtime_ns)
    return found


def _run_case(bad_input, folder):
    folder.mkdir()
    flags, names = bad_input.build(folder)
    before = _files(folder)
    process = run_script(bad_input.script, flags, timeout=300, check=False)
    return Outcome(process, names, before, _files(folder))


def test_no_error_line_is_longer_than_half_a_screen(outcomes):
    for name, outcome in outcomes.items():
        line = outcome.process.stderr.rstrip().splitlines()[-1]
        assert len(line) <= 1000, (name, len(line))


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """Runs every selected case (a few at a time); {name: Outcome}."""
    selected = [item.callspec.params["bad_input"]
                for item in request.session.items
                if getattr(item, "originalname", None) == "test_bad_input"
                and item.module is request.module]
    root = tmp_path_factory.mktemp("bad_inputs")
    jobs = max(1, int(os.environ.get("BERT_TEST_JOBS",
                                      min(4, os.cpu_count() or 1))))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {bad.name: pool.submit(_run_case, bad, root / bad.name)
                   for bad in selected}
        return {name: future.result() for name, future in futures.items()}


def test_the_table_covers_every_script():
    scripts = {bad.script for bad in CASES}
    assert len(CASES) >= 40
    on_disk = {path.name for path in pathlib.Path(__file__).resolve()
               .parents[2].glob("*.py") if path.name != "setup.py"}
    assert scripts == on_disk


@pytest.mark.parametrize("bad_input", CASES, ids=lambda bad: bad.name)
def test_bad_input(bad_input, outcomes):
    outcome = outcomes[bad_input.name]
    assert_one_line_error(outcome.process, *outcome.names)
    # Nothing written: no record file, checkpoint, result or temp file.
    assert outcome.files_after == outcome.files_before
