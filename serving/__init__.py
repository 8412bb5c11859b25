"""Serving BERT: SavedModels that take raw text.

    from bert_tf1.serving import export_model, export_saved_model
    export_model(model, "export/mine")   # a model in memory
    export_saved_model("export/mrpc", model_type="classifier", ...)

One module per served model on the shared `text_module`; `export` builds
and writes them; `predictions` calls them on rows of text; `pipelines`
answers questions and tags words with an in-memory model.
"""
from bert_tf1.serving.export import (MODEL_TYPES, ExportExistsError,
                                     build_serving_module, export_model,
                                     export_saved_model, serving_module)

__all__ = ["MODEL_TYPES", "ExportExistsError", "build_serving_module",
           "export_model", "export_saved_model", "serving_module"]
