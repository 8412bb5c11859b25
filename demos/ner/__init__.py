"""The NER demo's baselines (demos/ner.sh): `baselines.MostFrequentTagBaseline`
and `bilstm_tagger.WordPieceBiLSTMTagger` (no BERT)."""
