"""What runs a served model: int32 ids in, numpy outputs out by the numeric
signature's names (`bert_tf1.serving.numeric.OUTPUTS`), for every format of
an export and for an in-memory model. `bert_tf1.serving.predictions` puts
the text rules around them.

A runner is called as `run(input_ids=..., input_mask=..., segment_ids=...)`
with int32 numpy arrays [batch, max_seq_length] ([batch, num_choices,
max_seq_length] for multiple choice). Opening one checks it against its
`export_info.json` with one probe call (`check_runner`).
"""
import numpy as np

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.stderr_noise import tensorflow_noise_filtered
from bert_tf1.serving import formats

#: The raw-text SavedModel's ids signature of each model type.
IDS_SIGNATURES = {"classifier": "classify_ids", "squad": "squad_ids",
                  "tagger": "tag_ids", "multiple_choice": "multiple_choice_ids",
                  "encoder": "encode_ids"}


def _numpy(outputs):
    return {key: np.asarray(value) for key, value in outputs.items()}


def _tensor_runner(function, settings):
    """A runner over a TensorFlow function of the three id tensors (the
    numeric signature, an ids signature, or an in-memory model's); an
    encoder's `embedding` pooled here when the function gives only the
    sequence output (`bert_tf1.modeling.pooling.pool_sequence`)."""
    import tensorflow as tf

    from bert_tf1.modeling.pooling import pool_sequence

    def run(**inputs):
        tensors = {key: tf.constant(value) for key, value in inputs.items()}
        outputs = dict(function(**tensors))
        if settings.model_type == "encoder" and "embedding" not in outputs:
            outputs["embedding"] = pool_sequence(
                outputs["sequence_output"], tensors["input_mask"],
                settings.pooling, settings.l2_normalize)
        return _numpy(outputs)
    return run


def model_runner(model, settings, num_labels=None):
    """The runner of an in-memory Keras task model: the numeric graph's
    outputs (`bert_tf1.serving.numeric.NumericServing`) in a tf.function
    that takes ids of any length (`num_labels` 1: a regression)."""
    import tensorflow as tf

    from bert_tf1.serving.numeric import NumericServing

    numeric = NumericServing(model, settings.model_type,
                             settings.max_seq_length, settings.pooling,
                             settings.l2_normalize, num_labels)
    function = tf.function(
        lambda input_ids, input_mask, segment_ids: numeric.outputs_of(
            model, input_ids, input_mask, segment_ids),
        reduce_retracing=True)
    return _tensor_runner(function, settings)


def load_saved_model(directory):
    """tf.saved_model.load of a raw-text SavedModel, with TF Text's ops
    registered first (its graph holds them)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 (registers the tokenizer's ops)

    return tf.saved_model.load(str(directory))


def _saved_model_runner(folder):
    """The raw-text SavedModel's `*_ids` signature (`IDS_SIGNATURES`)."""
    loaded = _load(folder, "saved_model.pb",
                   lambda: load_saved_model(folder.model_dir))
    name = IDS_SIGNATURES[folder.settings.model_type]
    if name not in loaded.signatures:
        raise UserError(f"{folder.model_dir} has no `{name}` signature: it is "
                        f"not the {folder.settings.model_type} model its "
                        "export_info.json describes; export it again.")
    run = _tensor_runner(loaded.signatures[name], folder.settings)
    run.loaded = loaded   # the signature holds the object weakly
    return run


def _load(folder, file, load):
    """`load()`, a runtime's own load error as one UserError naming the
    folder and file."""
    try:
        return load()
    except Exception as error:  # noqa: BLE001 (each runtime's own errors)
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UserError(f"{folder.model_dir}/{file}: the {folder.format} "
                        f"runtime cannot load it ({first[:300]}); export it "
                        "again.") from None


def open_runner(folder):
    """The checked runner of an opened export folder
    (`bert_tf1.serving.formats.info.ExportFolder`).

    Raises:
        UserError: the runtime is not installed, cannot load the model, or
            the model does not fit export_info.json.
    """
    # The runtimes' banners, at load or first call (LiteRT's XNNPACK line).
    with tensorflow_noise_filtered():
        run = _open_runner(folder)
        check_runner(run, folder.settings,
                     f"{folder.folder}/export_info.json")
    return run


def _open_runner(folder):
    name = folder.format
    if name == "saved_model":
        run = _saved_model_runner(folder)
    elif name == "numeric":
        from bert_tf1.serving.numeric import Runner

        run = _load(folder, "saved_model.pb", lambda: Runner(folder.model_dir))
    else:
        formats.require(name, where=f"{folder.folder} (format {name})")
        module = formats.converter(name)
        run = _load(folder, "/".join(module.FILES),
                    lambda: module.Runner(folder.model_dir))
    return run


def check_runner(run, settings, where):
    """One probe call: the model takes `max_seq_length` ids and its outputs
    fit the labels (`where`: the record named in errors).

    Raises:
        UserError: they do not.
    """
    length = settings.max_seq_length
    shape = [1, 2, length] if settings.model_type == "multiple_choice" else [
        1, length]
    ids = np.zeros(shape, np.int32)
    ids[..., 0] = 1
    try:
        out = run(input_ids=ids, input_mask=(ids > 0).astype(np.int32),
                  segment_ids=np.zeros(shape, np.int32))
    except Exception as error:  # noqa: BLE001 (each runtime's own errors)
        first = (str(error).strip().splitlines() or [""])[0]
        raise UserError(f"{where}: the model does not take max_seq_length "
                        f"{length} ids ({first[:200]}); the record does not "
                        "fit the model beside it; export it again.") from None
    labels = settings.labels
    width = {"classifier": "probabilities", "tagger": "logits"}.get(
        settings.model_type)
    if labels is not None and width in out and (
            out[width].shape[-1] != len(labels)):
        raise UserError(f"{where} lists {len(labels)} labels but the model "
                        f"gives {out[width].shape[-1]} scores; the record "
                        "does not fit the model beside it; export it again.")
