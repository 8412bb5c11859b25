"""docs/coming_from_the_original.md has a row for every public name of the
original's Python modules.

The list below is every public top-level name (functions, classes and
module-level assignments: the namedtuples, `flags`, `FLAGS`) and every
public method of google-research/bert's modeling.py, optimization.py,
tokenization.py, run_classifier.py, run_squad.py, extract_features.py,
run_pretraining.py and create_pretraining_data.py at commit eedf571
(https://github.com/google-research/bert/tree/eedf571), in source order. It
was extracted once with `ast` over `git show eedf571:<file>` (a `def` or
`class` at module level, a `def` in such a class, a module-level `Name =`;
names starting with `_` left out) and pasted here, so the test needs no
network: 81 top-level definitions, 36 methods, 12 assignments.

The page has one "## `<file>.py`" section per file; a name is covered by a
backticked span in the first column of a table row of its file's section
(`Class.method` for a method; a call's arguments are ignored). A span there
that is no public name of that file fails too (a typo would hide a gap).
Rows of names that only made sense under `tf.estimator` must say so.
"""
import re

from tests.conftest import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "coming_from_the_original.md"

ORIGINAL_NAMES = {
    "modeling.py": (
        "BertConfig", "BertConfig.from_dict", "BertConfig.from_json_file",
        "BertConfig.to_dict", "BertConfig.to_json_string", "BertModel",
        "BertModel.get_pooled_output", "BertModel.get_sequence_output",
        "BertModel.get_all_encoder_layers", "BertModel.get_embedding_output",
        "BertModel.get_embedding_table", "gelu", "get_activation",
        "get_assignment_map_from_checkpoint", "dropout", "layer_norm",
        "layer_norm_and_dropout", "create_initializer", "embedding_lookup",
        "embedding_postprocessor", "create_attention_mask_from_input_mask",
        "attention_layer", "transformer_model", "get_shape_list",
        "reshape_to_matrix", "reshape_from_matrix", "assert_rank",
    ),
    "optimization.py": (
        "create_optimizer", "AdamWeightDecayOptimizer",
        "AdamWeightDecayOptimizer.apply_gradients",
    ),
    "tokenization.py": (
        "validate_case_matches_checkpoint", "convert_to_unicode",
        "printable_text", "load_vocab", "convert_by_vocab",
        "convert_tokens_to_ids", "convert_ids_to_tokens",
        "whitespace_tokenize", "FullTokenizer", "FullTokenizer.tokenize",
        "FullTokenizer.convert_tokens_to_ids",
        "FullTokenizer.convert_ids_to_tokens", "BasicTokenizer",
        "BasicTokenizer.tokenize", "WordpieceTokenizer",
        "WordpieceTokenizer.tokenize",
    ),
    "run_classifier.py": (
        "flags", "FLAGS", "InputExample", "PaddingInputExample",
        "InputFeatures", "DataProcessor", "DataProcessor.get_train_examples",
        "DataProcessor.get_dev_examples", "DataProcessor.get_test_examples",
        "DataProcessor.get_labels", "XnliProcessor",
        "XnliProcessor.get_train_examples", "XnliProcessor.get_dev_examples",
        "XnliProcessor.get_labels", "MnliProcessor",
        "MnliProcessor.get_train_examples", "MnliProcessor.get_dev_examples",
        "MnliProcessor.get_test_examples", "MnliProcessor.get_labels",
        "MrpcProcessor", "MrpcProcessor.get_train_examples",
        "MrpcProcessor.get_dev_examples", "MrpcProcessor.get_test_examples",
        "MrpcProcessor.get_labels", "ColaProcessor",
        "ColaProcessor.get_train_examples", "ColaProcessor.get_dev_examples",
        "ColaProcessor.get_test_examples", "ColaProcessor.get_labels",
        "convert_single_example", "file_based_convert_examples_to_features",
        "file_based_input_fn_builder", "create_model", "model_fn_builder",
        "input_fn_builder", "convert_examples_to_features", "main",
    ),
    "run_squad.py": (
        "flags", "FLAGS", "SquadExample", "InputFeatures",
        "read_squad_examples", "convert_examples_to_features", "create_model",
        "model_fn_builder", "input_fn_builder", "RawResult",
        "write_predictions", "get_final_text", "FeatureWriter",
        "FeatureWriter.process_feature", "FeatureWriter.close",
        "validate_flags_or_throw", "main",
    ),
    "extract_features.py": (
        "flags", "FLAGS", "InputExample", "InputFeatures", "input_fn_builder",
        "model_fn_builder", "convert_examples_to_features", "read_examples",
        "main",
    ),
    "run_pretraining.py": (
        "flags", "FLAGS", "model_fn_builder", "get_masked_lm_output",
        "get_next_sentence_output", "gather_indexes", "input_fn_builder",
        "main",
    ),
    "create_pretraining_data.py": (
        "flags", "FLAGS", "TrainingInstance",
        "write_instance_to_example_files", "create_int_feature",
        "create_float_feature", "create_training_instances",
        "create_instances_from_document", "MaskedLmInstance",
        "create_masked_lm_predictions", "truncate_seq_pair", "main",
    ),
}

