"""Sequence tagging (NER, BERT paper §5.3) data: reading tagged files, tag
schemes, word-piece windows over whole documents, TFRecords, decoding
predictions back to one tag per word and the conlleval metric.

Modules (all TF-free except `records`):
- `documents`: Word / Sentence / Document (with file path and line numbers),
  scheme conversion of whole documents, corpus counts;
- `schemes`: IOB1, IOB2 (BIO), BIOES: tag and sequence checks, entity spans
  (conlleval rules), conversion, label lists;
- `readers`: `read_tagged_file(path, data_format, scheme, has_tags)` for
  `conll`, `uner`, `chinese_bio` files;
- `windows`: run_squad.py's sliding windows and max-context rule;
- `features`: documents -> TaggingFeatures (input_ids, input_mask,
  segment_ids, label_ids, label_weights + the position -> word map);
- `records`: TFRecord writer and tf.data reader (spec:
  data.io.record_specs.tagging_record_spec);
- `decoding`: window predictions (ids or logits) -> tags per word;
- `outputs`: predictions.txt / eval_predictions.txt, label_list.txt;
- `metric`: entity P/R/F1 (overall, per type) and token accuracy, as
  conlleval (`conll_scores`), and its text report (`conlleval_report`).

Flow:

    train = read_tagged_file("train.txt", "conll", scheme="iob1")
    train = convert_documents(train, "iob1")     # to IOB2, the default
    labels = scheme_labels(entity_types(all_tags(train)), "iob2")
    features = convert_documents_to_features(train, tokenizer, labels,
                                             max_seq_length=128,
                                             doc_stride=64)
    write_tagging_records(features, "train.tf_record")        # records
    ... model predictions [num_windows, max_seq_length(, labels)] ...
    tags = predicted_tags(features, predictions, documents, labels)
    # One tag per input word, always; back to the file's scheme:
    tags = [[convert_tags(t, "iob2", "iob1") for t in doc] for doc in tags]
    write_predictions("predictions.txt", documents, tags)
    conll_scores(gold_sentences, predicted_sentences).as_dict()
"""
