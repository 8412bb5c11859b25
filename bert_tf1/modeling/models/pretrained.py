"""`from_checkpoint`: find the config, build the model and load its weights
in one call; which paths are accepted is `bert_tf1.modeling.interop.sources`.
"""
from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.checkpoints import model_kind
from bert_tf1.modeling.interop.sources import (find_checkpoint, head_size,
                                              load_weights_from)
from bert_tf1.modeling.layers.lora import ADAPTER_NAMES


def check_encoder_complete(model, source):
    """Raises `CheckpointMismatchError` (nothing assigned) when `source`
    (a `CheckpointSource`) lacks a `bert/` weight of `model` other than
    the pooler and LoRA adapters, in the words the scripts use (a LoRA
    adapters file, e.g., holds no encoder); a missing head is fine."""
    if source.kind == "tf1":
        prefix = checkpoints.resolve_checkpoint(source.path)
        present = checkpoints.list_checkpoint(prefix)
        model_kind.check_tf1_names(present, prefix)  # ALBERT's: say so
    else:
        prefix, present = source.path, source.weights
    missing = [name for name in checkpoints.model_weights_by_name(model)
               if name.startswith("bert/") and name not in present
               and not name.startswith("bert/pooler/")
               and name.rsplit("/", 1)[-1] not in ADAPTER_NAMES]
    if missing:
        raise checkpoints.CheckpointMismatchError(
            f"Checkpoint {prefix} lacks {len(missing)} weight(s) of the "
            f"{model.name} model, e.g. {', '.join(missing[:3])}. Pass "
            "allow_partial=True to keep them freshly initialised.")


class FromCheckpoint:
    """Adds `from_checkpoint` to a model class built from a `BertConfig`.

    A class that needs `num_labels` names in `_LABELS_HEAD` the head bias
    whose size it is, read from the checkpoint when not given.
    """

    #: (TF1 name of the head's bias, what the head is called), or None.
    _LABELS_HEAD = None

    @classmethod
    def from_checkpoint(cls, path, config=None, allow_partial=False,
                        **kwargs):
        """Builds the model for a checkpoint and loads it, in one call.

        Args:
            path: any folder `find_checkpoint` accepts.
            config: optional `BertConfig` or bert_config.json path (needed
                only for a TF1 checkpoint whose config cannot be found).
            allow_partial: True: encoder weights missing from the
                checkpoint are freshly initialised (a logged warning)
                instead of an error.
            **kwargs: passed to the constructor; `num_labels` defaults to
                the checkpoint head's size; with `encoder=`, the `bert/*`
                weights are loaded into that (shared) encoder.
        Returns:
            the model, its weights loaded (heads missing from the
            checkpoint freshly initialised, with a logged warning).
        Raises:
            CheckpointNotFoundError, MissingFileError: nothing to load at
                path, or no config for it.
            CheckpointMismatchError: a weight of another shape, or an
                encoder weight missing (`check_encoder_complete`) without
                allow_partial; nothing is assigned.
            TypeError: num_labels not given and the checkpoint has no head
                to take it from.
        """
        source = find_checkpoint(path, config)
        if cls._LABELS_HEAD and kwargs.get("num_labels") is None:
            name, head = cls._LABELS_HEAD
            kwargs["num_labels"] = head_size(source, name)
            if kwargs["num_labels"] is None:
                raise TypeError(f"{source.path} has no {head} head ({name}): "
                                "pass num_labels=.")
        if kwargs.get("encoder") is None:
            kwargs["config"] = source.config
        model = cls(**kwargs)
        if not allow_partial:
            check_encoder_complete(model, source)
        load_weights_from(model, source)
        return model
