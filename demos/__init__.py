"""Demo code: what demos/*.sh and demos/*.py run, outside the library.

- `next_sentence`: a next-sentence multiple-choice task built from the shared
  plain text (sentence splitting, documents, the task, its analysis);
- `ner`: the NER demo's baselines: most frequent tag per word, and a BiLSTM
  over random word-piece embeddings (no BERT) trained by
  `demos/wordpiece_bilstm_ner.py`.

Library code (`data`, `modeling`, `serving`, `tasks`, the root scripts)
never imports from here (tests/test_import_layers.py).
"""
