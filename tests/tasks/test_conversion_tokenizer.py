"""convert_checkpoint.py --input_format=huggingface on a folder whose
tokenizer is only `tokenizer.json`: the vocab is written as vocab.txt in id
order, do_lower_case comes from the normaliser and is recorded beside it;
a tokenizer FullTokenizer cannot reproduce, or a contradicting
--do_lower_case, is one line and writes nothing.
"""
import json

import pytest

from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.modeling.conversion.convert import convert
from bert_tf1.tasks.conversion import ConversionConfig, ConversionTask
from bert_tf1.tasks.errors import UserError, one_line
from tests.data.tokenization.test_tokenizer_json import (VOCAB,
                                                         bert_tokenizer_json)
from tests.helpers.script_runner import run_script

# tf1_tiny_classifier has 512 ids.
TINY_VOCAB = VOCAB + [f"w{i}" for i in range(512 - len(VOCAB))]


@pytest.fixture(scope="module")
def hf_folder(fixtures_dir, tmp_path_factory):
    """tf1_tiny_classifier as a Hugging Face folder without a vocab."""
    folder = tmp_path_factory.mktemp("hf") / "model"
    convert("tf1", str(fixtures_dir / "tf1_tiny_classifier"), "huggingface",
            str(folder))
    assert not (folder / "vocab.txt").exists()
    return folder


def with_tokenizer(hf_folder, tmp_path, **settings):
    folder = tmp_path / "input"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((hf_folder / name).read_bytes())
    (folder / "tokenizer.json").write_text(json.dumps(bert_tokenizer_json(
        vocab=TINY_VOCAB, **settings)), encoding="utf-8")
    # sentence-transformers' own flag, not the tokenizer's: ignored.
    (folder / "sentence_bert_config.json").write_text(
        '{"max_seq_length": 256, "do_lower_case": false}')
    return folder


def convert_task(folder, output, **changes):
    return ConversionTask(ConversionConfig(
        input_format="huggingface", input_path=str(folder),
        output_format="tf1", output_path=str(output), **changes))


@pytest.mark.parametrize("lowercase", [True, False])
def test_vocab_and_lower_casing_come_from_tokenizer_json(hf_folder, tmp_path,
                                                         lowercase):
    folder = with_tokenizer(hf_folder, tmp_path, lowercase=lowercase)
    prefix = convert_task(folder, tmp_path / "tf1").run()
    assert prefix == str(tmp_path / "tf1" / "bert_model.ckpt")
    assert (tmp_path / "tf1" / "vocab.txt").read_text(
        encoding="utf-8").splitlines() == TINY_VOCAB
    assert read_lower_case(tmp_path / "tf1") is lowercase
    # An explicit flag that agrees is accepted.
    convert_task(folder, tmp_path / "again", do_lower_case=lowercase).run()
    assert read_lower_case(tmp_path / "again") is lowercase


def _one_line_error(task):
    with pytest.raises(UserError) as raised:
        task.run()
    return one_line(raised.value)


def test_contradicting_flag_and_unreproducible_tokenizer(hf_folder,
                                                         tmp_path):
    folder = with_tokenizer(hf_folder, tmp_path, lowercase=True)
    message = _one_line_error(convert_task(folder, tmp_path / "out",
                                           do_lower_case=False))
    assert message == (
        f"--do_lower_case=false contradicts {folder / 'tokenizer.json'} "
        "(do_lower_case true); leave the flag out to use the tokenizer's "
        "setting.")
    (folder / "tokenizer.json").write_text(json.dumps(bert_tokenizer_json(
        vocab=TINY_VOCAB, lowercase=True, strip_accents=False)))
    message = _one_line_error(convert_task(folder, tmp_path / "out"))
    assert "lowercase=true with strip_accents=false" in message
    assert not (tmp_path / "out").exists()


def test_record_beside_a_tf1_input_travels_to_the_output(hf_folder,
                                                         tmp_path):
    """A converted TF1 folder converted again keeps its recorded case."""
    folder = with_tokenizer(hf_folder, tmp_path, lowercase=False)
    convert_task(folder, tmp_path / "tf1").run()
    ConversionTask(ConversionConfig(
        input_format="tf1", input_path=str(tmp_path / "tf1"),
        output_format="huggingface", output_path=str(tmp_path / "hf2"))).run()
    assert json.loads((tmp_path / "hf2" / "tokenizer_config.json").read_text(
    ))["do_lower_case"] is False
    assert _one_line_error(ConversionTask(ConversionConfig(
        input_format="tf1", input_path=str(tmp_path / "tf1"),
        output_format="huggingface", output_path=str(tmp_path / "hf3"),
        do_lower_case=True))).startswith("--do_lower_case=true contradicts ")


@pytest.mark.slow
def test_script_one_line_error_and_default(hf_folder, tmp_path):
    folder = with_tokenizer(hf_folder, tmp_path, lowercase=True)
    failed = run_script("convert_checkpoint.py", {
        "input_format": "huggingface", "input_path": folder,
        "output_format": "tf1", "output_path": tmp_path / "out",
        "do_lower_case": False}, check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1].startswith(
        "convert_checkpoint.py: error: --do_lower_case=false contradicts ")
    run_script("convert_checkpoint.py", {
        "input_format": "huggingface", "input_path": folder,
        "output_format": "tf1", "output_path": tmp_path / "out"})
    assert read_lower_case(tmp_path / "out") is True
