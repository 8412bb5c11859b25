"""TensorFlow (ours, keras-hub) and NumPy variants of `benchmarks/compare.py`.

    python benchmarks/tf_bert.py '<json settings>'   (started by compare.py)

One variant per process, speaking `benchmarks/bench_protocol.py`. Settings
as in `benchmarks/torch_bert.py`, plus `onednn` (sets TF_ENABLE_ONEDNN_OPTS
before TensorFlow is imported: TensorFlow 2.21 leaves oneDNN off on CPUs
without AVX-512). Variants:
- "ours": inference of our `BertModel` (a `tf.function`, dropout off) in
  "fp32"; "bf16" = `bert_tf1.modeling.inference.copies.bfloat16_inference_copy` (bfloat16
  weights, no per-call casts); "int8" = `bert_tf1.modeling.inference.int8.quantize_int8`;
  fine-tuning = one `train_on_batch` of `BertClassifier` with the original
  optimizer (AdamWeightDecay, clipping at 1.0), "bf16" = `mixed_bfloat16`;
- "ours_mixed": inference under `mixed_bfloat16` (float32 weights cast per
  call), to show what the bfloat16 copy saves;
- "keras_hub": keras-hub `BertBackbone` / `BertTextClassifier` (+ the same
  optimizer), "bf16" = `mixed_bfloat16`; always the tanh GELU (its only one);
- "matmul_tf": the limit chain (see compare.py) in TensorFlow: MatMul +
  BiasAdd in float32 or bfloat16; "int8": XLA's s8 x s8 -> s32 matmul
  (what `bert_tf1.modeling.inference.int8` runs) on fixed codes;
- "matmul_numpy": the float32 chain with `np.matmul` (NumPy's BLAS).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_protocol import Unavailable, pin_threads, serve  # noqa: E402


def _numpy_chain(settings):
    import numpy as np
    c = settings["config"]
    tokens = settings["batch_size"] * settings["seq_length"]
    rng = np.random.default_rng(1)
    x = rng.standard_normal((tokens, c["hidden_size"]), np.float32)
    weights = []
    for _ in range(settings["chain_pairs"]):
        weights.append(rng.standard_normal(
            (c["hidden_size"], c["intermediate_size"]), np.float32) * 0.03)
        weights.append(rng.standard_normal(
            (c["intermediate_size"], c["hidden_size"]), np.float32) * 0.02)

    def run():
        y = x
        for w in weights:
            y = y @ w
        return y
    return run


def _tf_chain(settings, tf):
    import numpy as np
    c = settings["config"]
    tokens = settings["batch_size"] * settings["seq_length"]
    hidden, inner = c["hidden_size"], c["intermediate_size"]
    rng = np.random.default_rng(1)
    shapes = [(hidden, inner), (inner, hidden)] * settings["chain_pairs"]
    precision = settings["precision"]
    if precision == "int8":
        kernels = [tf.constant(rng.integers(-127, 128, shape).astype(np.int8))
                   for shape in shapes]
        codes = {n: tf.constant(rng.integers(-127, 128, (tokens, n)).astype(np.int8))
                 for n in (hidden, inner)}

        @tf.function(jit_compile=True)
        def int8_chain():
            # Each matmul on fixed codes: the kernel rate, no quantization
            # (int8 x int8 -> int32 under XLA, as Keras's int8 Dense runs in
            # `bert_tf1.modeling.inference.int8`).
            return [tf.linalg.matmul(codes[k.shape[0]], k, output_type=tf.int32)
                    for k in kernels]
        return lambda: [t.numpy() for t in int8_chain()]
    dtype = tf.bfloat16 if precision == "bf16" else tf.float32
    x = tf.constant(rng.standard_normal((tokens, hidden)), dtype)
    # Variables and an argument, not constants, which grappler would fold.
    weights = [tf.Variable(tf.constant(rng.standard_normal(s) / np.sqrt(s[0]), dtype))
               for s in shapes]
    biases = [tf.Variable(tf.zeros((s[1],), dtype)) for s in shapes]

    @tf.function
    def chain(x):
        # With a bias add, as in the model: oneDNN then runs its fused kernel.
        for w, b in zip(weights, biases):
            x = tf.nn.bias_add(tf.matmul(x, w), b)
        return x
    return lambda: chain(x).numpy()


def _inputs(settings, tf):
    import numpy as np
    batch_size, seq_length = settings["batch_size"], settings["seq_length"]
    rng = np.random.default_rng(0)
    segment_ids = np.zeros((batch_size, seq_length), "int32")
    segment_ids[:, seq_length // 2:] = 1
    ids = rng.integers(1, settings["config"]["vocab_size"], (batch_size, seq_length))
    features = {"input_ids": tf.constant(ids.astype("int32")),
                "input_mask": tf.ones((batch_size, seq_length), tf.int32),
                "segment_ids": tf.constant(segment_ids)}
    labels = tf.constant(rng.integers(0, 2, (batch_size,)).astype("int32"))
    return features, labels


def _with_policy(keras, policy, build):
    keras.mixed_precision.set_global_policy(policy)
    try:
        return build()
    finally:
        keras.mixed_precision.set_global_policy("float32")


def _ours(settings, tf, keras):
    from bert_tf1.modeling import BertClassifier, BertConfig, BertModel
    from bert_tf1.modeling.optimization import create_optimizer
    config = BertConfig.from_dict(settings["config"])
    precision, variant = settings["precision"], settings["variant"]
    features, labels = _inputs(settings, tf)
    if settings["mode"] == "train":
        if precision == "int8" or variant != "ours":
            raise Unavailable("fine-tuning: ours in fp32 or bf16 only")
        policy = "mixed_bfloat16" if precision == "bf16" else "float32"
        model = _with_policy(keras, policy, lambda: BertClassifier(config, num_labels=2))
        model.compile(optimizer=create_optimizer(2e-5, 10_000, 1_000, model=model))
        return lambda: model.train_on_batch(features, labels)
    if variant == "ours_mixed":
        model = _with_policy(keras, "mixed_bfloat16", lambda: BertModel(config))
    else:
        model = BertModel(config)
    if variant == "ours" and precision == "bf16":
        from bert_tf1.modeling.inference.copies import bfloat16_inference_copy
        model = bfloat16_inference_copy(model)
    if precision == "int8":
        from bert_tf1.modeling.inference.int8 import quantize_int8
        # Called below like the model; its own tf.function runs under XLA.
        model = quantize_int8(model)

    @tf.function
    def infer(inputs):
        outputs = model(inputs, training=False)
        return outputs["sequence_output"], outputs["pooled_output"]
    return lambda: [t.numpy() for t in infer(features)]


def _keras_hub(settings, tf, keras):
    from keras_hub import models as keras_hub_models
    from bert_tf1.modeling import BertConfig
    from bert_tf1.modeling.interop.keras_hub import backbone_for_config
    from bert_tf1.modeling.optimization import create_optimizer
    if settings["precision"] not in ("fp32", "bf16"):
        raise Unavailable("keras-hub: fp32 and bf16 only")
    # BertBackbone has only the tanh GELU: a "gelu_exact" config (all-MiniLM-
    # L6-v2) is timed with it (the same matmuls; the activation differs).
    config = BertConfig.from_dict(dict(settings["config"], hidden_act="gelu"))
    policy = "mixed_bfloat16" if settings["precision"] == "bf16" else "float32"
    features, labels = _inputs(settings, tf)
    features = {"token_ids": features["input_ids"],
                "segment_ids": features["segment_ids"],
                "padding_mask": features["input_mask"]}
    if settings["mode"] == "infer":
        backbone = _with_policy(keras, policy, lambda: backbone_for_config(config))

        @tf.function
        def infer(inputs):
            outputs = backbone(inputs, training=False)
            return outputs["sequence_output"], outputs["pooled_output"]
        return lambda: [t.numpy() for t in infer(features)]
    model = _with_policy(keras, policy, lambda: keras_hub_models.BertTextClassifier(
        backbone_for_config(config), num_classes=2, preprocessor=None))
    model.compile(optimizer=create_optimizer(2e-5, 10_000, 1_000, model=model),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return lambda: model.train_on_batch(features, labels)


def build(settings):
    """The callable for `settings` (see the module docstring)."""
    pin_threads(settings)
    if settings["variant"] == "matmul_numpy":
        if settings["precision"] != "fp32":
            raise Unavailable("NumPy: fp32 only")
        if settings["threads"]:  # before NumPy loads its BLAS
            for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ[name] = str(settings["threads"])
        return _numpy_chain(settings)
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if settings.get("onednn") else "0"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import tensorflow as tf
    import keras
    if settings["threads"]:
        tf.config.threading.set_intra_op_parallelism_threads(settings["threads"])
        tf.config.threading.set_inter_op_parallelism_threads(settings["threads"])
    if settings["variant"] == "matmul_tf":
        return _tf_chain(settings, tf)
    if settings["variant"] == "keras_hub":
        return _keras_hub(settings, tf, keras)
    return _ours(settings, tf, keras)


if __name__ == "__main__":
    serve(build)
