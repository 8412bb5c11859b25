"""The distribution `bert-keras-tf1compat`: one package, `bert_tf1/`, installed
as it is on disk, and a command per script module (`bert-run-classifier` runs
`bert_tf1/run_classifier.py`, as the root shim `run_classifier.py` does)."""
from setuptools import find_packages, setup

SCRIPTS = ("convert_checkpoint", "create_pretraining_data", "export_saved_model",
           "extract_features", "fetch_pretrained", "predict_text",
           "run_classifier", "run_embeddings", "run_multiple_choice", "run_ner",
           "run_pretraining", "run_squad")

setup(
    name="bert-keras-tf1compat",
    version="0.1.0",
    description=(
        "TensorFlow 2 / Keras 3 BERT that loads and writes the original "
        "google-research/bert TF1 checkpoints"
    ),
    packages=find_packages(include=["bert_tf1", "bert_tf1.*"]),
    package_data={"bert_tf1.serving": ["worker_requirements.txt"]},
    entry_points={"console_scripts": [
        f"bert-{script.replace('_', '-')} = bert_tf1.{script}:command"
        for script in SCRIPTS]},
    python_requires=">=3.10,<3.14",
    install_requires=[
        # One mutually compatible set: TF Text and TF must share the minor version.
        "tensorflow>=2.21,<2.22",
        "tensorflow-text>=2.21,<2.22",
        "keras>=3.12,<3.16",
        "keras-hub>=0.32,<0.33",
        "absl-py>=2.1,<3",
        "tensorboard>=2.19",  # TensorBoard logs written during training
        "numpy>=1.26",
        "safetensors>=0.4",  # Hugging Face weights (convert_checkpoint.py)
        "filelock>=4.3,<5",  # one run per output_dir (bert_tf1/data/io/output_lock.py)
    ],
    extras_require={
        "dev": [
            "pytest>=8",
            "pytest-xdist>=3.6",  # run_tests.sh: two test processes (--no-loadscope-reorder)
            "jedi>=0.19",  # tests/test_static_imports.py: static import resolution
            "seqeval>=1.2.2,<2",  # tests only: reference for the NER metric
            # tests/test_notebook.py: runs notebooks/ in a fresh kernel
            "nbclient>=0.10", "nbformat>=5.10", "ipykernel>=6.29",
        ],
        # create_pretraining_data.py --runner (gs:// and DataflowRunner:
        # "apache-beam[gcp]").
        # google-apitools: without it every process that imports Beam logs
        # "apitools not found" (Beam's gcp extra brings it too).
        "beam": ["apache-beam>=2.77,<2.78", "google-apitools>=0.5.32"],
        # benchmarks/compare.py's peers; torch pinned (not a CUDA build);
        # benchmarks/embeddings.py's peer: sentence-transformers (6.2.0, the
        # newest this project's index serves; it needs transformers 5).
        "bench": ["torch==2.13.0", "transformers>=4.48", "onnxruntime>=1.20",
                  "onnx>=1.17", "sentence-transformers==6.2.0"],
        # export_saved_model.py --format=openvino,litert,onnx and their
        # runtimes; pinned to what installs beside TF 2.21 and the beam extra
        # (protobuf < 7), checked with pip install --dry-run.
        "deploy": ["openvino==2026.4.1", "nncf==3.4.0", "ai-edge-litert==2.3.0",
                   "tf2onnx==1.17.0", "onnx==1.23.2", "onnxruntime==1.32.0",
                   "tensorflow-serving-api==2.21.0"],
        # output_dir/training_curves.png after training (skipped without it)
        "plots": ["matplotlib>=3.7"],
    },
)
