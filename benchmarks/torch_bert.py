"""PyTorch/transformers side of `benchmarks/compare.py`, run in its own process.

    python benchmarks/torch_bert.py '<json settings>'   (started by compare.py)

TensorFlow must not be loaded in the same process: with it loaded, PyTorch's
OpenMP threads and TensorFlow's thread pools contend, and a PyTorch step took
several times longer here. So compare.py starts this script, which builds the
model, prints `ready`, then runs one call for every line `run` it reads on
stdin and answers `done`; it exits at end of input.

Settings (JSON): vocab_size, hidden_size, num_hidden_layers,
num_attention_heads, intermediate_size, hidden_dropout_prob,
attention_probs_dropout_prob, max_position_embeddings, type_vocab_size (as in
bert_config.json), mode ("infer" or "train"), precision ("fp32", "bf16" for
autocast with float32 weights, "bf16w" for bfloat16 weights), batch_size,
seq_length, threads (0: PyTorch's default).
"""
import json
import sys

import torch
import transformers


def build(settings):
    """A zero-argument callable running one inference or train step."""
    config = transformers.BertConfig(
        vocab_size=settings["vocab_size"],
        hidden_size=settings["hidden_size"],
        num_hidden_layers=settings["num_hidden_layers"],
        num_attention_heads=settings["num_attention_heads"],
        intermediate_size=settings["intermediate_size"],
        hidden_act="gelu_new",  # the tanh form, as the original
        hidden_dropout_prob=settings["hidden_dropout_prob"],
        attention_probs_dropout_prob=settings["attention_probs_dropout_prob"],
        max_position_embeddings=settings["max_position_embeddings"],
        type_vocab_size=settings["type_vocab_size"], num_labels=2)
    batch_size, seq_length = settings["batch_size"], settings["seq_length"]
    generator = torch.Generator().manual_seed(0)
    features = {
        "input_ids": torch.randint(1, config.vocab_size, (batch_size, seq_length),
                                   generator=generator),
        "attention_mask": torch.ones(batch_size, seq_length, dtype=torch.long),
        "token_type_ids": torch.zeros(batch_size, seq_length, dtype=torch.long),
    }
    features["token_type_ids"][:, seq_length // 2:] = 1
    precision = settings["precision"]

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16,
                              enabled=precision == "bf16")

    if settings["mode"] == "infer":
        model = transformers.BertModel(config).eval()
        if precision == "bf16w":
            model = model.to(torch.bfloat16)

        def infer():
            with torch.inference_mode(), autocast():
                outputs = model(**features)
                return outputs.last_hidden_state, outputs.pooler_output
        return infer

    model = transformers.BertForSequenceClassification(config).train()
    labels = torch.randint(0, 2, (batch_size,), generator=generator)
    no_decay = [p for n, p in model.named_parameters()
                if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in model.named_parameters()
             if not ("LayerNorm" in n or n.endswith("bias"))]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01},
         {"params": no_decay, "weight_decay": 0.0}], lr=2e-5, eps=1e-6)

    def train_step():
        with autocast():
            logits = model(**features).logits
        loss = torch.nn.functional.cross_entropy(logits.float(), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss
    return train_step


def main():
    settings = json.loads(sys.argv[1])
    if settings.get("threads"):
        torch.set_num_threads(settings["threads"])
    run = build(settings)
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "run":
            run()
            print("done", flush=True)


if __name__ == "__main__":
    main()