# Names whose meaning was tf.estimator's (removed in TensorFlow 2.16): their
# rows name it and what replaces it.
ESTIMATOR_ONLY = {"model_fn_builder", "input_fn_builder",
                  "file_based_input_fn_builder", "PaddingInputExample",
                  "create_optimizer"}

SECTION = re.compile(r"^## `(\w+\.py)`\s*$")
SPAN = re.compile(r"`([^`]+)`")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?$")


def table_rows(text):
    """{file: [(first cell, second cell), ...]} of the page's table rows under
    each "## `file.py`" heading (header and rule rows left out)."""
    rows, section = {}, None
    for line in text.splitlines():
        match = SECTION.match(line)
        if match:
            section = rows.setdefault(match.group(1), [])
            continue
        if line.startswith("## "):
            section = None
        if section is None or not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in ("Original", "---") or set(cells[0]) <= {"-", " "}:
            continue
        section.append((cells[0], cells[1] if len(cells) > 1 else ""))
    return rows


def first_column_names(cell):
    """The names a first cell's backticked spans give (`f(a, b)` -> f)."""
    return [span.split("(")[0].strip() for span in SPAN.findall(cell)]


def problems(text, original=ORIGINAL_NAMES):
    """One line per gap between the page and `original`: a file without a
    section, a name without a row, a span that names nothing of the file, an
    estimator-only name whose row does not say so, a row without a
    replacement."""
    found, rows = [], table_rows(text)
    for file, names in original.items():
        if file not in rows:
            found.append(f"{file}: no section")
            continue
        covered = {}
        for first, here in rows[file]:
            for name in first_column_names(first):
                if not NAME.match(name) or name not in names:
                    found.append(f"{file}: {name!r} is not one of its public names")
                covered[name] = here
            if not here:
                found.append(f"{file}: row {first!r} names no replacement")
        for name in names:
            if name not in covered:
                found.append(f"{file}: {name} has no row")
            elif name in ESTIMATOR_ONLY and "estimator" not in covered[name].lower():
                found.append(f"{file}: the row of {name} does not name tf.estimator")
    for file in set(rows) - set(original):
        found.append(f"{file}: a section for a file not in the list")
    return found


def test_the_list_is_the_extraction():
    counts = [sum("." in name for name in names) for names in ORIGINAL_NAMES.values()]
    assert sum(map(len, ORIGINAL_NAMES.values())) == 129
    assert sum(counts) == 36
    for names in ORIGINAL_NAMES.values():
        assert len(set(names)) == len(names)


def test_every_public_name_of_the_original_has_a_row():
    assert problems(PAGE.read_text(encoding="utf-8")) == []


def test_gaps_are_reported():
    text = PAGE.read_text(encoding="utf-8")
    dropped = "\n".join(line for line in text.splitlines()
                        if not line.startswith("| `gelu`"))
    assert problems(dropped) == ["modeling.py: gelu has no row",
                                 "modeling.py: get_activation has no row"]
    typo = text.replace("| `load_vocab` |", "| `load_vocabs` |")
    assert problems(typo) == [
        "tokenization.py: 'load_vocabs' is not one of its public names",
        "tokenization.py: load_vocab has no row"]
    moved = text.replace("| `model_fn_builder` | `tf.estimator` only:",
                         "| `model_fn_builder` | replaced:", 1)
    assert problems(moved) == [
        "run_classifier.py: the row of model_fn_builder does not name tf.estimator"]
    gone = text.replace("## `optimization.py`", "## optimization")
    assert problems(gone) == ["optimization.py: no section"]
