"""Serving BERT: SavedModels that take raw text.

    from serving import export_saved_model
    export_saved_model("export/mrpc", model_type="classifier", ...)

This package sits above `modeling/` and `data/` (it joins the in-graph
tokenizer and the model); `tasks.export`, `tasks.predict_text` and their
scripts use it. One module per served model (`classifier`, `squad`,
`encoder`, `tagger`, `multiple_choice`) on the shared `text_module`; their
in-graph helpers (`squad_span`, `tagging_windows`, `entity_spans`); `export`
builds and writes them; `predictions` calls an export (or the same module in
memory) on rows of text and gives JSON-ready results.
"""
from serving.export import (MODEL_TYPES, ExportExistsError,
                            build_serving_module, export_saved_model)

__all__ = ["MODEL_TYPES", "ExportExistsError", "build_serving_module",
           "export_saved_model"]
