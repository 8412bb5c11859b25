"""A pooling flag that differs from the model folder's pooling record
(pooling.json, what run_embeddings.py trained with): export_saved_model.py
and extract_features.py name the flag and the file."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _extract
from tests.helpers.embedder_folder import write_embedder_folder


@case("export_saved_model.py")
def export_pooling_other_than_the_folders(folder):
    model = write_embedder_folder(folder / "embedder", "mean", True)
    return ({"init_checkpoint": model, "export_dir": folder / "export",
             "pooling": "cls"},
            ["--pooling=cls", str(model / "pooling.json"), "pooling=mean"])


@case("export_saved_model.py")
def export_l2_normalize_other_than_the_folders(folder):
    model = write_embedder_folder(folder / "embedder", "mean", True)
    return ({"init_checkpoint": model, "export_dir": folder / "export",
             "l2_normalize": False},
            ["--l2_normalize=false", str(model / "pooling.json"),
             "l2_normalize=true"])


@case("extract_features.py")
def extract_pooling_other_than_the_folders(folder):
    model = write_embedder_folder(folder / "embedder", "max", False)
    return (_extract(folder, init_checkpoint=model, pooling="mean",
                     output_file=folder / "vectors.npy"),
            ["--pooling=mean", str(model / "pooling.json"), "pooling=max"])
