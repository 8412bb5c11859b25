"""Our side of `benchmarks/embeddings.py`: `SentenceEmbedder` trained from
Python (`compile` + `fit`) on the same ordered batches as the peer.

    python benchmarks/embeddings_ours.py train --model_dir=MODEL \
        --train_file=ORDERED.tsv --loss=cosent --batch_size=16 \
        --learning_rate=2e-5 --warmup_steps=144 --embed=T.txt=E.npy,...
    ... embed --model_dir=MODEL --texts_file=T.txt --output_npy=E.npy
    ... steps --model_dir=MODEL --train_file=... --steps=20 --warmup_steps=3
    ... rss --model_dir=MODEL --train_file=QNLI.tsv --batch_size=1024 \
        --mini_batch_size=32 --max_seq_length=128

The model: `SentenceEmbedder.from_checkpoint` with the folder's pooling
record (all-MiniLM-L6-v2: mean, L2). Texts are tokenized with our
`FullTokenizer` (lower case, as the model's tokenizer), `[CLS] text [SEP]`,
at most `--max_seq_length` tokens. The rows of `--train_file` are read in
order, `--batch_size` at a time (the last partial batch dropped); each batch
is [batch, 2, seq] padded to its longest text, rounded up to a multiple of 8
(the project's dynamic padding; fewer traced shapes). The loss is
`bert_tf1.modeling.models.embedding_losses` (`CoSENTLoss` or
`MultipleNegativesRankingLoss`, scale 20), the optimizer the scripts'
`create_optimizer` (google-research/bert's AdamW: weight decay 0.01 except
LayerNorm and biases, eps 1e-6, linear warm-up then decay, global norm 1.0).
Prints one JSON line; `rss` prints the process's peak RSS after one
training step at a batch padded to `--max_seq_length` (the worst case).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def _parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("train", "embed", "steps", "rss"))
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--train_file")
    parser.add_argument("--loss", choices=("cosent", "mnrl"), default="mnrl")
    parser.add_argument("--scale", type=float, default=20.0)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--mini_batch_size", type=int, default=None)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--warmup_steps", type=int, default=0)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=0,
                        help="steps: timed steps (after --warmup_steps).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--embed", help="train: TEXTS.txt=OUT.npy,... "
                        "embedded by the trained model (no checkpoint "
                        "written)")
    parser.add_argument("--texts_file")
    parser.add_argument("--output_npy")
    return parser.parse_args(argv)


def _start(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    import keras

    keras.utils.set_random_seed(args.seed)


def _model(args):
    from bert_tf1.modeling.models.sentence_embedder import SentenceEmbedder
    from bert_tf1.modeling.pooling import read_pooling_record

    pooling, l2_normalize = read_pooling_record(args.model_dir) or (
        "mean", False)
    return SentenceEmbedder.from_checkpoint(
        args.model_dir, pooling=pooling, l2_normalize=l2_normalize,
        mini_batch_size=args.mini_batch_size)


class _Ids:
    """Token ids of texts: `[CLS] tokens [SEP]`, cut at max_seq_length."""

    def __init__(self, model_dir, max_seq_length):
        from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer

        self.tokenizer = FullTokenizer(os.path.join(model_dir, "vocab.txt"),
                                       do_lower_case=True)
        self.max_seq_length = max_seq_length
        self.cache = {}

    def __call__(self, text):
        if text not in self.cache:
            tokens = self.tokenizer.tokenize(text)[:self.max_seq_length - 2]
            self.cache[text] = self.tokenizer.convert_tokens_to_ids(
                ["[CLS]"] + tokens + ["[SEP]"])
        return self.cache[text]


def _pad(rows_of_ids, length=None):
    """[n, texts] lists of ids -> dict of int32 [n, texts, length] (length:
    the longest, rounded up to a multiple of 8, unless given)."""
    import numpy as np

    if length is None:
        longest = max(len(ids) for row in rows_of_ids for ids in row)
        length = -(-longest // 8) * 8
    shape = (len(rows_of_ids), len(rows_of_ids[0]), length)
    input_ids = np.zeros(shape, np.int32)
    input_mask = np.zeros(shape, np.int32)
    for i, row in enumerate(rows_of_ids):
        for j, ids in enumerate(row):
            input_ids[i, j, :len(ids)] = ids
            input_mask[i, j, :len(ids)] = 1
    return {"input_ids": input_ids, "input_mask": input_mask,
            "segment_ids": np.zeros(shape, np.int32)}


def _read_rows(path):
    with open(path, encoding="utf-8") as reader:
        return [line.rstrip("\n").split("\t") for line in reader]


def _batches(args, rows, ids, length=None):
    """(features, labels) per batch, in the file's order."""
    import numpy as np

    texts = 2 if args.loss == "cosent" else len(rows[0])
    for start in range(0, len(rows) - args.batch_size + 1, args.batch_size):
        batch = rows[start:start + args.batch_size]
        features = _pad([[ids(row[j]) for j in range(texts)]
                         for row in batch], length)
        labels = (np.array([float(row[2]) for row in batch], np.float32)
                  if args.loss == "cosent"
                  else np.zeros(len(batch), np.float32))
        yield features, labels


