"""The encoder's building blocks, each a Keras layer (or its helpers) with the
original's weight names: `embeddings`, `attention`, `transformer`, the output
`heads`, `initializers`; `input_checks` (shape checks with
clear messages) and `serialization` (registration and config round trip).
"""
