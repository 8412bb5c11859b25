"""Bad inputs of predict_text.py and extract_features.py with --runner
(Apache Beam batch inference, bert_tf1/tasks/batch_inference.py)."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (MRPC, _extract, _predict,
                                                  _write)


def _beam(folder, **extra):
    return dict({"runner": "DirectRunner", "pooling": "mean",
                 "output_file": None, "output_dir": folder / "shards"},
                **extra)


def _drop_none(flags):
    return {key: value for key, value in flags.items() if value is not None}


@case("extract_features.py")
def beam_glob_matching_nothing(folder):
    pattern = str(folder / "corpus-*.txt")
    return (_drop_none(_extract(folder, **_beam(folder, input_file=pattern))),
            [pattern, "no file matches"])


@case("extract_features.py")
def beam_non_utf8_line(folder):
    path = _write(folder / "latin1.txt", "Hello\nCaf\xe9\n".encode("latin-1"))
    return (_drop_none(_extract(folder, **_beam(folder, input_file=path))),
            [str(path), ":2", "UTF-8"])


@case("predict_text.py")
def beam_export_of_another_model_type(folder):
    from bert_tf1.serving import export_saved_model

    export = export_saved_model(
        folder / "encoder_export", model_type="encoder", init_checkpoint=MRPC,
        bert_config_file=MRPC / "bert_config.json", max_seq_length=32,
        vocab_file=MRPC / "vocab.txt")
    path = _write(folder / "in.txt", "a sentence\n")
    return ({"export_dir": export, "model_type": "classifier",
             "input_file": path, "runner": "DirectRunner",
             "output_dir": folder / "shards"},
            [str(export), "encoder", "--model_type=classifier"])


@case("predict_text.py")
def beam_options_without_runner(folder):
    return (_predict(folder, text="x",
                     beam_pipeline_options="--direct_num_workers=2"),
            ["--beam_pipeline_options", "--runner"])
