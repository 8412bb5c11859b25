"""PyTorch and ONNX Runtime variants of `benchmarks/compare.py`, one per process.

    python benchmarks/torch_bert.py '<json settings>'   (started by compare.py)

Speaks the line protocol of `benchmarks/bench_protocol.py`. TensorFlow is
never imported here: with it loaded, PyTorch's OpenMP threads and
TensorFlow's pools contend and PyTorch steps took several times longer.

The model is what a PyTorch user would run: transformers `BertModel` /
`BertForSequenceClassification` with the config's GELU: `gelu_pytorch_tanh` (the
original's tanh GELU as one native kernel; transformers' `gelu_new` is the same
math in seven element-wise ops), or `gelu` (erf) for `gelu_exact` configs such
as all-MiniLM-L6-v2; transformers' default attention (SDPA).

Settings (JSON): `config` (bert_config.json fields), `mode` ("infer" or
"train"), `precision` ("fp32"; "bf16" = float32 weights under
`torch.autocast(bfloat16)`; "int8" = `torch.ao` dynamic quantization of every
Linear, fbgemm), `variant`:
- "torch_eager": `model.eval()` under `torch.inference_mode()` (inference) or
  one fine-tuning step (dropout on, AdamW, `clip_grad_norm_(1.0)`);
- "torch_compile": inference: `torch.compile` (inductor) with
  `torch._inductor.config.freezing = True` (weights folded as constants,
  oneDNN-prepacked linears) under `torch.no_grad()`; fine-tuning: the same
  step as torch_eager with the model under `torch.compile` (forward and
  backward compiled; the optimizer step and the clipping eager). Its first
  call, the compile, is made before `ready` and reported apart
  (`bench_protocol.compile_first`), never timed as a step;
- "onnxruntime": the same transformers model exported to ONNX, fused by
  ONNX Runtime's BERT optimizer (Attention, SkipLayerNorm, BiasGelu), run with
  all graph optimizations; "int8" = `onnxruntime.quantization.quantize_dynamic`
  of that model (int8 weights, uint8 activations quantized per call);
- "matmul_torch": the limit chain (see compare.py), `F.linear` in the row's
  dtype (int8: the fbgemm dynamic-quantized Linear).
`batch_size`, `seq_length`, `threads` (0: the framework's default), `cpus`
(cores to pin to, or none), `workdir` (a scratch folder for ONNX files),
`chain_pairs` (the chain's length).
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_protocol import (Unavailable, compile_first, pin_threads,  # noqa: E402
                            serve)


def _transformers_config(settings):
    import transformers
    c = settings["config"]
    return transformers.BertConfig(
        vocab_size=c["vocab_size"], hidden_size=c["hidden_size"],
        num_hidden_layers=c["num_hidden_layers"],
        num_attention_heads=c["num_attention_heads"],
        intermediate_size=c["intermediate_size"],
        # The same GELU as ours: the original's tanh form as one native kernel,
        # or the exact (erf) form for configs that say "gelu_exact".
        hidden_act="gelu" if c.get("hidden_act") == "gelu_exact" else "gelu_pytorch_tanh",
        hidden_dropout_prob=c["hidden_dropout_prob"],
        attention_probs_dropout_prob=c["attention_probs_dropout_prob"],
        max_position_embeddings=c["max_position_embeddings"],
        type_vocab_size=c["type_vocab_size"], num_labels=2)


def _features(settings, vocab_size):
    import torch
    batch_size, seq_length = settings["batch_size"], settings["seq_length"]
    generator = torch.Generator().manual_seed(0)
    features = {
        "input_ids": torch.randint(1, vocab_size, (batch_size, seq_length),
                                   generator=generator),
        "attention_mask": torch.ones(batch_size, seq_length, dtype=torch.long),
        "token_type_ids": torch.zeros(batch_size, seq_length, dtype=torch.long),
    }
    features["token_type_ids"][:, seq_length // 2:] = 1
    return features


def _autocast(precision):
    import torch
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")


def _quantize_dynamic(model):
    import torch
    return torch.ao.quantization.quantize_dynamic(
        model, {torch.nn.Linear}, dtype=torch.qint8)


def _inference(settings, compiled):
    import torch
    import transformers
    config = _transformers_config(settings)
    precision = settings["precision"]
    model = transformers.BertModel(config).eval()
    if precision == "int8":
        if compiled:
            raise Unavailable("torch.compile of a dynamic-quantized model is "
                              "not measured (use torch_eager int8)")
        model = _quantize_dynamic(model)
    features = _features(settings, config.vocab_size)
    if compiled:
        torch._inductor.config.freezing = True
        forward = torch.compile(model)
        context = torch.no_grad
    else:
        forward = model
        context = torch.inference_mode

    def infer():
        with context(), _autocast(precision):
            outputs = forward(**features)
            return outputs.last_hidden_state, outputs.pooler_output
    return compile_first(infer) if compiled else infer


def _train_step(settings, compiled):
    import torch
    import transformers
    config = _transformers_config(settings)
    precision = settings["precision"]
    if precision == "int8":
        raise Unavailable("no int8 training")
    model = transformers.BertForSequenceClassification(config).train()
    # The compiled module shares the model's parameters (the optimizer's).
    forward = torch.compile(model) if compiled else model
    features = _features(settings, config.vocab_size)
    labels = torch.randint(0, 2, (settings["batch_size"],),
                           generator=torch.Generator().manual_seed(1))
    # The original's exclusions: no weight decay on LayerNorm and biases.
    no_decay = [p for n, p in model.named_parameters()
                if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in model.named_parameters()
             if not ("LayerNorm" in n or n.endswith("bias"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01},
         {"params": no_decay, "weight_decay": 0.0}], lr=2e-5, eps=1e-6)

    def train_step():
        with _autocast(precision):
            logits = forward(**features).logits
        loss = torch.nn.functional.cross_entropy(logits.float(), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss
    return compile_first(train_step) if compiled else train_step


def _onnxruntime(settings):
    if importlib.util.find_spec("onnxruntime") is None or \
            importlib.util.find_spec("onnx") is None:
        raise Unavailable("onnxruntime/onnx not installed")
    precision = settings["precision"]
    if settings["mode"] != "infer" or precision not in ("fp32", "int8"):
        raise Unavailable("ONNX Runtime: fp32 and int8 inference only")
    import numpy as np
    import ort_session
    import torch
    import transformers
    from onnxruntime.transformers.optimizer import optimize_model

    config = _transformers_config(settings)
    model = transformers.BertModel(config).eval()
    features = _features(settings, config.vocab_size)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    stem = os.path.join(settings["workdir"], f"bert_{os.getpid()}")

    class Positional(torch.nn.Module):
        # transformers' forward takes these by keyword only reliably.
        def __init__(self):
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                                token_type_ids=token_type_ids)
            return outputs.last_hidden_state, outputs.pooler_output

    with torch.no_grad():
        # The TorchScript exporter: the dynamo one needs onnxscript.
        torch.onnx.export(
            Positional(), tuple(features[n] for n in names), stem + ".onnx",
            input_names=names, output_names=["sequence_output", "pooled_output"],
            opset_version=17, dynamo=False)
    # ONNX Runtime's own BERT fusions (Attention, SkipLayerNorm, BiasGelu)
    # where they load; else the plain export, which ORT_ENABLE_ALL still fuses
    # (Gelu, LayerNorm, MatMul+Add) when the session is created.
    optimized = optimize_model(
        stem + ".onnx", model_type="bert", opt_level=0,
        num_heads=config.num_attention_heads, hidden_size=config.hidden_size)
    optimized.save_model_to_file(stem + "_opt.onnx")
    candidates = [stem + "_opt.onnx", stem + ".onnx"]
    if precision == "int8":
        candidates = [ort_session.quantize_int8(path) for path in candidates]
    for path in candidates:
        try:
            session = ort_session.session(path, settings["threads"])
            break
        except Exception as error:  # noqa: BLE001 - reported, then the next
            print(f"onnxruntime: {os.path.basename(path)} did not load "
                  f"({str(error)[:200]}); trying the next", file=sys.stderr)
    else:
        raise Unavailable("no ONNX model loaded in onnxruntime")
    print(f"onnxruntime: running {os.path.basename(path)}", file=sys.stderr)
    feeds = {n: features[n].numpy().astype(np.int64) for n in names}
    return lambda: session.run(None, feeds)


def _matmul_chain(settings):
    import torch
    precision = settings["precision"]
    c = settings["config"]
    tokens = settings["batch_size"] * settings["seq_length"]
    hidden, inner = c["hidden_size"], c["intermediate_size"]
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    layers = []
    for _ in range(settings["chain_pairs"]):
        layers += [torch.nn.Linear(hidden, inner), torch.nn.Linear(inner, hidden)]
    chain = torch.nn.Sequential(*layers).eval().to(dtype)
    if precision == "int8":
        chain = _quantize_dynamic(chain)
    x = torch.randn(tokens, hidden, dtype=dtype)

    def run():
        with torch.inference_mode():
            return chain(x)
    return run


def build(settings):
    """The callable for `settings` (see the module docstring)."""
    pin_threads(settings)
    if importlib.util.find_spec("torch") is None:
        raise Unavailable("torch not installed")
    import torch
    if settings["threads"]:
        torch.set_num_threads(settings["threads"])
        torch.set_num_interop_threads(1)
    variant = settings["variant"]
    if variant == "matmul_torch":
        return _matmul_chain(settings)
    if variant == "onnxruntime":
        return _onnxruntime(settings)
    if importlib.util.find_spec("transformers") is None:
        raise Unavailable("transformers not installed")
    if settings["mode"] == "train":
        return _train_step(settings, compiled=variant == "torch_compile")
    return _inference(settings, compiled=variant == "torch_compile")


if __name__ == "__main__":
    serve(build)
