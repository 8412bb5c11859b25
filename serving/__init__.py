"""Serving BERT: SavedModels that take raw text.

    from serving import export_saved_model
    export_saved_model("export/mrpc", model_type="classifier", ...)

This package sits above `modeling/` and `data/` (it joins the in-graph
tokenizer and the model); `tasks.export` and `export_saved_model.py` use it.
One module per served model (`classifier`, `squad`, `encoder`) on the shared
`text_module`; `export` builds and writes them.
"""
from serving.export import (MODEL_TYPES, ExportExistsError,
                            build_serving_module, export_saved_model)

__all__ = ["MODEL_TYPES", "ExportExistsError", "build_serving_module",
           "export_saved_model"]
