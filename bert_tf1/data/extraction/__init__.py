"""Feature extraction (extract_features.py): input lines and JSON lines of
per-layer token vectors."""
