"""Exporting BERT: SavedModels that serve raw text (`serving`)."""
from modeling.export.serving import (MODEL_TYPES, build_serving_module,
                                     export_saved_model)

__all__ = ["MODEL_TYPES", "build_serving_module", "export_saved_model"]
