"""The one rule that turns a Keras weight path into its TF1 variable name.

Our models name their layers after the original's variable scopes and build
every weight when constructed, so a weight's path is always
`<model name>/<TF1 name>` (`bert_squad/cls/squad/output_weights` ->
`cls/squad/output_weights`).
"""


def tf1_name(variable):
    """TF1 variable name of a Keras weight (its `path` minus the model name).

    Args:
        variable: a Keras variable, or its path as a string.
    Returns:
        str, e.g. "bert/embeddings/word_embeddings".
    Raises:
        ValueError: the path has a single component (a weight created outside
            any model).
    """
    path = variable if isinstance(variable, str) else variable.path
    head, sep, rest = path.partition("/")
    if not sep or not rest:
        raise ValueError(
            f"Weight path {path!r} has no model prefix; cannot derive its TF1 "
            "name.")
    return rest
