"""The PyTorch side of `benchmarks/embeddings.py`: sentence-transformers
trained on the same ordered batches as ours, offline.

    HF_HUB_OFFLINE=1 /work/peer-venv/bin/python benchmarks/embeddings_peer.py \
        train --model_dir=MODEL/huggingface --train_file=ORDERED.tsv \
        --loss=cosent --batch_size=16 --learning_rate=2e-5 --warmup_steps=144 \
        --embed=T.txt=E.npy,...
    ... embed --model_dir=MODEL/huggingface --texts_file=T.txt --output_npy=E.npy
    ... steps --model_dir=MODEL/huggingface --train_file=... --steps=20

Runs in its own virtual environment (torch CPU and sentence-transformers
6.2.0, the `[bench]` extra; no TensorFlow). The model is the Hugging Face
folder that `fetch_pretrained.py --keep_hugging_face_folder` keeps
(`HF_HUB_OFFLINE=1`: nothing is downloaded).

Training is sentence-transformers' own loss modules (`CoSENTLoss`,
`MultipleNegativesRankingLoss`, scale 20) on the model's own tokenization,
in a plain loop instead of `SentenceTransformerTrainer` because the trainer
draws its own batches (a random or no-duplicates sampler) and both sides
must see the same batches: the rows of `--train_file` are read in order,
`--batch_size` at a time, the last partial batch dropped. The optimizer is
ours, written in PyTorch: `torch.optim.AdamW` (weight decay 0.01 except
biases and LayerNorm weights, eps 1e-6, as google-research/bert's
optimization.py; PyTorch's AdamW corrects the moments' bias, the original
does not), linear warm-up over `--warmup_steps` then linear decay to 0
(transformers' `get_linear_schedule_with_warmup`), gradients clipped to
global norm 1.0, dropout on. `--optimizer=original` trains with the original
BERT's rule instead, as ours does: `AdamWeightDecayOptimizer`'s update (no
bias correction, the decay added to the update) and its schedule (update t,
from 0, at the rate of step t + 1: `(t + 1) / warmup` during the warm-up,
then `1 - (t + 1) / steps`), so that the two sides differ in framework, not
in recipe. Prints one JSON line.
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("train", "embed", "steps"))
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--train_file")
    parser.add_argument("--loss", choices=("cosent", "mnrl"), default="mnrl")
    parser.add_argument("--scale", type=float, default=20.0)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--warmup_steps", type=int, default=0)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=0,
                        help="steps: timed steps (after --warmup_steps).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--embed", help="train: TEXTS.txt=OUT.npy,... "
                        "embedded by the trained model (nothing saved)")
    parser.add_argument("--texts_file")
    parser.add_argument("--output_npy")
    parser.add_argument("--log_steps", type=int, default=100)
    parser.add_argument("--optimizer", choices=("adamw", "original"),
                        default="adamw")
    return parser.parse_args(argv)


def _model(args):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = SentenceTransformer(args.model_dir, device="cpu")
    model.max_seq_length = args.max_seq_length
    return model


def _read_rows(path):
    with open(path, encoding="utf-8") as reader:
        return [line.rstrip("\n").split("\t") for line in reader]


def _batches(rows, batch_size):
    for start in range(0, len(rows) - batch_size + 1, batch_size):
        yield rows[start:start + batch_size]


def _loss(args, model):
    from sentence_transformers.sentence_transformer import losses

    if args.loss == "cosent":
        return losses.CoSENTLoss(model, scale=args.scale)
    return losses.MultipleNegativesRankingLoss(model, scale=args.scale)


def _step_inputs(args, model, batch):
    import torch

    if args.loss == "cosent":
        texts = [[row[0] for row in batch], [row[1] for row in batch]]
        labels = torch.tensor([float(row[2]) for row in batch])
    else:
        texts = [[row[column] for row in batch]
                 for column in range(len(batch[0]))]
        labels = torch.zeros(len(batch))
    return [model.preprocess(column) for column in texts], labels


def _original_bert_adamw(groups, learning_rate):
    """google-research/bert's `AdamWeightDecayOptimizer` in PyTorch:
    m, v as Adam's, update = m / (sqrt(v) + eps) + decay * p, no bias
    correction; p -= lr * update."""
    import torch

    class OriginalBertAdamW(torch.optim.Optimizer):
        @torch.no_grad()
        def step(self):
            for group in self.param_groups:
                beta_1, beta_2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["m"] = torch.zeros_like(p)
                        state["v"] = torch.zeros_like(p)
                    m, v = state["m"], state["v"]
                    m.mul_(beta_1).add_(p.grad, alpha=1 - beta_1)
                    v.mul_(beta_2).addcmul_(p.grad, p.grad, value=1 - beta_2)
                    update = m / (v.sqrt() + group["eps"])
                    if group["weight_decay"]:
                        update.add_(p, alpha=group["weight_decay"])
                    p.add_(update, alpha=-group["lr"])

    return OriginalBertAdamW(groups, dict(
        lr=learning_rate, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0))


def original_rate(t, warmup_steps, steps):
    """The original's learning-rate factor for update t (from 0): the rate
    of step t + 1, linear warm-up then `1 - step / steps` (its
    `polynomial_decay`), as `WarmupLinearDecay` at `schedule_step_offset=1`."""
    step = t + 1
    if step < warmup_steps:
        return step / warmup_steps
    return max(0.0, 1.0 - step / steps)


def _schedule(args, optimizer, steps):
    import torch
    from transformers import get_linear_schedule_with_warmup

    if args.optimizer == "adamw":
        return get_linear_schedule_with_warmup(
            optimizer, args.warmup_steps, steps)
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: original_rate(t, args.warmup_steps, steps))


def _optimizer(model, learning_rate, kind="adamw"):
    import torch

    no_decay = ("bias", "LayerNorm.weight")
    named = list(model.named_parameters())
    groups = [
        {"params": [p for n, p in named
                    if not any(part in n for part in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in named
                    if any(part in n for part in no_decay)],
         "weight_decay": 0.0}]
    if kind == "original":
        return _original_bert_adamw(groups, learning_rate)
    return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.999),
                             eps=1e-6)


def _train(args, model, rows):
    """Trains on `rows` in order; returns (wall seconds, CPU seconds,
    losses) per step."""
    import torch

    loss_module = _loss(args, model)
    batches = list(_batches(rows, args.batch_size))
    optimizer = _optimizer(model, args.learning_rate, args.optimizer)
    schedule = _schedule(args, optimizer, len(batches))
    model.train()
    seconds, cpu, losses = [], [], []
    for step, batch in enumerate(batches, start=1):
        start = time.perf_counter()
        start_cpu = time.process_time()
        features, labels = _step_inputs(args, model, batch)
        loss = loss_module(features, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        losses.append(loss.item())
        if step % args.log_steps == 0:
            print(f"step {step}/{len(batches)} loss {losses[-1]:.4f} "
                  f"({sum(seconds[-args.log_steps:]):.1f} s)",
                  file=sys.stderr, flush=True)
    return seconds, cpu, losses


def _embed(args, model):
    import numpy as np

    model.eval()
    with open(args.texts_file, encoding="utf-8") as reader:
        texts = [line.rstrip("\n") for line in reader]
    vectors = model.encode(texts, batch_size=64, convert_to_numpy=True)
    np.save(args.output_npy, vectors.astype("float32"))
    return {"texts": len(texts), "dim": int(vectors.shape[1])}


def main(argv=None):
    args = _parse_args(argv)
    model = _model(args)
    if args.mode == "embed":
        result = _embed(args, model)
    elif args.mode == "train":
        rows = _read_rows(args.train_file)
        start = time.perf_counter()
        seconds, cpu, losses = _train(args, model, rows)
        train_s = time.perf_counter() - start
        result = {"steps": len(seconds), "train_s": round(train_s, 2),
                  "median_step_s": round(statistics.median(seconds), 4),
                  "median_step_cpu_s": round(statistics.median(cpu), 4),
                  "first_loss": losses[0], "last_loss": losses[-1],
                  "optimizer": args.optimizer}
        for pair in filter(None, (args.embed or "").split(",")):
            args.texts_file, args.output_npy = pair.split("=")
            _embed(args, model)
    else:
        rows = _read_rows(args.train_file)
        rows = rows[:args.batch_size * (args.warmup_steps + args.steps)]
        warmup, args.warmup_steps = args.warmup_steps, 0
        seconds, cpu, _ = _train(args, model, rows)
        result = {"steps": len(seconds[warmup:]),
                  "median_step_s": round(statistics.median(seconds[warmup:]),
                                         4),
                  "median_step_cpu_s": round(
                      statistics.median(cpu[warmup:]), 4)}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
