"""Input pipelines and data formats, one subpackage per concern:

- `data.tokenization`: tokenizers (Python and in-graph) and packing;
- `data.glue`: sentence (pair) classification tasks;
- `data.squad`: SQuAD reading, features, post-processing, evaluation;
- `data.pretraining`: pretraining instances, records, pipeline, metrics;
- `data.extraction`: extract_features.py input and output;
- `data.io`: atomic file writes.
"""
