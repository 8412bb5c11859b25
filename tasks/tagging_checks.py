"""run_ner.py's flag checks (tasks/tagging.py runs them in `prepare()`)."""
from data.tagging.features import check_window_flags
from data.tagging.readers import DATA_FORMATS
from data.tagging.schemes import normalize_scheme
from modeling.models.feature_tagger import check_feature_layers
from tasks import checks
from tasks.errors import UserError

def check_tagging_flags(config, num_hidden_layers):
    """Checks --data_format, --tag_scheme, --feature_layers, --lstm_units and
    the window flags of a `TaggingConfig`.

    Args:
        config: `tasks.tagging.TaggingConfig`.
        num_hidden_layers: the encoder's layers (for --feature_layers).

    Returns:
        the normalized tag scheme of the files (`normalize_scheme`).

    Raises:
        UserError: naming the flag, its value and what was expected.
    """
    if config.data_format not in DATA_FORMATS:
        raise UserError(f"--data_format={config.data_format}: expected "
                        f"one of {', '.join(DATA_FORMATS)}")
    try:
        scheme = normalize_scheme(config.tag_scheme)
    except ValueError as error:
        raise UserError(f"--tag_scheme={config.tag_scheme}: {error}") from None
    if config.feature_layers:
        try:
            check_feature_layers(config.feature_layers, num_hidden_layers)
        except ValueError as error:
            raise UserError(f"--feature_layers={config.feature_layers}: "
                            f"{error} ({config.bert_config_file})") from None
    if config.lstm_units is not None:
        checks.check_positive(lstm_units=config.lstm_units)
    check_window_flags(config.max_seq_length, config.doc_stride)
    return scheme
