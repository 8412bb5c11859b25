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


def _records(path, texts):
    """A TFRecord file of tf.train.Examples with the bytes feature "text"."""
    import tensorflow as tf

    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for text in texts:
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "text": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[text]))})).SerializeToString())
    return path


def _tfrecord_beam(folder, path, text_feature="text"):
    return _drop_none(_extract(folder, **_beam(
        folder, input_file=path, input_format="tfrecord",
        text_feature=text_feature)))


@case("extract_features.py")
def beam_tfrecord_text_not_utf8(folder):
    path = _records(folder / "in.tfrecord", [b"Hello", b"Caf\xe9"])
    return _tfrecord_beam(folder, path), [str(path), "record 2", "'text'",
                                          "UTF-8"]


@case("extract_features.py")
def beam_text_file_as_tfrecord(folder):
    path = _write(folder / "in.txt", "Hello world\nanother line\n")
    return _tfrecord_beam(folder, path), [str(path), "record 1",
                                          "not a TFRecord file"]


@case("extract_features.py")
def beam_three_text_features(folder):
    path = _records(folder / "in.tfrecord", [b"Hello"])
    return (_tfrecord_beam(folder, path, text_feature="a,b,c"),
            ["--text_feature=a,b,c", "3 feature(s)", "1 or 2"])


@case("predict_text.py")
def beam_output_dir_is_a_file(folder):
    from bert_tf1.serving import export_saved_model

    export = export_saved_model(
        folder / "encoder_export", model_type="encoder", init_checkpoint=MRPC,
        bert_config_file=MRPC / "bert_config.json", max_seq_length=32,
        vocab_file=MRPC / "vocab.txt")
    output = _write(folder / "shards", "a file\n")
    path = _write(folder / "in.txt", "a sentence\n")
    return ({"export_dir": export, "input_file": path,
             "runner": "DirectRunner", "output_dir": output},
            [f"--output_dir={output}", "is a file"])


@case("extract_features.py")
def beam_output_dir_is_a_file_extract(folder):
    output = _write(folder / "shards", "a file\n")
    return (_drop_none(_extract(folder, **_beam(folder, output_dir=output))),
            [f"--output_dir={output}", "is a file"])
