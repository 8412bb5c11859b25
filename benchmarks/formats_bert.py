"""Our deployment formats as variants of `benchmarks/compare.py`.

    python benchmarks/formats_bert.py '<json settings>'   (started by compare.py)

One variant per process, speaking `benchmarks/bench_protocol.py`. The model
is what `export_saved_model.py --model_type=encoder --format=...` wrote from
the real checkpoint (compare.py's `--model_dir`) into `settings["exports"]`:
`fp32/` (numeric, openvino, litert, onnx) and `int8/` (the same with
`--quantize=int8`). Every variant runs the numeric signature at the row's
batch on the same ids as the peers (random ids, mask all ones, second half of
the segment ids 1) and returns its outputs as NumPy arrays. Variants:
- "numeric": the numeric SavedModel in TensorFlow (oneDNN on); fp32 only;
- "openvino": the IR in OpenVINO on the CPU; fp32 = INFERENCE_PRECISION_HINT
  f32; bf16 = the fp32 IR with the hint bf16 (OpenVINO's own bf16 inference,
  on AVX512_BF16 or AMX); int8 = the int8 export (NNCF weight compression),
  hint f32;
- "openvino_ptq": int8 by NNCF post-training quantization (`nncf.quantize`,
  transformer preset) of the fp32 IR, calibrated here on 32 random-id
  batches (speed only: `deploy_accuracy.py` calibrates on SST-2 text);
- "litert": the .tflite in ai-edge-litert's interpreter (XNNPACK); int8 =
  the export's dynamic-range int8;
- "onnx": the tf2onnx model in ONNX Runtime, all graph optimizations; int8 =
  the export's dynamic int8;
- "onnx_ortopt": the same after ONNX Runtime's BERT optimizer
  (`onnxruntime.transformers.optimizer`, the step the transformers peer
  gets); int8 = `quantize_dynamic` of that. Its fused-op counts go to stderr.
The runtimes are driven directly, not through `bert_tf1.serving.formats.*.Runner`:
those modules import TensorFlow (whose thread pools would share the process)
and take no thread settings.
"""
import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_protocol import Unavailable, pin_threads, serve  # noqa: E402

NAMES = ("input_ids", "input_mask", "segment_ids")
PRECISIONS = {"numeric": ("fp32",), "openvino": ("fp32", "bf16", "int8"),
              "openvino_ptq": ("int8",), "litert": ("fp32", "int8"),
              "onnx": ("fp32", "int8"), "onnx_ortopt": ("fp32", "int8")}


