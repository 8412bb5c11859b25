"""File I/O shared by every task: atomic writes and the OS errors of a write
(`atomic`), the TFRecord format of each task built from one feature spec
(`tfrecord`, `record_specs`), checking record files record by record
(`record_scan`), the result files (`results`, NaN refused), one writer per
output_dir (`output_lock`) and what a user error is (`errors`)."""
