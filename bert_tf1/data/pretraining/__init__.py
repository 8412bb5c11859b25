"""Pretraining data: corpus sharding, masked-LM/next-sentence instances,
their TFRecords, the input pipeline, dynamic masking and eval metrics."""
