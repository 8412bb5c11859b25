"""Input pipelines: tokenization, task processors, TFRecord features."""
