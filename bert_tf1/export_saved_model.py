r"""Exports a trained BERT as a SavedModel that serves raw text.

A training script's output_dir is a model folder: it records the config,
vocab, casing, max_seq_length and labels, so it is all the export needs:

    python export_saved_model.py --init_checkpoint=/tmp/mrpc_output \
      --export_dir=/tmp/mrpc_export --format=saved_model,numeric,openvino,litert,onnx

Any other checkpoint takes the vocab, case rule, config and max_seq_length
of training as flags:

    python export_saved_model.py --model_type=classifier --task_name=MRPC \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --do_lower_case=true \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --export_dir=/tmp/mrpc_export

Signatures: docs/serving.md; formats: docs/deploying.md. An existing
`--export_dir` is never overwritten. Load an export with `import
tensorflow_text` first, or read it with predict_text.py.
"""

from bert_tf1.tasks.quiet_start import start_tensorflow

start_tensorflow()  # before anything else imports TensorFlow

from absl import flags  # noqa: E402

from bert_tf1.tasks import cli, script_flags  # noqa: E402

flags.DEFINE_enum("model_type", None,
                  ["classifier", "squad", "encoder", "tagger",
                   "multiple_choice"],
                  "What the checkpoint holds: a run_classifier.py classifier, "
                  "a run_squad.py span predictor, a run_ner.py tagger, a "
                  "run_multiple_choice.py model, or just the encoder (a "
                  "run_embeddings.py sentence embedder is one). Default: "
                  "encoder for a model folder with a pooling.json "
                  "(run_embeddings.py, fetch_pretrained.py), else "
                  "classifier.")
script_flags.define_model_flags(
    max_seq_length=None,
    max_seq_length_help="The sequence length of training (default: the "
    "model folder's record, else 128).",
    init_checkpoint_help="The checkpoint to export: a prefix (model.ckpt-N, "
    "bert_model.ckpt) or a directory (an output_dir: its newest checkpoint; "
    "alone, it gives --bert_config_file, --vocab_file, --do_lower_case, "
    "--max_seq_length and the labels too).")
flags.DEFINE_string("export_dir", None,
                    "The SavedModel directory to create (must not exist).")
script_flags.define_served_model_flags()
flags.DEFINE_enum(
    "quantize", None, ["int8"],
    "int8: the encoder's Dense layers in int8 (Keras int8 quantization, run "
    "under XLA), 2.5-2.7x faster than float32 in our CPU measurement. With "
    "--format: each format's own int8 (see --format).")
flags.DEFINE_list(
    "format", None,
    "Deployment formats, comma-separated: saved_model (the raw-text "
    "SavedModel), numeric (ids in, numbers out: any TF Serving / TF Java), "
    "openvino (IR), litert (.tflite, builtin ops), onnx (tf2onnx, opset 17); "
    "one folder each under --export_dir (docs/deploying.md). Unset: one "
    "raw-text SavedModel at --export_dir, as before. With --quantize=int8: "
    "saved_model in Keras int8, openvino NNCF int8 weights, litert "
    "dynamic-range int8, onnx ONNX Runtime dynamic int8; numeric stays "
    "float32. openvino, litert, onnx need the [deploy] extra.")
flags.DEFINE_integer(
    "serving_version", None,
    "With --format: write saved_model/ and numeric/ in TF Serving's layout, "
    "<format>/<serving_version>/saved_model.pb.")
flags.DEFINE_enum(
    "pooling", None, ["mean", "cls", "max"],
    "Encoder: how embed_text (and every format's `embedding`) pools the last "
    "layer into one vector per text (mean over the real tokens, [CLS] and "
    "[SEP] included; cls: the [CLS] token's vector, not the tanh pooler), "
    "as extract_features.py --pooling. Default: the model folder's "
    "pooling.json, else mean; a value that differs from pooling.json is "
    "refused.")
flags.DEFINE_bool("l2_normalize", False,
                  "Encoder: embed_text divides each embedding by its L2 norm. "
                  "Default: the model folder's pooling.json, else false.")
cli.define_common_flags(checkpoint_flags=False)

flags.mark_flags_as_required(["init_checkpoint", "export_dir"])


def run():
    """Flags -> `ExportConfig` -> `ExportTask.run()`."""
    from bert_tf1.tasks.export import ExportConfig, ExportTask

    # Not given: the model folder's pooling record decides.
    given = {} if flags.FLAGS["l2_normalize"].present else {
        "l2_normalize": None}
    export_dir = ExportTask(cli.config_from_flags(
        ExportConfig, **script_flags.served_model_overrides(),
        **given)).run()
    print(f"Wrote {export_dir}")


def command():
    """`python export_saved_model.py`, `python -m bert_tf1.export_saved_model`
    and `bert-export-saved-model`: parses the command line and runs `run`
    under the one error path."""
    cli.main(run, script=__name__, quiet=True)


if __name__ == "__main__":
    command()
