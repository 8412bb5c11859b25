"""A converted Hugging Face folder has the file modes of every other output."""
import stat

from bert_tf1.modeling.conversion.convert import convert


def test_safetensors_gets_the_usual_mode(fixtures_dir, tmp_path):
    hf_dir = convert("tf1", str(fixtures_dir / "tf1_vocab_mrpc_classifier"),
                     "huggingface", str(tmp_path / "hf"))
    reference = tmp_path / "reference.txt"  # what open() gives: 0666 - umask
    reference.write_text("")
    expected = stat.S_IMODE(reference.stat().st_mode)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode)
             for path in (tmp_path / "hf").iterdir()}
    assert "model.safetensors" in modes and str(hf_dir).endswith("hf")
    assert modes == dict.fromkeys(modes, expected), modes
