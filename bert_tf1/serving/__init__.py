"""Serving BERT: SavedModels that take raw text (docs/serving.md). One
module per served model on the shared `text_module`; `export` builds and
writes them; `predictions` calls them on rows of text; `pipelines` answers
questions and tags words with an in-memory model.
"""
from bert_tf1.serving.export import (MODEL_TYPES, ExportExistsError,
                                     build_serving_module, export_model,
                                     export_saved_model, serving_module)

__all__ = ["MODEL_TYPES", "ExportExistsError", "build_serving_module",
           "export_model", "export_saved_model", "serving_module"]
