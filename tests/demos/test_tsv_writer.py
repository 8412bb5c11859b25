"""demos/next_sentence/tsv_writer.py: the TSV layout it writes is what
data.multiple_choice.readers.read_choice_tsv reads back."""
import pytest

from data.multiple_choice import readers
from data.multiple_choice.examples import MultipleChoiceExample
from demos.next_sentence.tsv_writer import format_choice_tsv, write_choice_tsv


def test_tsv_writer_round_trip(tmp_path):
    examples = [MultipleChoiceExample("r1", "Ctx, one.", ["a", "b", "c"], 2),
                MultipleChoiceExample("r2", "Ctx two.", ["d", "e", "f"], 0)]
    path = str(tmp_path / "out.tsv")
    assert write_choice_tsv(path, examples) == 2
    with open(path, encoding="utf-8") as f:
        assert f.read() == ("id\tcontext\tending0\tending1\tending2\tlabel\n"
                            "r1\tCtx, one.\ta\tb\tc\t2\n"
                            "r2\tCtx two.\td\te\tf\t0\n")
    assert readers.read_choice_tsv(path) == examples
    unlabelled = [MultipleChoiceExample("x", "C", ["a", "b"], None)]
    assert format_choice_tsv(unlabelled) == "id\tcontext\tending0\tending1\nx\tC\ta\tb\n"
    with pytest.raises(ValueError, match="tab or line break"):
        format_choice_tsv([MultipleChoiceExample("x", "C\tD", ["a", "b"], 0)])
