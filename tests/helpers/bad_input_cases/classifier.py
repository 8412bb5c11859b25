"""Bad inputs of run_classifier.py: data, vocabulary, config and checkpoints."""
from tests.helpers import damaged_files
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    MRPC, MRPC_HEADER, MRPC_ROWS, _classifier, _config, _copy_checkpoint,
    _mrpc_data, _write)


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
