"""Each deployment format of a fine-tuned SST-2 classifier on all 872 dev
sentences: labels against the raw-text SavedModel, accuracy, logit drift.

    python benchmarks/deploy_accuracy.py --export_dir=<fp32 export> \
        [--int8_export_dir=<int8 export>] [--data_dir=../shared/data/glue/SST-2]

`--export_dir` is what `export_saved_model.py --model_type=classifier
--format=saved_model,numeric,openvino,litert,onnx` wrote; `--int8_export_dir`
the same command with `--quantize=int8` (saved_model, openvino, litert,
onnx). The reference is the raw-text SavedModel's `classify_text` on the
sentences (TF Text tokenizes in the graph); every other format gets the ids
of the Python `FullTokenizer` (the export's vocab.txt and lower-casing
record, `bert_tf1.data.glue.features.convert_examples_to_features`) through its
`Runner` (`bert_tf1.serving.numeric`, `bert_tf1.serving.formats.*`), in batches of 32. Also:
OpenVINO's bf16 inference hint on the fp32 IR, and ("openvino PTQ") NNCF
post-training quantization of the fp32 IR calibrated on the first
`--calibration` SST-2 training sentences (not a format the export writes:
measured to choose between the two OpenVINO int8 methods).

`--predict_text=<predict_text.py>`: also runs that script (one that takes
every --format folder) over each folder of both exports on the 872
sentences, as a user would, and compares its JSON lines' labels and
probabilities with those of the raw-text SavedModel folder.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (the raw-text SavedModel's ops)

from bert_tf1.data.glue.features import convert_examples_to_features  # noqa: E402
from bert_tf1.data.glue.processors import Sst2Processor  # noqa: E402
from bert_tf1.data.tokenization import FullTokenizer  # noqa: E402
from bert_tf1.data.tokenization.lower_case_record import read_lower_case  # noqa: E402
from bert_tf1.serving import numeric  # noqa: E402
from bert_tf1.serving.formats import litert, onnx, openvino  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BATCH = 32


def _ids(examples, folder, tokenizer_folder):
    info = json.load(open(os.path.join(folder, "export_info.json")))
    tokenizer = FullTokenizer(os.path.join(tokenizer_folder, "vocab.txt"),
                              read_lower_case(tokenizer_folder))
    features = convert_examples_to_features(
        examples, Sst2Processor().get_labels(), info["max_seq_length"], tokenizer)
    return {name: np.array([getattr(f, name) for f in features], np.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}


def _logits(runner, ids):
    count = len(ids["input_ids"])
    return np.concatenate([runner(**{k: v[i:i + BATCH] for k, v in ids.items()}
                                  )["logits"] for i in range(0, count, BATCH)])


def _text_logits(folder, sentences):
    function = tf.saved_model.load(folder).signatures["classify_text"]
    return np.concatenate([function(text=tf.constant(sentences[i:i + BATCH]))[
        "logits"].numpy() for i in range(0, len(sentences), BATCH)])


def _ptq_runner(fp32_folder, calibration_ids):
    import nncf
    import openvino as ov

    model = ov.Core().read_model(os.path.join(fp32_folder, "model.xml"))
    samples = [{k: v[i:i + 1] for k, v in calibration_ids.items()}
               for i in range(len(calibration_ids["input_ids"]))]
    quantized = nncf.quantize(model, nncf.Dataset(samples),
                              model_type=nncf.ModelType.TRANSFORMER,
                              subset_size=len(samples))
    compiled = ov.Core().compile_model(quantized, "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})

    def run(**inputs):
        return {k.get_any_name(): np.asarray(v)
                for k, v in compiled(inputs).items()}
    return run


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--export_dir", required=True)
    parser.add_argument("--int8_export_dir", default="")
    parser.add_argument("--data_dir", default=os.path.join(
        REPO, "..", "shared", "data", "glue", "SST-2"))
    parser.add_argument("--calibration", type=int, default=300,
                        help="SST-2 training sentences for OpenVINO PTQ (0: skip).")
    parser.add_argument("--predict_text", default="",
                        help="A predict_text.py to run over each folder too.")
    args = parser.parse_args(argv)
    processor = Sst2Processor()
    examples = processor.get_dev_examples(args.data_dir)
    labels = np.array([int(e.label) for e in examples])
    sentences = [e.text_a for e in examples]
    fp32 = f"{args.export_dir}/"
    ids = _ids(examples, fp32 + "numeric", fp32 + "numeric")
    reference = _text_logits(fp32 + "saved_model", sentences)
    rows = [("saved_model (raw text)", "float32", reference)]
    runners = [("numeric", "float32", lambda: numeric.Runner(fp32 + "numeric")),
               ("openvino", "float32", lambda: openvino.Runner(fp32 + "openvino")),
               ("litert", "float32", lambda: litert.Runner(fp32 + "litert")),
               ("onnx", "float32", lambda: onnx.Runner(fp32 + "onnx")),
               ("openvino", "bf16 hint", lambda: openvino.Runner(
                   fp32 + "openvino", precision="bf16"))]
    if args.int8_export_dir:
        int8 = f"{args.int8_export_dir}/"
        rows.append(("saved_model (raw text)", "Keras int8 (XLA)",
                     _text_logits(int8 + "saved_model", sentences)))
        for name in ("openvino", "litert", "onnx"):
            precision = json.load(open(f"{int8}{name}/export_info.json"))["precision"]
            module = {"openvino": openvino, "litert": litert, "onnx": onnx}[name]
            runners.append((name, precision,
                            lambda m=module, n=name: m.Runner(int8 + n)))
    if args.calibration:
        train = processor.get_train_examples(args.data_dir)[:args.calibration]
        runners.append(("openvino PTQ", f"int8 (nncf.quantize, {args.calibration} "
                        "SST-2 train sentences)", lambda: _ptq_runner(
                            fp32 + "openvino", _ids(train, fp32 + "numeric",
                                                    fp32 + "numeric"))))
    for name, precision, make in runners:
        rows.append((name, precision, _logits(make(), ids)))
        print(f"done: {name} {precision}", file=sys.stderr, flush=True)
    reference_labels = reference.argmax(-1)
    print(f"SST-2 dev, {len(examples)} sentences; reference: {fp32}saved_model")
    print("| format | precision | dev accuracy | labels = SavedModel fp32 "
          "| max abs logit diff |")
    print("|---|---|---:|---:|---:|")
    for name, precision, logits in rows:
        predicted = logits.argmax(-1)
        print(f"| {name} | {precision} | {100 * (predicted == labels).mean():.2f}% "
              f"| {(predicted == reference_labels).sum()}/{len(labels)} "
              f"| {np.abs(logits - reference).max():.2e} |")


    if args.predict_text:
        _predict_text_table(args, sentences, labels)


def _predict_text_lines(script, folder, sentence_file):
    result = subprocess.run(
        [sys.executable, os.path.basename(script), f"--export_dir={folder}",
         f"--input_file={sentence_file}"], cwd=os.path.dirname(script),
        capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()
            if line.startswith("{")]


def _predict_text_table(args, sentences, labels):
    script = os.path.abspath(args.predict_text)
    folders = [(f"{args.export_dir}/{name}", name, "float32") for name in (
        "saved_model", "numeric", "openvino", "litert", "onnx")]
    if args.int8_export_dir:
        folders += [(f"{args.int8_export_dir}/{name}", name, "int8")
                    for name in ("saved_model", "openvino", "litert", "onnx")]
    with tempfile.TemporaryDirectory() as scratch:
        sentence_file = os.path.join(scratch, "dev.txt")
        with open(sentence_file, "w", encoding="utf-8") as f:
            f.write("".join(s + "\n" for s in sentences))
        outputs = [(name, precision, _predict_text_lines(
            script, folder, sentence_file)) for folder, name, precision in folders]
    reference = outputs[0][2]
    print(f"\n`{args.predict_text}` over each folder, {len(sentences)} sentences")
    print("| folder | precision | lines | dev accuracy | labels = saved_model "
          "fp32 | max abs probability diff |")
    print("|---|---|---:|---:|---:|---:|")
    for name, precision, lines in outputs:
        predicted = np.array([int(line["label"]) for line in lines])
        same = sum(a["label"] == b["label"] for a, b in zip(lines, reference))
        diff = max(abs(a["probabilities"][k] - b["probabilities"][k])
                   for a, b in zip(lines, reference) for k in a["probabilities"])
        print(f"| {name} | {precision} | {len(lines)} "
              f"| {100 * (predicted == labels).mean():.2f}% "
              f"| {same}/{len(reference)} | {diff:.2e} |")


if __name__ == "__main__":
    main()
