"""Multiple-choice data (SWAG, HellaSwag, a plain TSV): reading, features,
TFRecords and result files.

BERT paper §4.4 (SWAG). The original repository has no SWAG code; its
author's recipe, which this package prepares the data for: each example
becomes num_choices rows `[CLS] context [SEP] continuation [SEP]`, a batch
[batch, num_choices, seq] runs through the encoder as
[batch * num_choices, seq], one vector scores each row's pooled output and a
softmax is taken across the num_choices scores.

Modules (import them directly; this file imports nothing heavy):
- `examples`: `MultipleChoiceExample`, `PaddingExample`, the error classes;
- `readers`: `read_examples(path, data_format, num_choices=None)` for
  `DATA_FORMATS` = swag (CSV), hellaswag (JSONL), tsv (own layout);
- `tsv_writer`: `write_choice_tsv(path, examples)`;
- `features`: `convert_examples_to_features` -> [num_choices, max_seq_length]
  ids/mask/segments per example, `features_to_arrays`;
- `records`: TFRecord writer and `multiple_choice_dataset` (tf.data);
  (`flatten_choices` / `unflatten_choices`, which the model uses, are in
  `modeling/layers/choices.py`);
- `results`: `write_test_results` / `read_test_results` (test_results.tsv).

The next-sentence demo task built from the shared plain text is in
`demos/next_sentence/`.
"""
