"""SQuAD v1.1/v2.0: reading examples, windowed features, post-processing of
start/end logits into answer texts, and the official evaluation."""
