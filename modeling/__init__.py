"""Keras 3 BERT with the original google-research/bert weight layout."""
