"""create_model(): the scripts' model builders, the TF1 names of the layers
around the encoder, and docs/custom_models.md's own models on their whole
road: the documented classifier script (its own create_model) trains,
evaluates, predicts, resumes and exports every format (--export_dir) on the
fixture MRPC command, and predict_text.py over each format gives its
test_results.tsv; the documented two-layer SQuAD span head the same through
predictions.json."""
import json
import os
import re
import runpy
import types

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.glue.processors import get_processor
from bert_tf1.modeling import BertClassifier, BertConfig, BertModel, checkpoints
from bert_tf1.modeling.naming import AutoNamedLayerError
from bert_tf1.serving.formats import FORMATS
from bert_tf1.tasks import cli, model_building
from bert_tf1.tasks.classification import ClassificationTask
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask
from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import (assert_one_line_error, run_script,
                                         shared_server)
from tests.tasks.test_classification import (fixture, make_config,  # noqa: F401
                                             mrpc_slice)

TINY = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1,
                  num_attention_heads=2, intermediate_size=16)
INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")
DOC = REPO_ROOT / "docs" / "custom_models.md"
MRPC = "tf1_vocab_mrpc_classifier"
SQUAD = "tf1_vocab_squad"
DEPLOY = "--export_format needs the [deploy] extra (pip install -e '.[deploy]')"


def doc_block(heading, language):
    """The first `language` block of docs/custom_models.md's `heading`."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("\n" + heading + "\n"):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def documented_classifier_script():
    """my_classifier.py as "Build your own classifier" writes it."""
    block = doc_block("## Build your own classifier", "bash")
    return re.search(r"<<'EOF'\n(.*?\n)EOF\n", block, re.S).group(1)


def documented_span_head_script():
    """"A SQuAD span head"'s create_model, run by run_squad.command."""
    block = doc_block("## A SQuAD span head", "python")
    return (block[:block.index("\nbase = ")] + "\n\nif __name__ == "
            "\"__main__\":\n    from bert_tf1 import run_squad\n\n"
            "    run_squad.command(create_model)\n")


def create_model_of(script_text, tmp_path):
    """The `create_model` a script defines (not run as __main__)."""
    path = tmp_path / "own_model.py"
    path.write_text(script_text, encoding="utf-8")
    return runpy.run_path(str(path))["create_model"]


def output_files(folder):
    """{relative path: bytes} of every file under `folder` but TensorBoard's
    event logs."""
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()
            and not path.name.startswith("events.out.tfevents.")}


def non_encoder_names(checkpoint):
    """The weight names of a TF1 checkpoint outside bert/ (no Adam slots)."""
    names = tf.train.load_checkpoint(str(checkpoint)).get_variable_to_shape_map()
    return {name for name in names if not name.startswith("bert/")
            and not name.endswith(("/adam_m", "/adam_v"))}


def predict_text(export_dir, lines, batch_size=16):
    """predict_text.py's results over `lines` with the export `export_dir`."""
    task = PredictTextTask(PredictTextConfig(export_dir=str(export_dir),
                                             text=lines,
                                             batch_size=batch_size))
    task.prepare()
    return task.results()


def two_dense_head(bert_config, hidden_name="my_hidden",
                   output_name="my_output"):
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in INPUT_NAMES}
    pooled = BertModel(bert_config)(inputs)["pooled_output"]
    hidden = keras.layers.Dense(4, name=hidden_name)(pooled)
    return keras.Model(inputs, keras.layers.Dense(2, name=output_name)(hidden))


HEAD_NAMES = {"pool_hidden/kernel", "pool_hidden/bias",
              "pool_classifier/kernel", "pool_classifier/bias"}
SPAN_NAMES = {"span_hidden/kernel", "span_hidden/bias", "span_logits/kernel",
              "span_logits/bias"}


