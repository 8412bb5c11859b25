"""The lower-casing record beside a folder's vocab.txt."""
import json

import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization import lower_case_record


def test_round_trip_keeps_other_keys(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": 512}))
    assert lower_case_record.read_lower_case(tmp_path) is None
    lower_case_record.write_lower_case(tmp_path, False)
    assert lower_case_record.read_lower_case(tmp_path) is False
    assert lower_case_record.read_lower_case(tmp_path / "vocab.txt") is False
    record = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert record == {"model_max_length": 512, "do_lower_case": False}


def test_missing_and_bad_records(tmp_path):
    assert lower_case_record.read_lower_case(tmp_path) is None
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": "yes"}')
    with pytest.raises(UserError, match="do_lower_case must be true or false"):
        lower_case_record.read_lower_case(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text("[1]")
    with pytest.raises(UserError, match="expected a JSON object"):
        lower_case_record.read_lower_case(tmp_path)
