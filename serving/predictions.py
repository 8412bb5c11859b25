"""Calling a served model (an export, or the module built in memory) on rows
of raw text: JSON-ready dicts out, batched.

    from bert_tf1.serving.predictions import load_export, Predictor
    served = load_export("export/mrpc")          # imports tensorflow_text
    predictor = Predictor.for_served(served)
    for result in predictor.predict([("text a", "text b"), ("text",)]):
        print(result)   # {"label": "1", "probabilities": {"0": .., "1": ..}}

Each model type takes one tuple of strings per example and gives:
  * classifier: (text,) or (text_a, text_b) -> `label`, `probabilities`
    ({label: p}, or a list without label names) or, regression, `score`;
  * squad: (question, context) -> `answer`, `score` (None: no valid span);
  * tagger: (text,) -> `words`, `tags`, `entities` (`start`, `end` code
    point offsets, `type`, `text`);
  * multiple_choice: (context, ending_1, ..., ending_n) -> `choice`,
    `probabilities`.
"""
import math

import tensorflow as tf

from bert_tf1.data.io.errors import UserError

__all__ = ["MODEL_TYPE_OF_SIGNATURE", "load_export", "model_type_of",
           "Predictor"]

# The signature that identifies each model type's export.
MODEL_TYPE_OF_SIGNATURE = {"classify_text": "classifier",
                           "squad_answer": "squad", "tag_text": "tagger",
                           "multiple_choice": "multiple_choice",
                           "encode_text": "encoder"}


def load_export(export_dir):
    """The SavedModel at `export_dir`, with the TF Text ops registered.

    Raises:
        UserError: nothing loadable there (names the directory).
    """
    import tensorflow_text  # noqa: F401  registers the tokenizer's ops

    if not tf.io.gfile.exists(f"{export_dir}/saved_model.pb"):
        raise UserError(f"No SavedModel in {export_dir} (expected the "
                        "--export_dir of export_saved_model.py).")
    try:
        return tf.saved_model.load(str(export_dir))
    except (tf.errors.OpError, ValueError, OSError) as error:
        raise UserError(f"Cannot load the SavedModel in {export_dir}: "
                        f"{str(error).splitlines()[0]}") from None


def model_type_of(signature_names, where):
    """The model type an export serves, from its signature names.

    Raises:
        UserError: none of the known signatures (names `where`).
    """
    for name, model_type in MODEL_TYPE_OF_SIGNATURE.items():
        if name in signature_names:
            return model_type
    raise UserError(f"{where} has none of the signatures of "
                    f"export_saved_model.py ({', '.join(MODEL_TYPE_OF_SIGNATURE)}"
                    f"); found {', '.join(sorted(signature_names)) or 'none'}.")


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _float(value):
    value = float(value)
    return value if math.isfinite(value) else None


class Predictor:
    """Runs one model type's `signatures` (name -> callable taking tensors
    by keyword) on rows of strings, in batches; `label_names`: the
    classifier's labels, or None.

    Raises:
        UserError: an encoder (nothing to predict) or an unknown type.
    """

    def __init__(self, model_type, signatures, label_names=None):
        if model_type == "encoder":
            raise UserError("An encoder export gives vectors, not "
                            "predictions; use extract_features.py for them.")
        if model_type not in ("classifier", "squad", "tagger",
                              "multiple_choice"):
            raise UserError(f"Unknown model type {model_type!r}.")
        self.model_type = model_type
        self.signatures = signatures
        self.label_names = list(label_names) if label_names else None

    @classmethod
    def for_served(cls, served, where="the export", model_type=None):
        """A Predictor for `served`, a `load_export` object or a serving
        module (`bert_tf1.serving.build_serving_module`), named `where` in errors.

        Raises:
            UserError: it serves another model type than `model_type`.
        """
        signatures = (served.signatures() if callable(served.signatures)
                      else served.signatures)
        found = model_type_of(set(signatures), where)
        if model_type and model_type != found:
            raise UserError(f"{where} serves a {found} model, not "
                            f"--model_type={model_type}.")
        names = getattr(served, "label_names", None)
        names = [_text(v) for v in names.numpy()] if names is not None else None
        return cls(found, signatures, names)

    def predict(self, rows, batch_size=32):
        """One dict per row of `rows` (tuples of str), in order (module
        docstring), `batch_size` rows per signature call."""
        groups = {}
        for index, row in enumerate(rows):
            groups.setdefault(self._group(row), []).append(index)
        results = [None] * len(rows)
        for group, indices in groups.items():
            for begin in range(0, len(indices), batch_size):
                chunk = indices[begin:begin + batch_size]
                outputs = self._run(group, [rows[i] for i in chunk])
                for index, result in zip(chunk, outputs):
                    results[index] = result
        return results

    def _group(self, row):
        """Rows of one group go through one signature together."""
        if self.model_type == "classifier":
            return len(row)          # classify_text or classify_pair
        if self.model_type == "multiple_choice":
            return len(row) - 1      # the number of endings
        return 0

    def _run(self, group, rows):
        columns = [tf.constant(list(column)) for column in zip(*rows)]
        if self.model_type == "classifier" and group == 1:
            out = self.signatures["classify_text"](text=columns[0])
        elif self.model_type == "classifier":
            out = self.signatures["classify_pair"](text_a=columns[0],
                                                   text_b=columns[1])
        elif self.model_type == "squad":
            out = self.signatures["squad_answer"](question=columns[0],
                                                  context=columns[1])
        elif self.model_type == "tagger":
            out = self.signatures["tag_text"](text=columns[0])
        else:
            out = self.signatures["multiple_choice"](
                context=columns[0], endings=tf.stack(columns[1:], axis=1))
        out = {key: value.numpy() for key, value in out.items()}
        return {"classifier": self._classifications, "squad": self._answers,
                "tagger": self._tags,
                "multiple_choice": self._choices}[self.model_type](out)

    @staticmethod
    def _answers(out):
        """Results of numpy `answer_text` (bytes), `score` [batch]."""
        return [{"answer": _text(text), "score": _float(score)}
                for text, score in zip(out["answer_text"], out["score"])]

    @staticmethod
    def _choices(out):
        """Results of numpy `choice` [batch], `probabilities` [batch, n]."""
        return [{"choice": int(choice),
                 "probabilities": [float(p) for p in probabilities]}
                for choice, probabilities in zip(out["choice"],
                                                 out["probabilities"])]

    def _classifications(self, out):
        """Results of numpy `score` [batch], or `label` [batch] (bytes or
        str) and `probabilities` [batch, num_labels]."""
        if "score" in out:
            return [{"score": float(s)} for s in out["score"]]
        results = []
        for label, probabilities in zip(out["label"], out["probabilities"]):
            values = [float(p) for p in probabilities]
            if self.label_names and len(self.label_names) == len(values):
                values = dict(zip(self.label_names, values))
            results.append({"label": _text(label), "probabilities": values})
        return results

    @staticmethod
    def _tags(values):
        """Results of tag_text's numpy outputs."""
        results = []
        for row, num_words in enumerate(values["num_words"]):
            entities = [{"start": int(values["entity_start"][row, k]),
                         "end": int(values["entity_end"][row, k]),
                         "type": _text(values["entity_type"][row, k]),
                         "text": _text(values["entity_text"][row, k])}
                        for k in range(values["num_entities"][row])]
            results.append({
                "words": [_text(w) for w in values["words"][row, :num_words]],
                "tags": [_text(t) for t in values["tag"][row, :num_words]],
                "entities": entities})
        return results
