"""GLUE / XNLI sentence classification data: processors (reading the task
files), features (TFRecords of `input_ids`/`input_mask`/`segment_ids`/
`label_ids`) and metrics (accuracy, F1, Matthews, Pearson/Spearman)."""
