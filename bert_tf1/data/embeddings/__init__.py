"""Sentence-embedding data: the training and evaluation files of
run_embeddings.py (pairs, triplets, scored pairs, GLUE STS-B and QNLI) and
the metrics (STS correlations, retrieval MRR/nDCG/recall)."""