def _compile(args, model, num_steps):
    from bert_tf1.modeling.models import embedding_losses
    from bert_tf1.modeling.optimization import create_optimizer

    loss = (embedding_losses.CoSENTLoss(scale=args.scale)
            if args.loss == "cosent" else
            embedding_losses.MultipleNegativesRankingLoss(scale=args.scale))
    model.compile(optimizer=create_optimizer(
        args.learning_rate, num_steps, args.warmup_steps), loss=loss)


def _train(args, model, rows):
    """Trains on `rows` in order; returns (wall seconds, CPU seconds,
    losses) per step."""
    import keras

    ids = _Ids(args.model_dir, args.max_seq_length)
    batches = list(_batches(args, rows, ids))
    _compile(args, model, len(batches))

    class Clock(keras.callbacks.Callback):
        wall, cpu, losses = [], [], []

        def on_train_batch_begin(self, batch, logs=None):
            self.start = (time.perf_counter(), time.process_time())

        def on_train_batch_end(self, batch, logs=None):
            self.wall.append(time.perf_counter() - self.start[0])
            self.cpu.append(time.process_time() - self.start[1])
            self.losses.append(float(logs["loss"]) if logs else float("nan"))

    def generator():
        yield from batches

    import tensorflow as tf

    signature = ({name: tf.TensorSpec([None, None, None], tf.int32)
                  for name in ("input_ids", "input_mask", "segment_ids")},
                 tf.TensorSpec([None], tf.float32))
    dataset = tf.data.Dataset.from_generator(generator,
                                             output_signature=signature)
    clock = Clock()
    model.fit(dataset, epochs=1, steps_per_epoch=len(batches),
              callbacks=[clock], verbose=0, shuffle=False)
    return clock.wall, clock.cpu, clock.losses


def _embed(args, model):
    import numpy as np

    ids = _Ids(args.model_dir, args.max_seq_length)
    with open(args.texts_file, encoding="utf-8") as reader:
        texts = [line.rstrip("\n") for line in reader]
    order = sorted(range(len(texts)), key=lambda i: len(ids(texts[i])))
    vectors = np.zeros((len(texts), model.config.hidden_size), np.float32)
    for start in range(0, len(order), 64):
        chunk = order[start:start + 64]
        features = _pad([[ids(texts[i])] for i in chunk])
        features = {k: v[:, 0, :] for k, v in features.items()}
        vectors[chunk] = np.asarray(model.predict_on_batch(features))
    np.save(args.output_npy, vectors)
    return {"texts": len(texts), "dim": int(vectors.shape[1])}


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    args = _parse_args(argv)
    _start(args)
    model = _model(args)
    if args.mode == "embed":
        result = _embed(args, model)
    elif args.mode == "train":
        rows = _read_rows(args.train_file)
        start = time.perf_counter()
        wall, cpu, losses = _train(args, model, rows)
        train_s = time.perf_counter() - start
        result = {"steps": len(wall), "train_s": round(train_s, 2),
                  "median_step_s": round(statistics.median(wall), 4),
                  "median_step_cpu_s": round(statistics.median(cpu), 4),
                  "first_loss": losses[0], "last_loss": losses[-1]}
        for pair in filter(None, (args.embed or "").split(",")):
            args.texts_file, args.output_npy = pair.split("=")
            _embed(args, model)
    elif args.mode == "steps":
        rows = _read_rows(args.train_file)
        rows = rows[:args.batch_size * (args.warmup_steps + args.steps)]
        warmup, args.warmup_steps = args.warmup_steps, 0
        wall, cpu, _ = _train(args, model, rows)
        result = {"steps": len(wall[warmup:]),
                  "median_step_s": round(statistics.median(wall[warmup:]), 4),
                  "median_step_cpu_s": round(
                      statistics.median(cpu[warmup:]), 4)}
    else:
        import numpy as np

        rows = _read_rows(args.train_file)
        while len(rows) < args.batch_size:
            rows = rows + rows
        rows = rows[:args.batch_size]
        ids = _Ids(args.model_dir, args.max_seq_length)
        features, labels = next(_batches(args, rows, ids,
                                         length=args.max_seq_length))
        _compile(args, model, 10)
        before = _peak_rss_mb()
        start = time.perf_counter()
        loss = model.train_on_batch(features, labels)
        result = {"batch_size": args.batch_size,
                  "mini_batch_size": args.mini_batch_size,
                  "seq_length": args.max_seq_length,
                  "peak_rss_mb_before_step": round(before),
                  "peak_rss_mb": round(_peak_rss_mb()),
                  "step_s": round(time.perf_counter() - start, 1),
                  "loss": float(np.asarray(loss).reshape(-1)[0])}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