def test_two_dense_layers_keep_their_own_names(tmp_path):
    model = two_dense_head(TINY)
    prefix = str(tmp_path / "model.ckpt")
    checkpoints.save_tf1_checkpoint(model, prefix)
    names = set(tf.train.load_checkpoint(prefix).get_variable_to_shape_map())
    assert {"my_hidden/kernel", "my_hidden/bias", "my_output/kernel",
            "my_output/bias", "bert/pooler/dense/kernel"} <= names
    assert "kernel" not in names
    again = two_dense_head(TINY)
    status = checkpoints.load_tf1_checkpoint(again, prefix, verbose=False)
    assert not status.missing and not status.unused
    np.testing.assert_array_equal(again.get_layer("my_output").kernel,
                                  model.get_layer("my_output").kernel)


def test_an_auto_generated_layer_name_is_refused_in_one_line(tmp_path):
    model = two_dense_head(TINY, output_name=None)
    auto_name = model.layers[-1].name
    assert auto_name.startswith("dense")
    with pytest.raises(AutoNamedLayerError) as error:
        checkpoints.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"))
    message = str(error.value)
    assert "\n" not in message
    assert repr(auto_name) in message and "(Dense)" in message
    assert "name=" in message


def test_stock_heads_keep_the_original_names():
    names = set(checkpoints.model_weights_by_name(BertClassifier(TINY, 3)))
    assert {"output_weights", "output_bias",
            "bert/embeddings/word_embeddings"} <= names


def test_lora_goes_to_the_encoder_inside_and_the_head_trains():
    model = two_dense_head(TINY)
    model_building.enable_lora(model, 2, None, ("query", "value"))
    trainable = {weight.path for weight in model.trainable_weights}
    assert {"my_hidden/kernel", "my_output/kernel"} <= trainable
    assert not any("word_embeddings" in path for path in trainable)
    assert any("lora_kernel_a" in path for path in trainable)


def test_a_model_without_its_own_loss_trains_on_the_scripts_loss():
    def create_model(bert_config, num_labels):
        return two_dense_head(bert_config)

    model = model_building.build_script_model(
        create_model, (TINY, 2), BertClassifier, num_labels=2)
    logits = np.array([[2.0, -1.0], [0.5, 0.5]], np.float32)
    labels = np.array([0, 1])
    expected = -np.mean(tf.nn.log_softmax(logits).numpy()[[0, 1], labels])
    np.testing.assert_allclose(model.compute_loss(y=labels, y_pred=logits),
                               expected, rtol=1e-6)
    with pytest.raises(TypeError, match="holding one BertModel"):
        model_building.build_script_model(
            lambda config, labels: keras.Sequential([keras.layers.Dense(2)]),
            (TINY, 2), BertClassifier)


def test_create_model_mistakes_are_the_users_one_line_errors():
    """A model without a BertModel, or logits of another width than the
    task's labels, is a UserError (one line, no "internal error")."""
    with pytest.raises(UserError, match="holding one BertModel"):
        model_building.build_script_model(
            lambda config, labels: keras.Sequential([keras.layers.Dense(2)]),
            (TINY, 2), BertClassifier)

    def one_logit(bert_config, num_labels):
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in ("input_ids", "input_mask", "segment_ids")}
        pooled = BertModel(bert_config)(inputs)["pooled_output"]
        return keras.Model(inputs, keras.layers.Dense(1, name="one")(pooled),
                           name="one_logit")

    with pytest.raises(UserError, match=r"'one_logit' with outputs of shape "
                       r"\(None, 1\); expected .* num_labels=2"):
        model_building.build_script_model(one_logit, (TINY, 2),
                                          BertClassifier, num_labels=2)
    model = model_building.build_script_model(one_logit, (TINY, 1),
                                              BertClassifier, num_labels=1)
    assert model.name == "one_logit"


def test_main_hands_its_create_model_to_the_task(monkeypatch):
    built = []

    class Task:
        def __init__(self, config, create_model):
            built.append((config, create_model))

        def run(self):
            return "ran"

    monkeypatch.setattr(cli, "config_from_flags", lambda config_class: "cfg")
    main = cli.task_main(Task, object, "default")
    assert main() == "ran" and main(create_model="mine") == "ran"
    assert built == [("cfg", "default"), ("cfg", "mine")]


