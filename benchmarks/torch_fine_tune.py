"""The PyTorch side of `real_model.py`: transformers' BERT heads fine-tuned
on the same token ids as our scripts.

    python benchmarks/torch_fine_tune.py --task=classify --hf_dir=HF \
        --vocab_file=V --task_name=MRPC --data_dir=D --output_json=OUT.json
    python benchmarks/torch_fine_tune.py --task=tag --train_file=T --eval_file=E ...
    python benchmarks/torch_fine_tune.py --task=squad --train_file=T --predict_file=P ...

Needs torch and transformers (`pip install -e .[bench]`). The features come
from our data code (bert_tf1.data.glue, bert_tf1.data.tagging, bert_tf1.data.squad with FullTokenizer),
so both frameworks see the same ids; the metrics and the SQuAD
post-processing are ours too, applied to this model's logits. Training as
transformers' `Trainer` does it: `BertForSequenceClassification` (one label:
MSE regression) / `BertForTokenClassification` (labels -100 where our
`label_weights` is 0) / `BertForQuestionAnswering` from the Hugging Face
folder; `torch.optim.AdamW` (weight decay 0.01 except biases and LayerNorm
weights, eps 1e-6 as the original), linear warmup over the first
`warmup_proportion` of the steps then linear decay
(`get_linear_schedule_with_warmup`), gradients clipped to norm 1.0, dropout
on. Steps: int(examples / batch * epochs), full batches of a reshuffled
epoch, as the original counts them. Batches are padded to their longest
example by `DataCollatorWithPadding` (tagging: `DataCollatorForTokenClassification`);
`--group_by_length` samples with transformers' `LengthGroupedSampler`. SQuAD
keeps the fixed `max_seq_length` layout as our run_squad.py does (its loss
covers every position). Prints one JSON line (and writes --output_json):
metrics, train_s (the training loop), steps, train_examples.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

_TRAIN_START = None
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def _parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=("classify", "tag", "squad"),
                        required=True)
    parser.add_argument("--hf_dir", required=True,
                        help="Hugging Face folder (config.json, "
                             "model.safetensors).")
    parser.add_argument("--vocab_file", required=True)
    parser.add_argument("--do_lower_case", type=int, default=1)
    parser.add_argument("--task_name", help="classify: GLUE task name.")
    parser.add_argument("--data_dir", help="classify: the task's folder.")
    parser.add_argument("--train_file")
    parser.add_argument("--eval_file", help="tag: tagged dev file.")
    parser.add_argument("--predict_file", help="squad: dev JSON.")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--doc_stride", type=int, default=64)
    parser.add_argument("--max_query_length", type=int, default=64)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--eval_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--group_by_length", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log_steps", type=int, default=50)
    parser.add_argument("--output_json")
    return parser.parse_args(argv)


# -- features (ours) -----------------------------------------------------------

def _unpadded(ids, mask):
    length = int(sum(mask))
    return list(ids[:length])


def classification_data(args, tokenizer):
    """(train rows, eval rows, eval labels, num_labels, is_regression)."""
    from bert_tf1.data.glue.features import convert_examples_to_features
    from bert_tf1.data.glue.processors import get_processor

    processor = get_processor(args.task_name)
    label_list = processor.get_labels()
    regression = bool(getattr(processor, "is_regression", False))

    def rows(examples):
        out = []
        for feature in convert_examples_to_features(
                examples, label_list, args.max_seq_length, tokenizer):
            length = int(sum(feature.input_mask))
            out.append({"input_ids": feature.input_ids[:length],
                        "token_type_ids": feature.segment_ids[:length],
                        "attention_mask": [1] * length,
                        "labels": feature.label_id})
        return out

    train = rows(processor.get_train_examples(args.data_dir))
    dev = rows(processor.get_dev_examples(args.data_dir))
    labels = np.array([row["labels"] for row in dev])
    return train, dev, labels, (1 if regression else len(label_list)), \
        regression


def tagging_data(args, tokenizer):
    """(train rows, eval rows, eval features, eval documents, label_list)."""
    from bert_tf1.data.tagging.documents import all_tags, convert_documents
    from bert_tf1.data.tagging.features import convert_documents_to_features
    from bert_tf1.data.tagging.readers import read_tagged_file
    from bert_tf1.data.tagging.schemes import (TRAINING_SCHEME, entity_types,
                                               scheme_labels)

    train_docs = convert_documents(read_tagged_file(args.train_file),
                                   "iob2")
    eval_docs = read_tagged_file(args.eval_file)
    label_list = scheme_labels(entity_types(all_tags(train_docs)),
                               TRAINING_SCHEME)

    def rows(documents):
        features = convert_documents_to_features(
            documents, tokenizer, label_list, args.max_seq_length,
            args.doc_stride)
        out = []
        for feature in features:
            length = int(sum(feature.input_mask))
            labels = [label if weight else -100 for label, weight in
                      zip(feature.label_ids, feature.label_weights)]
            out.append({"input_ids": feature.input_ids[:length],
                        "token_type_ids": feature.segment_ids[:length],
                        "attention_mask": [1] * length,
                        "labels": labels[:length]})
        return out, features

    train, _ = rows(train_docs)
    dev, dev_features = rows(convert_documents(eval_docs, "iob2"))
    return train, dev, dev_features, eval_docs, label_list


def squad_data(args, tokenizer):
    """(train rows, eval rows, eval examples, eval features)."""
    from bert_tf1.data.squad.examples import read_squad_examples
    from bert_tf1.data.squad.features import convert_examples_to_features

    def featurize(path, is_training):
        examples = read_squad_examples(path, is_training)
        features = []
        convert_examples_to_features(
            examples, tokenizer, args.max_seq_length, args.doc_stride,
            args.max_query_length, is_training, features.append)
        return examples, features

    train_examples, train_features = featurize(args.train_file, True)
    eval_examples, eval_features = featurize(args.predict_file, False)

    def rows(features, is_training):
        out = []
        for feature in features:
            row = {"input_ids": list(feature.input_ids),
                   "token_type_ids": list(feature.segment_ids),
                   "attention_mask": list(feature.input_mask)}
            if is_training:
                row["start_positions"] = feature.start_position
                row["end_positions"] = feature.end_position
            out.append(row)
        return out

    return (rows(train_features, True), rows(eval_features, False),
            eval_examples, eval_features, len(train_examples))


# -- training (transformers' recipe) -------------------------------------------

def _optimizer(model, learning_rate):
    import torch

    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters()
                    if not any(part in n for part in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters()
                    if any(part in n for part in no_decay)],
         "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.999),
                             eps=1e-6)


def train(model, rows, collate, args, num_examples=None):
    """Trains in place; returns (train_s, steps). Steps count
    `num_examples` (default len(rows)): SQuAD's original counts questions,
    not their windows."""
    global _TRAIN_START
    _TRAIN_START = time.perf_counter()
    import torch
    from transformers import get_linear_schedule_with_warmup
    from transformers.trainer_pt_utils import LengthGroupedSampler

    steps = int((num_examples or len(rows)) / args.train_batch_size
                * args.num_train_epochs)
    warmup = int(steps * args.warmup_proportion)
    optimizer = _optimizer(model, args.learning_rate)
    schedule = get_linear_schedule_with_warmup(optimizer, warmup, steps)
    generator = torch.Generator().manual_seed(args.seed)
    if args.group_by_length:
        sampler = LengthGroupedSampler(
            args.train_batch_size, lengths=[len(r["input_ids"]) for r in rows],
            generator=generator)
    else:
        sampler = torch.utils.data.RandomSampler(rows, generator=generator)
    loader = torch.utils.data.DataLoader(
        rows, batch_size=args.train_batch_size, sampler=sampler,
        collate_fn=collate, drop_last=True)
    model.train()
    step, start, window = 0, time.perf_counter(), time.perf_counter()
    while step < steps:
        for batch in loader:
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            if step % args.log_steps == 0:
                now = time.perf_counter()
                print(f"loss = {loss.item():.4f}, step = {step} "
                      f"({now - window:.3f} sec)", file=sys.stderr, flush=True)
                window = now
            if step == steps:
                break
    return time.perf_counter() - start, steps


def predict(model, rows, collate, args, outputs, seq_length=None):
    """Concatenated numpy outputs (the attributes named in `outputs`), each
    padded back to `seq_length` on axis 1 when given."""
    import torch

    model.eval()
    results = {name: [] for name in outputs}
    with torch.no_grad():
        for begin in range(0, len(rows), args.eval_batch_size):
            batch = collate(rows[begin:begin + args.eval_batch_size])
            batch.pop("labels", None)
            output = model(**batch)
            for name in outputs:
                value = getattr(output, name).float().numpy()
                if seq_length is not None and value.shape[1] < seq_length:
                    pad = [(0, 0)] * value.ndim
                    pad[1] = (0, seq_length - value.shape[1])
                    value = np.pad(value, pad)
                results[name].append(value)
    return {name: np.concatenate(values) for name, values in results.items()}


def main(argv=None):
    args = _parse_args(argv)
    import torch
    import transformers
    from transformers import (BertForQuestionAnswering,
                              BertForSequenceClassification,
                              BertForTokenClassification, BertTokenizerFast,
                              DataCollatorForTokenClassification,
                              DataCollatorWithPadding)

    from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    tokenizer = FullTokenizer(args.vocab_file, bool(args.do_lower_case))
    # Only for the collators' padding id and side (pad id 0 = [PAD]).
    hf_tokenizer = BertTokenizerFast.from_pretrained(args.hf_dir)
    plain = DataCollatorWithPadding(hf_tokenizer, return_tensors="pt")
    result = {"torch": torch.__version__,
              "transformers": transformers.__version__,
              "threads": torch.get_num_threads()}

    begin = time.perf_counter()
    if args.task == "classify":
        train_rows, dev_rows, labels, num_labels, regression = \
            classification_data(args, tokenizer)
        model = BertForSequenceClassification.from_pretrained(
            args.hf_dir, num_labels=num_labels,
            problem_type=("regression" if regression
                          else "single_label_classification"))
        train_s, steps = train(model, train_rows, plain, args)
        logits = predict(model, dev_rows, plain, args, ["logits"])["logits"]
        from bert_tf1.data.glue.metrics import task_metrics
        metrics = {}
        if not regression:
            metrics["eval_accuracy"] = float(
                (logits.argmax(-1) == labels).mean())
        metrics.update(task_metrics(args.task_name, logits, labels))
    elif args.task == "tag":
        from bert_tf1.data.tagging.decoding import predicted_tags
        from bert_tf1.data.tagging.metric import conll_scores
        from bert_tf1.data.tagging.schemes import TRAINING_SCHEME, convert_tags

        train_rows, dev_rows, dev_features, eval_docs, label_list = \
            tagging_data(args, tokenizer)
        model = BertForTokenClassification.from_pretrained(
            args.hf_dir, num_labels=len(label_list))
        collate = DataCollatorForTokenClassification(hf_tokenizer,
                                                     return_tensors="pt")
        train_s, steps = train(model, train_rows, collate, args)
        logits = predict(model, dev_rows, collate, args, ["logits"],
                         seq_length=args.max_seq_length)["logits"]
        tags = predicted_tags(dev_features, logits, eval_docs, label_list)
        predicted = [convert_tags(sentence, TRAINING_SCHEME, "iob2")
                     for document in tags for sentence in document]
        scores = conll_scores([s.tags for d in eval_docs for s in d.sentences],
                              predicted)
        metrics = {"eval_f1": scores.overall.f1,
                   "eval_precision": scores.overall.precision,
                   "eval_recall": scores.overall.recall,
                   "eval_accuracy": scores.accuracy}
    else:
        from bert_tf1.data.squad.evaluate import evaluate
        from bert_tf1.data.squad.examples import load_squad_json
        from bert_tf1.data.squad.postprocess import RawResult, compute_predictions

        train_rows, dev_rows, eval_examples, eval_features, num_examples = \
            squad_data(args, tokenizer)
        model = BertForQuestionAnswering.from_pretrained(args.hf_dir)
        train_s, steps = train(model, train_rows, plain, args, num_examples)
        outputs = predict(model, dev_rows, plain, args,
                          ["start_logits", "end_logits"])
        raw = [RawResult(unique_id=f.unique_id, start_logits=list(s),
                         end_logits=list(e))
               for f, s, e in zip(eval_features, outputs["start_logits"],
                                  outputs["end_logits"])]
        predictions, _, _ = compute_predictions(
            eval_examples, eval_features, raw, 20, 30,
            bool(args.do_lower_case))
        scores = evaluate(load_squad_json(args.predict_file), predictions)
        metrics = {"exact_match": scores["exact"], "f1": scores["f1"]}
    result.update({"setup_s": _TRAIN_START - begin,
                   "eval_s": time.perf_counter() - _TRAIN_START - train_s,
                   "metrics": metrics, "train_s": train_s, "steps": steps,
                   "train_examples": len(train_rows),
                   "train_batch_size": args.train_batch_size})
    line = json.dumps(result)
    print(line, flush=True)
    if args.output_json:
        with open(args.output_json, "w", encoding="utf-8") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