def ids(settings, seed=0):
    """{name: int32 [batch, seq]}: the peers' inputs (see torch_bert.py)."""
    import numpy as np
    batch_size, seq_length = settings["batch_size"], settings["seq_length"]
    rng = np.random.default_rng(seed)
    segment_ids = np.zeros((batch_size, seq_length), np.int32)
    segment_ids[:, seq_length // 2:] = 1
    return {"input_ids": rng.integers(1, settings["config"]["vocab_size"], (
                batch_size, seq_length)).astype(np.int32),
            "input_mask": np.ones((batch_size, seq_length), np.int32),
            "segment_ids": segment_ids}


def _folder(settings, name):
    precision = "int8" if settings["precision"] == "int8" else "fp32"
    folder = os.path.join(settings["exports"], precision, name)
    if not os.path.isdir(folder):
        raise Unavailable(f"no export at {folder}")
    return folder


def _numeric(settings, features):
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    if settings["threads"]:
        tf.config.threading.set_intra_op_parallelism_threads(settings["threads"])
        tf.config.threading.set_inter_op_parallelism_threads(settings["threads"])
    loaded = tf.saved_model.load(_folder(settings, "numeric"))
    function = loaded.signatures["serving_default"]
    constants = {name: tf.constant(value) for name, value in features.items()}
    return lambda: [t.numpy() for t in function(**constants).values()]


def openvino_model(settings):
    """The row's OpenVINO model (an `openvino.Model`, not compiled)."""
    import openvino
    folder = _folder(settings, "openvino")
    model = openvino.Core().read_model(os.path.join(folder, "model.xml"))
    if settings["variant"] != "openvino_ptq":
        return model
    cached = os.path.join(settings["exports"], "openvino_ptq", "model.xml")
    if os.path.isfile(cached):
        return openvino.Core().read_model(cached)
    fp32 = openvino.Core().read_model(os.path.join(
        settings["exports"], "fp32", "openvino", "model.xml"))
    calibration = [ids(dict(settings, batch_size=1), seed) for seed in range(32)]
    # NNCF's progress bars go to stdout, which is the protocol's pipe.
    with contextlib.redirect_stdout(sys.stderr):
        import nncf
        quantized = nncf.quantize(fp32, nncf.Dataset(calibration),
                                  model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=len(calibration))
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    openvino.save_model(quantized, cached + ".tmp.xml", compress_to_fp16=False)
    for ext in ("xml", "bin"):  # the cache is shared by the rows of a run
        os.replace(cached + f".tmp.{ext}", cached[:-3] + ext)
    return quantized


def _openvino(settings, features):
    import openvino
    model = openvino_model(settings)
    config = {"INFERENCE_PRECISION_HINT":
              "bf16" if settings["precision"] == "bf16" else "f32",
              "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1"}
    if settings["threads"]:
        config["INFERENCE_NUM_THREADS"] = str(settings["threads"])
    compiled = openvino.Core().compile_model(model, "CPU", config)
    print(f"openvino: {compiled.get_property('INFERENCE_PRECISION_HINT')}, "
          f"{compiled.get_property('INFERENCE_NUM_THREADS')} threads",
          file=sys.stderr)
    request = compiled.create_infer_request()

    def run():
        request.infer(features)
        return [request.get_output_tensor(i).data.copy()
                for i in range(len(compiled.outputs))]
    return run


def _litert(settings, features):
    from ai_edge_litert.interpreter import Interpreter
    interpreter = Interpreter(
        os.path.join(_folder(settings, "litert"), "model.tflite"),
        num_threads=settings["threads"] or None)
    run = interpreter.get_signature_runner("serving_default")
    return lambda: list(run(**features).values())


def onnx_ortopt(path, config, out_path):
    """ONNX Runtime's BERT optimizer on the tf2onnx model at `path`, saved to
    `out_path`; returns its fused-op counts."""
    from onnxruntime.transformers.optimizer import optimize_model
    optimized = optimize_model(
        path, model_type="bert", opt_level=0,
        num_heads=config["num_attention_heads"],
        hidden_size=config["hidden_size"])
    optimized.save_model_to_file(out_path)
    return {k: v for k, v in optimized.get_fused_operator_statistics().items()
            if v}


def _onnx(settings, features):
    import ort_session
    precision, variant = settings["precision"], settings["variant"]
    path = os.path.join(_folder(settings, "onnx"), "model.onnx")
    if variant == "onnx_ortopt":
        fp32 = os.path.join(settings["exports"], "fp32", "onnx", "model.onnx")
        stem = os.path.join(settings["workdir"], f"ours_ortopt_{os.getpid()}")
        fused = onnx_ortopt(fp32, settings["config"], stem + ".onnx")
        print(f"onnx_ortopt: fused ops {json.dumps(fused)}", file=sys.stderr)
        path = stem + ".onnx"
        if precision == "int8":
            path = ort_session.quantize_int8(path)
    session = ort_session.session(path, settings["threads"])
    # tf2onnx names the inputs after the function's arguments: by position.
    feeds = {i.name: features[n] for i, n in zip(session.get_inputs(), NAMES)}
    return lambda: session.run(None, feeds)


def build(settings):
    """The callable for `settings` (see the module docstring)."""
    pin_threads(settings)
    variant, precision = settings["variant"], settings["precision"]
    if settings["mode"] != "infer" or precision not in PRECISIONS[variant]:
        raise Unavailable(f"{variant}: inference in "
                          f"{', '.join(PRECISIONS[variant])} only")
    if not settings.get("exports"):
        raise Unavailable("needs --model_dir (the exports)")
    features = ids(settings)
    if variant == "numeric":
        return _numeric(settings, features)
    if variant.startswith("openvino"):
        return _openvino(settings, features)
    if variant == "litert":
        return _litert(settings, features)
    return _onnx(settings, features)


if __name__ == "__main__":
    serve(build)
