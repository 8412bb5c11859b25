"""Bad inputs of extract_features.py."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _extract, _write


@case("extract_features.py")
def extract_missing_input_file(folder):
    path = folder / "no_input.txt"
    return _extract(folder, input_file=path), [str(path), "--input_file"]


@case("extract_features.py")
def extract_non_utf8_input_file(folder):
    path = _write(folder / "latin1.txt",
                  "Hello\nCaf\xe9 au lait\n".encode("latin-1"))
    return _extract(folder, input_file=path), [str(path), "2", "UTF-8"]


@case("extract_features.py")
def extract_layer_out_of_range(folder):
    return _extract(folder, layers="-1,-5"), ["--layers", "-5"]


@case("extract_features.py")
def extract_npy_without_pooling(folder):
    path = folder / "features.npy"
    return _extract(folder, output_file=path), [str(path), "--pooling"]


@case("extract_features.py")
def extract_l2_normalize_without_pooling(folder):
    return _extract(folder, l2_normalize=True), ["--l2_normalize",
                                                 "--pooling"]


@case("extract_features.py")
def extract_pooling_of_several_layers(folder):
    return (_extract(folder, pooling="mean", layers="-1,-2"),
            ["--pooling=mean", "--layers=-1,-2", "2"])
