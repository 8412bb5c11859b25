"""Input pipelines and data formats, one subpackage per job (glue, squad,
tagging, multiple_choice, pretraining, extraction), tokenization and io
(docs/architecture.md)."""