@pytest.mark.parametrize("script, stock, args", [
    ("run_classifier", "BertClassifier", "3"),
    ("run_squad", "BertSquad", ""),
    ("run_ner", "BertTokenClassifier", "3"),
    ("run_multiple_choice", "BertMultipleChoice", ""),
    ("run_embeddings", "SentenceEmbedder", ""),
])
def test_each_scripts_create_model_is_its_stock_model(script, stock, args):
    # One process per script: two scripts' flags clash in one process. A
    # fork of the warm script server (tests/helpers/script_server.py, as
    # `python -c`) is one: nothing here is about a fresh interpreter.
    code = (
        f"from bert_tf1 import {script} as s\n"
        "from bert_tf1.modeling import BertConfig\n"
        "config = BertConfig(vocab_size=50, hidden_size=8,"
        " num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)\n"
        f"model = s.create_model(config{', ' + args if args else ''})\n"
        "print(type(model).__name__, s.create_model.__doc__.count('name='))\n")
    result = shared_server().run(
        ["-c", code], REPO_ROOT, dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [stock, "1"]


# -- docs/custom_models.md's models on their whole road ------------------------


def test_the_documented_head_loads_the_encoder_only(fixtures_dir, tmp_path):
    # --init_checkpoint loads into the BertModel inside: every encoder
    # weight by its original name; the new layers stay as initialised.
    create_model = create_model_of(documented_classifier_script(), tmp_path)
    model = create_model(
        BertConfig.from_json_file(fixtures_dir / MRPC / "bert_config.json"), 2)
    status = checkpoints.load_tf1_checkpoint(
        model, fixtures_dir / MRPC / "bert_model.ckpt", verbose=False)
    assert set(status.missing) == HEAD_NAMES
    assert status.loaded and all(name.startswith("bert/")
                                 for name in status.loaded)


@pytest.fixture(scope="module")
def classifier_road(fixtures_dir, data_dir, tmp_path_factory):
    """The documented my_classifier.py on the fixture MRPC command with
    --export_dir (every format), the same command again without it, and
    once more with the export_dir that now exists."""
    pytest.importorskip("openvino", reason=DEPLOY)
    fixture = fixtures_dir / MRPC
    folder = tmp_path_factory.mktemp("own_classifier")
    script = folder / "my_classifier.py"
    script.write_text(documented_classifier_script(), encoding="utf-8")
    data = folder / "data"
    data.mkdir()
    for name, rows in (("train.tsv", 20), ("dev.tsv", 12)):
        lines = (data_dir / "glue/MRPC" / name).read_text(
            encoding="utf-8").splitlines(keepends=True)
        (data / name).write_text("".join(lines[:rows + 1]), encoding="utf-8")
    (data / "test.tsv").write_bytes((fixture / "mrpc_test64.tsv").read_bytes())
    out, export = folder / "out", folder / "export"
    flags = dict(task_name="MRPC", do_train=True, do_eval=True,
                 do_predict=True, data_dir=data,
                 vocab_file=fixture / "vocab.txt",
                 bert_config_file=fixture / "bert_config.json",
                 init_checkpoint=fixture / "bert_model.ckpt",
                 max_seq_length=64, train_batch_size=8, eval_batch_size=5,
                 num_train_epochs=1.0, learning_rate=1e-3, output_dir=out)
    first = run_script(str(script), dict(
        flags, export_dir=export, export_format=",".join(FORMATS)))
    files = output_files(out)
    export_files = output_files(export)
    rerun = run_script(str(script), flags)
    refused = run_script(str(script), dict(flags, export_dir=export),
                         check=False)
    return types.SimpleNamespace(
        data=data, out=out, export=export, first=first, files=files,
        rerun=rerun, refused=refused, export_files=export_files)


@pytest.mark.slow  # the fixture: trains, exports 5 formats (~40 s)
def test_own_classifier_trains_evaluates_predicts_and_names_its_layers(
        classifier_road):
    road = classifier_road
    assert "Checkpoint: --init_checkpoint" in road.first.stderr
    assert "model.ckpt-2.index" in road.files  # 20 examples / 8: 2 steps
    results = dict(line.split(" = ") for line in
                   road.files["eval_results.txt"].decode().splitlines())
    assert results["global_step"] == "2"
    assert np.isfinite(float(results["eval_loss"]))
    rows = road.files["test_results.tsv"].decode().splitlines()
    assert len(rows) == 64
    # The encoder under the original's names, each new layer under its
    # Keras path (run_classifier.create_model's docstring).
    names = tf.train.load_checkpoint(
        str(road.out / "model.ckpt-2")).get_variable_to_shape_map()
    assert non_encoder_names(road.out / "model.ckpt-2") == HEAD_NAMES | {
        "global_step"}
    assert "bert/encoder/layer_0/attention/self/query/kernel" in names
    assert names["pool_classifier/kernel"] == [256, 2]


@pytest.mark.slow  # the fixture
def test_own_classifier_rerun_has_nothing_to_train_and_equal_files(
        classifier_road):
    road = classifier_road
    assert "nothing to train" in road.rerun.stderr
    assert "Running training" not in road.rerun.stderr.split(
        "nothing to train")[1]
    # Every file again, byte for byte, TensorBoard's logs aside (a run
    # adds its own, named by time and process).
    after = output_files(road.out)
    assert sorted(after) == sorted(road.files)
    assert len(after) >= 15
    changed = [name for name in after if after[name] != road.files[name]]
    assert not changed, changed


@pytest.mark.slow  # the fixture
def test_an_existing_export_dir_is_refused_before_anything_runs(
        classifier_road):
    road = classifier_road
    assert_one_line_error(road.refused, "--export_dir", str(road.export),
                          "already exists")
    assert "Running" not in road.refused.stderr
    assert output_files(road.export) == road.export_files
    assert output_files(road.out) == road.files


@pytest.mark.slow  # the fixture; predict_text over 5 formats (~15 s)
def test_every_format_of_the_own_classifier_gives_its_test_results(
        classifier_road):
    road = classifier_road
    want = np.array([[float(value) for value in row.split("\t")] for row in
                     road.files["test_results.tsv"].decode().splitlines()])
    examples = get_processor("MRPC").get_test_examples(str(road.data))
    lines = [f"{example.text_a}\t{example.text_b}" for example in examples]
    assert sorted(path.name for path in road.export.iterdir()) == sorted(
        FORMATS)
    for name in FORMATS:
        info = json.loads((road.export / name / "export_info.json")
                          .read_text())
        assert info["model_type"] == "classifier", name
        got = np.array([[result["probabilities"][label] for label in
                         ("0", "1")]
                        for result in predict_text(road.export / name,
                                                   lines)])
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=0,
                                   err_msg=name)


