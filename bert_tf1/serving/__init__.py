"""Serving BERT (docs/serving.md, docs/deploying.md): one road from any
model to every runtime. `modules` serves an in-memory model from raw text
(one module per model type on the shared `text_module`); `export` writes it
in any format (`formats`: the raw-text and numeric SavedModels, OpenVINO,
LiteRT, ONNX); `predictions` answers raw text, whatever runs the model
(`runners`).
"""
from bert_tf1.serving.export import (ExportExistsError, build_serving_module,
                                     export_model, export_saved_model,
                                     load_served_model)
from bert_tf1.serving.formats.info import MODEL_TYPES
from bert_tf1.serving.modules import serving_module

__all__ = ["MODEL_TYPES", "ExportExistsError", "build_serving_module",
           "export_model", "export_saved_model", "load_served_model",
           "serving_module"]
