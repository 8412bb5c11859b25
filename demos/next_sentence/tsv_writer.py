"""Writing examples in the plain multiple-choice TSV layout (read by
`bert_tf1.data.multiple_choice.readers.read_choice_tsv`), atomically."""
from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.multiple_choice.readers import (TSV_CONTEXT_COLUMN, TSV_ID_COLUMN,
                                                   TSV_LABEL_COLUMN, tsv_ending_column)

__all__ = ["format_choice_tsv", "write_choice_tsv"]


def _check_cell(text, example_id, what):
    if not isinstance(text, str):
        raise TypeError("example %s: %s is %s, expected str" % (
            example_id, what, type(text).__name__))
    if "\t" in text or "\n" in text or "\r" in text:
        raise ValueError("example %s: %s holds a tab or line break, which the "
                         "TSV layout cannot store" % (example_id, what))
    return text


def format_choice_tsv(examples):
    """The TSV text of `examples` (see the module docstring).

    `examples`: MultipleChoiceExample with one number of endings, labels
    all ints or all None (no label column).

    Raises:
      ValueError: no examples, a differing number of endings, mixed
        labelled/unlabelled examples, or a text with a tab or line break.
    """
    examples = list(examples)
    if not examples:
        raise ValueError("no examples to write")
    num_choices = len(examples[0].endings)
    labelled = examples[0].label is not None
    header = ([TSV_ID_COLUMN, TSV_CONTEXT_COLUMN]
              + [tsv_ending_column(k) for k in range(num_choices)]
              + ([TSV_LABEL_COLUMN] if labelled else []))
    lines = ["\t".join(header)]
    for example in examples:
        if len(example.endings) != num_choices:
            raise ValueError("example %s has %d endings, the first has %d" % (
                example.example_id, len(example.endings), num_choices))
        if (example.label is not None) != labelled:
            raise ValueError("example %s: labelled and unlabelled examples "
                             "cannot share a file" % example.example_id)
        cells = [_check_cell(str(example.example_id), example.example_id,
                             "the id"),
                 _check_cell(example.context, example.example_id,
                             "the context")]
        cells += [_check_cell(ending, example.example_id, "ending%d" % k)
                  for k, ending in enumerate(example.endings)]
        if labelled:
            cells.append(str(int(example.label)))
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def write_choice_tsv(path, examples):
    """Writes `format_choice_tsv(examples)` to `path` atomically; returns
    the number of rows (ValueError: nothing written)."""
    examples = list(examples)
    write_text_atomically(path, format_choice_tsv(examples))
    return len(examples)