@pytest.fixture(scope="module")
def squad_road(fixtures_dir, tmp_path_factory):
    """The documented two-layer span head through run_squad.command: train
    on the fixture SQuAD sample (4 steps), predict on its first questions,
    export every format."""
    pytest.importorskip("openvino", reason=DEPLOY)
    fixture = fixtures_dir / SQUAD
    folder = tmp_path_factory.mktemp("own_span_head")
    script = folder / "my_squad.py"
    script.write_text(documented_span_head_script(), encoding="utf-8")
    data = json.loads((fixture / "squad_v1_sample/input.json").read_text())
    pairs = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"] = qa["answers"][:1]  # training takes one
                pairs.append((qa["id"], qa["question"], paragraph["context"]))
    (folder / "train.json").write_text(json.dumps(data), encoding="utf-8")
    # Prediction on the first 24 questions (several windows per context).
    keep = {qid for qid, _, _ in pairs[:24]}
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"]
                                if qa["id"] in keep]
    (folder / "predict.json").write_text(json.dumps(data), encoding="utf-8")
    out, export = folder / "out", folder / "export"
    run_script(str(script), dict(
        vocab_file=fixture / "vocab.txt",
        bert_config_file=fixture / "bert_config.json",
        init_checkpoint=fixture / "bert_model.ckpt", do_train=True,
        train_file=folder / "train.json", do_predict=True,
        predict_file=folder / "predict.json", max_seq_length=128,
        doc_stride=64, max_query_length=32, train_batch_size=16,
        num_train_epochs=0.5, learning_rate=1e-3, output_dir=out,
        export_dir=export, export_format=",".join(FORMATS)))
    return types.SimpleNamespace(out=out, export=export, pairs=pairs[:24])


