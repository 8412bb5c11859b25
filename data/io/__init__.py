"""File I/O shared by every task: atomic writes (`atomic`), the TFRecord
format of each task built from one feature spec (`tfrecord`,
`record_specs`) and the result files (`results`)."""
