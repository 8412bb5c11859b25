"""benchmarks/real_model.py's cache, resume and table logic (no training:
the runs are replaced by a recorder)."""
import importlib.util
import json

import pytest

from tests.conftest import REPO_ROOT


@pytest.fixture()
def real_model(monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "real_model_benchmark", REPO_ROOT / "benchmarks" / "real_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "model_folders", lambda args: ("g", "h"))
    monkeypatch.setattr(module, "torch_available", lambda python: True)
    return module


def _entry(row, framework, seed, metrics, wall, learning_rate=2e-3):
    return {"recipe": {"learning_rate": learning_rate}, "row": row, "framework": framework, "seed": seed,
            "metrics": metrics, "wall_s": wall, "train_s": 10.0, "steps": 5,
            "train_examples_per_s": 16.0, "load_start": 1.5,
            "load_end": 2.5, "tensorflow": "tf-x", "keras": "k-y",
            "torch": "t-z", "transformers": "tr-w"}


def test_resume_runs_only_missing_entries_and_rerun_redoes(real_model,
                                                           tmp_path,
                                                           monkeypatch):
    cache = tmp_path / "cache.json"
    calls = []

    def fake_run(row, framework, seed, google, hf, args):
        calls.append((row, framework, seed))
        if (row, framework) == ("rte", "torch"):
            return None  # a failed run leaves no entry
        return _entry(row, framework, seed, {"eval_accuracy": 0.5}, 1.0)

    monkeypatch.setattr(real_model, "run_one", fake_run)
    argv = [f"--cache={cache}", "--rows=rte,mrpc,wnut17_feature"]
    real_model.main(argv + ["--seeds=1"])
    assert calls == [("rte", "ours", 1), ("rte", "torch", 1),
                     ("mrpc", "ours", 1), ("mrpc", "torch", 1),
                     ("wnut17_feature", "ours", 1)]
    saved = json.loads(cache.read_text())["entries"]
    assert sorted(saved) == ["mrpc/ours/1", "mrpc/torch/1", "rte/ours/1",
                             "wnut17_feature/ours/1"]
    calls.clear()
    real_model.main(argv)  # MRPC's own seeds: 1 is cached, 2 and 3 are not
    assert calls == [("rte", "torch", 1), ("mrpc", "ours", 2),
                     ("mrpc", "torch", 2), ("mrpc", "ours", 3),
                     ("mrpc", "torch", 3)]
    calls.clear()
    real_model.main([f"--cache={cache}", "--rows=mrpc", "--seeds=2",
                     "--frameworks=ours", "--rerun"])
    assert calls == [("mrpc", "ours", 2)]


def test_table_rows_values_and_doc_markers(real_model, tmp_path):
    entries = {
        "stsb/ours/1": _entry("stsb", "ours", 1, {"eval_pearson": 0.8712,
                                                 "eval_spearman": 0.8699},
                              321.0),
        "stsb/torch/1": _entry("stsb", "torch", 1, {"eval_pearson": 0.8634,
                                                   "eval_spearman": 0.8621},
                               456.0),
        "wnut17_feature/ours/1": _entry("wnut17_feature", "ours", 1,
                                        {"eval_f1": 0.507}, 99.0),
        "wnut17_feature_lr5e-4/ours/1": _entry(
            "wnut17_feature_lr5e-4", "ours", 1, {"eval_f1": 0.3}, 9.0,
            learning_rate=5e-4),
        "mrpc/ours/2": _entry("mrpc", "ours", 2, {"eval_accuracy": 0.8,
                                                  "eval_f1": 0.85}, 50.0),
        "squad/torch/1": _entry("squad", "torch", 1, {"exact_match": 61.0,
                                                     "f1": 72.5}, 70.0),
    }
    table = real_model.render_table({"entries": entries})
    rows = {line.split("|")[1].strip(): [c.strip() for c in
                                         line.split("|")[1:-1]]
            for line in table.splitlines() if line.startswith("| ")}
    stsb = rows["STS-B (regression)"]
    assert stsb[2:5] == ["87.1 / 87.0", "86.3 / 86.2", "321 / 456"]
    assert stsb[6] == "1.5-2.5 / 1.5-2.5"
    assert stsb[7] == ("`python benchmarks/real_model.py --rows=stsb "
                       "--rerun --write_table`")
    feature = rows[real_model.TITLES["wnut17_feature"]]
    assert feature[2:4] == ["50.7", "(ours only)"]
    mrpc = rows["MRPC, seed 2"]
    assert mrpc[2:4] == ["80.0 / 85.0", "not run"]
    assert "--seeds=2" in mrpc[7]
    assert "MRPC, seed 1" not in rows and "RTE" not in rows
    assert rows[real_model.TITLES["squad"]][2:4] == ["not run", "61.0 / 72.5"]
    assert "0.0005: 30.0, 0.002: 50.7 (one seed each" in table
    assert not any(name.startswith("wnut17_feature_lr") for name in rows)
    assert "TensorFlow tf-x / Keras k-y" in table
    assert "PyTorch t-z / transformers tr-w" in table

    doc = tmp_path / "results.md"
    doc.write_text(f"before\n{real_model.TABLE_START}\nold table\n"
                   f"{real_model.TABLE_END}\nafter\n")
    real_model.write_table({"entries": entries}, str(doc))
    text = doc.read_text()
    assert "old table" not in text
    assert text.startswith(f"before\n{real_model.TABLE_START}\n| row |")
    assert text.endswith(f"{real_model.TABLE_END}\nafter\n")
    assert table in text


def test_lora_rows_pass_the_flags_and_tabulate_the_sweep(real_model,
                                                         tmp_path):
    import types

    args = types.SimpleNamespace(python="python", log_steps=10)
    command = real_model.ours_command("mrpc_lora", 1, "g", args, "out")
    assert "--lora_rank=8" in command and "--lora_targets=query,value" in command
    assert f"--learning_rate={real_model.LORA_LEARNING_RATE}" in command
    assert not any(part.startswith("--lora") for part in
                   real_model.ours_command("mrpc", 1, "g", args, "out"))
    assert real_model.ROWS["sst2_lora"]["frameworks"] == ("ours",)
    entries = {}
    for rate, accuracy in ((2e-4, 0.70), (1e-3, 0.75)):
        row = f"mrpc_lora_lr{rate:.0e}".replace("e-0", "e-")
        entry = _entry(row, "ours", 1, {"eval_accuracy": accuracy,
                                        "eval_f1": 0.8}, 5.0, rate)
        entry["adapters_bytes"] = 2_500_000
        entries[f"{row}/ours/1"] = entry
    entries["mrpc_lora/ours/1"] = _entry("mrpc_lora", "ours", 1, {
        "eval_accuracy": 0.77, "eval_f1": 0.84}, 60.0)
    table = real_model.render_table({"entries": entries})
    assert ("MRPC dev accuracy / F1: 0.0002: 70.0 / 80.0, 0.001: 75.0 / 80.0;"
            " adapters file 2.50 MB") in table
    assert "| MRPC, LoRA rank 8 query/value, seed 1 | acc / F1 | 77.0 / 84.0 " \
           "| (ours only) |" in table