@pytest.mark.slow  # the fixture: trains 4 steps, exports 5 formats (~40 s)
def test_own_span_head_checkpoint_names(squad_road):
    prefix = tf.train.latest_checkpoint(str(squad_road.out))
    assert prefix.endswith("model.ckpt-4")  # 134 examples / 16 * 0.5
    assert non_encoder_names(prefix) == SPAN_NAMES | {"global_step"}
    assert tf.train.load_checkpoint(prefix).has_tensor(
        "bert/encoder/layer_0/output/dense/kernel")


@pytest.mark.slow  # the fixture; predict_text over 5 formats
def test_every_format_of_the_own_span_head_answers_as_predictions_json(
        squad_road):
    want = json.loads((squad_road.out / "predictions.json").read_text())
    assert len(want) == 24 and any(want.values())
    lines = [f"{question}\t{context}"
             for _, question, context in squad_road.pairs]
    for name in FORMATS:
        info = json.loads((squad_road.export / name / "export_info.json")
                          .read_text())
        assert (info["model_type"], info["doc_stride"]) == ("squad", 64)
        answers = [result["answer"] for result in
                   predict_text(squad_road.export / name, lines, 8)]
        assert answers == [want[qid] for qid, _, _ in squad_road.pairs], name


@pytest.mark.parametrize("fields, message", [
    (dict(export_format=["numeric"]), "--export_format needs --export_dir"),
    (dict(export_dir="EXISTING"), "already exists"),
    (dict(export_dir="OUTPUT"), "is the --output_dir"),
    (dict(export_dir="NEW", export_format=["tflite"]),
     "--export_format=tflite: expected one or more of"),
])
def test_export_flags_are_checked_before_anything_is_written(
        fixture, mrpc_slice, tmp_path, fields, message):  # noqa: F811
    output_dir = tmp_path / "out"
    (tmp_path / "existing").mkdir()
    paths = {"EXISTING": tmp_path / "existing", "OUTPUT": output_dir,
             "NEW": tmp_path / "new"}
    if "export_dir" in fields:
        fields = dict(fields, export_dir=str(paths[fields["export_dir"]]))
    task = ClassificationTask(make_config(
        fixture, mrpc_slice, output_dir, do_train=True, train_batch_size=8,
        **fields))
    with pytest.raises(UserError, match=re.escape(message)):
        task.run()
    assert not output_dir.exists() and not (tmp_path / "new").exists()
    assert not any((tmp_path / "existing").iterdir())


@pytest.mark.slow  # predicts 64 rows, writes one SavedModel (~10 s)
def test_a_run_that_does_not_train_exports_the_restored_stock_model(
        fixture, mrpc_slice, tmp_path):  # noqa: F811
    export_dir = tmp_path / "export"
    results = ClassificationTask(make_config(
        fixture, mrpc_slice, tmp_path / "out", do_predict=True,
        export_dir=str(export_dir))).run()
    assert results["export"] == str(export_dir)
    info = json.loads((export_dir / "export_info.json").read_text())
    assert (info["model_type"], info["max_seq_length"]) == ("classifier", 64)
    examples = get_processor("MRPC").get_test_examples(str(mrpc_slice))[:8]
    got = [[result["probabilities"][label] for label in ("0", "1")]
           for result in predict_text(export_dir, [
               f"{example.text_a}\t{example.text_b}" for example in examples])]
    # The weights the run restored (--init_checkpoint) and predicted with.
    want = np.loadtxt(tmp_path / "out" / "test_results.tsv",
                      delimiter="\t")[:8]
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    assert np.ptp(want[:, 0]) > 1e-3  # rows that tell examples apart
