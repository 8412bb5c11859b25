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


def encoder_weight_shapes(config):
    """{TF1 name: shape} of every `BertModel` weight for `config`, in the
    model's order, without building a model (a converter's template).

    Args:
        config: BertConfig.
    Returns:
        dict of str -> tuple of int, e.g.
        "bert/encoder/layer_0/intermediate/dense/kernel" -> (H, I).
    """
    hidden, inner = config.hidden_size, config.intermediate_size
    shapes = {
        "bert/embeddings/word_embeddings": (config.vocab_size, hidden),
        "bert/embeddings/token_type_embeddings": (config.type_vocab_size,
                                                  hidden),
        "bert/embeddings/position_embeddings": (
            config.max_position_embeddings, hidden),
        "bert/embeddings/LayerNorm/gamma": (hidden,),
        "bert/embeddings/LayerNorm/beta": (hidden,),
    }
    dense = {"attention/self/query": (hidden, hidden),
             "attention/self/key": (hidden, hidden),
             "attention/self/value": (hidden, hidden),
             "attention/output/dense": (hidden, hidden),
             "attention/output/LayerNorm": None,
             "intermediate/dense": (hidden, inner),
             "output/dense": (inner, hidden),
             "output/LayerNorm": None}
    for layer in range(config.num_hidden_layers):
        for scope, kernel in dense.items():
            prefix = f"bert/encoder/layer_{layer}/{scope}"
            if kernel is None:
                shapes[prefix + "/gamma"] = shapes[prefix + "/beta"] = (hidden,)
            else:
                shapes[prefix + "/kernel"] = kernel
                shapes[prefix + "/bias"] = (kernel[1],)
    shapes["bert/pooler/dense/kernel"] = (hidden, hidden)
    shapes["bert/pooler/dense/bias"] = (hidden,)
    return shapes
