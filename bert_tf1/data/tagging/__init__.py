"""Sequence tagging (NER, BERT paper §5.3) data: tagged files, tag schemes,
word-piece windows over documents, TFRecords, decoding predictions to one tag
per word, and the conlleval metric (docs/tagging.md). All modules except
`records` are TF-free.
"""
