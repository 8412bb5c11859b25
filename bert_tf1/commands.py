"""The installed commands: `bert-run-classifier` runs `run_classifier.py`
(the module `bert_tf1.run_classifier`), and so on for every script at the
repository root (setup.py's `console_scripts`). Each runs as
`python -m bert_tf1.<script>` would: same flags, same files."""
import runpy

#: The scripts at the repository root, by module name.
SCRIPTS = ("convert_checkpoint", "create_pretraining_data", "export_saved_model",
           "extract_features", "fetch_pretrained", "predict_text",
           "run_classifier", "run_multiple_choice", "run_ner",
           "run_pretraining", "run_squad")


def _command(script):
    def run():
        runpy.run_module(f"bert_tf1.{script}", run_name="__main__",
                         alter_sys=True)
    run.__name__ = run.__qualname__ = script
    run.__doc__ = f"Runs {script}.py with the command line's flags."
    return run


for _script in SCRIPTS:
    globals()[_script] = _command(_script)
