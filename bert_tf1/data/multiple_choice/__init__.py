"""Multiple-choice data (SWAG, HellaSwag, a plain TSV): reading, features
and TFRecords (BERT paper §4.4; docs/multiple_choice.md). Each
example becomes num_choices rows `[CLS] context [SEP] ending [SEP]`.
"""
