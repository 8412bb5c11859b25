"""docs/deploying.md's TF Serving requests, without a server (none is on
PyPI): each documented REST body (`{"instances": ...}` row format,
`{"inputs": ...}` columnar format) is fed to the signature it names on the
export the page makes (the MRPC fixture, max_seq_length 16), and the
documented response must be that signature's outputs: the same fields, the
same labels, numbers within the 4 decimals shown. The gRPC request is built
and answered by the page's own code (tests/test_readme.py runs it)."""
import json
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.serving.runners import load_saved_model
from bert_tf1.serving import export_saved_model
from tests.conftest import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "deploying.md"
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.MULTILINE | re.DOTALL)


def documented_exchanges():
    """[(request, response)] of the page's json blocks, in order."""
    blocks = [json.loads(text) for text in JSON_BLOCK.findall(
        PAGE.read_text(encoding="utf-8"))]
    requests = [i for i, block in enumerate(blocks) if "signature_name" in block]
    return [(blocks[i], blocks[i + 1]) for i in requests]


@pytest.fixture(scope="module")
def export(fixtures_dir, tmp_path_factory):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    folder = tmp_path_factory.mktemp("doc") / "mrpc_deploy"
    export_saved_model(
        str(folder), formats=("saved_model", "numeric"),
        model_type="classifier", bert_config_file=str(
            fixture / "bert_config.json"),
        vocab_file=str(fixture / "vocab.txt"), init_checkpoint=str(fixture),
        do_lower_case=True, max_seq_length=16, label_list=["0", "1"])
    return {name: load_saved_model(folder / name)
            for name in ("saved_model", "numeric")}


def _signature(served, request):
    """The signature the request names, on the export whose signature of
    that name takes the request's inputs."""
    given = set(request.get("inputs") or request["instances"][0])
    for loaded in served.values():
        function = loaded.signatures.get(request["signature_name"])
        if function is not None and set(
                function.structured_input_signature[1]) == given:
            return function
    raise AssertionError(f"no signature takes {request}")


def _as_json(value):
    """A numpy output as TF Serving's JSON writes it (strings as text)."""
    if value.dtype.kind in "SO":
        return np.vectorize(lambda v: v.decode("utf-8"))(value).tolist()
    return value.tolist()


def _same(documented, actual, where):
    if isinstance(documented, str) or isinstance(actual, str):
        assert documented == actual, where
    else:
        np.testing.assert_allclose(documented, actual, rtol=0, atol=1e-4,
                                   err_msg=where)


def test_the_page_shows_both_formats():
    exchanges = documented_exchanges()
    assert {"instances", "inputs"} == {
        key for request, _ in exchanges for key in request
        if key != "signature_name"}
    assert {"predictions", "outputs"} == {
        key for _, response in exchanges for key in response}


@pytest.mark.parametrize("index", range(len(documented_exchanges())))
def test_each_documented_request_gets_the_documented_response(index,
                                                              export):
    request, response = documented_exchanges()[index]
    function = _signature(export, request)
    specs = function.structured_input_signature[1]
    columns = request.get("inputs") or {
        name: [row[name] for row in request["instances"]]
        for name in request["instances"][0]}
    outputs = {name: _as_json(value.numpy()) for name, value in function(
        **{name: tf.constant(value, specs[name].dtype)
           for name, value in columns.items()}).items()}
    if "outputs" in response:   # columnar in, columnar out
        assert set(response["outputs"]) == set(outputs)
        for name, value in response["outputs"].items():
            _same(value, outputs[name], name)
    else:                        # rows in, rows out
        rows = response["predictions"]
        assert len(rows) == len(request["instances"])
        for row, documented in enumerate(rows):
            assert set(documented) == set(outputs)
            for name, value in documented.items():
                _same(value, outputs[name][row], f"row {row} {name}")
