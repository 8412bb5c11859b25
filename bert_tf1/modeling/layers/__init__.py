"""The encoder's building blocks, each a Keras layer (or its helpers) with
the original's weight names (docs/architecture.md).
"""
