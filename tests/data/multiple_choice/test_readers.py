"""bert_tf1/data/multiple_choice/readers.py: SWAG CSV, HellaSwag JSONL and the TSV
layout, on the shared slices and on small fixtures; every bad-input error
names the file and line. Expected values are read off the files by hand
(see shared/data/multiple_choice/README.md)."""
import json

import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.multiple_choice import readers
from bert_tf1.data.multiple_choice.examples import (MissingDataFileError,
                                                    MultipleChoiceDataError,
                                                    MultipleChoiceExample)


def _write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return str(path)


SWAG_HEADER = (",video-id,fold-ind,startphrase,sent1,sent2,gold-source,"
               "ending0,ending1,ending2,ending3,label\n")


# ---- shared slices -----------------------------------------------------------

def test_shared_swag_slice(data_dir):
    path = data_dir / "multiple_choice" / "swag" / "swag.csv"
    examples = readers.read_examples(path, "swag")
    assert len(examples) == 11
    assert [e.example_id for e in examples] == [str(i) for i in range(11)]
    first = examples[0]
    assert first.context == "Students lower their eyes nervously."
    # ending0 is a quoted field holding a comma; sent2 "She" is joined.
    assert first.endings == [
        "She pats her shoulder, then saunters toward someone.",
        "She turns with two students.",
        "She walks slowly towards someone.",
        "She wheels around as her dog thunders out."]
    assert first.label == 2
    labels = [e.label for e in examples]
    assert (labels.count(2), labels.count(0), labels.count(1)) == (7, 3, 1)
    assert examples[3].context == ("We pan over to three girls chatting by a "
                                   "leaf blower.")
    assert examples[3].endings[2] == ("It levitates and blows one girl's "
                                      "skirt up.")


def test_shared_hellaswag_slice(data_dir):
    path = data_dir / "multiple_choice" / "hellaswag" / "hellaswag_val.jsonl"
    examples = readers.read_examples(path, "hellaswag", num_choices=4)
    assert examples == [
        MultipleChoiceExample(
            "24", "A man is sitting on a roof.",
            ["he is using wrap to wrap a pair of skis.",
             "he is ripping level tiles off.",
             "he is holding a rubik's cube.",
             "he starts pulling up roofing on a roof."], 3),
        MultipleChoiceExample(
            "92", "A lady walks to a barbell. She bends down and grabs the "
            "pole.",
            ["the lady swings and lands in her arms.",
             "the lady pulls the barbell forward.",
             "the lady pulls a rope attached to the barbell.",
             "the lady stands and lifts the weight over her head."], 3)]


# ---- swag fixtures -----------------------------------------------------------

def test_swag_quoting_multiline_field_and_crlf(tmp_path):
    text = (SWAG_HEADER
            + '7,v,1,x,"Ctx, with comma.",He,gold,"a, b","say ""hi""",'
              '"two\nlines",d,3\n').replace("\n", "\r\n")
    examples = readers.read_swag_csv(_write(tmp_path, "s.csv", text))
    assert examples == [MultipleChoiceExample(
        "7", "Ctx, with comma.",
        ["He a, b", 'He say "hi"', "He two\r\nlines", "He d"], 3)]


def test_swag_test_split_without_label_and_empty_sent2(tmp_path):
    header = SWAG_HEADER.replace(",label\n", "\n")
    text = header + "0,v,1,x,Ctx one.,,gold,a,b,c,d\n1,v,2,x,Two.,She,gold,a,b,c,d\n"
    examples = readers.read_examples(_write(tmp_path, "test.csv", text),
                                     "swag")
    # Empty sent2: the ending alone, no leading space.
    assert examples[0].endings == ["a", "b", "c", "d"]
    assert examples[1].endings == ["She a", "She b", "She c", "She d"]
    assert [e.label for e in examples] == [None, None]


@pytest.mark.parametrize("count", [2, 5])
def test_swag_any_number_of_choices(tmp_path, count):
    names = ",".join("ending%d" % k for k in range(count))
    values = ",".join("e%d" % k for k in range(count))
    text = ("sent1,sent2,%s,label\nC.,P,%s,%d\nD.,Q,%s,0\n"
            % (names, values, count - 1, values))
    examples = readers.read_swag_csv(_write(tmp_path, "s.csv", text))
    assert [e.endings for e in examples] == [
        ["P e%d" % k for k in range(count)],
        ["Q e%d" % k for k in range(count)]]
    assert [e.label for e in examples] == [count - 1, 0]
    # No unnamed index column: ids are the 0-based row numbers.
    assert [e.example_id for e in examples] == ["0", "1"]


# ---- hellaswag fixtures ------------------------------------------------------

def _jsonl(*items):
    return "".join(json.dumps(item) + "\n" for item in items)


@pytest.mark.parametrize("count", [2, 5])
def test_hellaswag_choices_missing_label_and_empty_ctx_b(tmp_path, count):
    endings = ["end %d." % k for k in range(count)]
    text = _jsonl({"ind": 5, "ctx_a": "A.", "ctx_b": "", "endings": endings},
                  {"ctx_a": "B.", "ctx_b": "the man", "endings": endings,
                   "label": ""}) + "\n"
    examples = readers.read_hellaswag_jsonl(_write(tmp_path, "t.jsonl", text))
    assert examples[0] == MultipleChoiceExample("5", "A.", endings, None)
    assert examples[1] == MultipleChoiceExample(
        "1", "B.", ["the man " + e for e in endings], None)


def test_hellaswag_string_label_and_missing_ctx_b(tmp_path):
    text = _jsonl({"ctx_a": "A.", "endings": ["x", "y"], "label": "1"})
    [example] = readers.read_hellaswag_jsonl(_write(tmp_path, "t.jsonl", text))
    assert example.endings == ["x", "y"] and example.label == 1


# ---- tsv fixtures ------------------------------------------------------------

@pytest.mark.parametrize("count", [2, 5])
def test_tsv_layout(tmp_path, count):
    names = "\t".join("ending%d" % k for k in range(count))
    rows = ["a%d" % k for k in range(count)]
    text = ("label\tid\tcontext\t%s\n%d\tq1\tThe context, ok.\t%s\n"
            "\n0\tq2\tSecond.\t%s\n" % (names, count - 1, "\t".join(rows),
                                           "\t".join(rows)))
    examples = readers.read_examples(_write(tmp_path, "d.tsv", text), "TSV",
                                     num_choices=count)
    assert examples == [
        MultipleChoiceExample("q1", "The context, ok.", rows, count - 1),
        MultipleChoiceExample("q2", "Second.", rows, 0)]


def test_tsv_unlabelled_and_without_id(tmp_path):
    text = "context\tending0\tending1\nC1\tx\ty\r\nC2\tu\tv\r\n"
    examples = readers.read_choice_tsv(_write(tmp_path, "test.tsv", text))
    assert examples == [MultipleChoiceExample("0", "C1", ["x", "y"], None),
                        MultipleChoiceExample("1", "C2", ["u", "v"], None)]
    # An empty label column means unlabelled too.
    text = "id\tcontext\tending0\tending1\tlabel\na\tC1\tx\ty\t\n"
    [example] = readers.read_choice_tsv(_write(tmp_path, "t2.tsv", text))
    assert example.label is None


def test_bom_is_dropped(tmp_path):
    text = "\ufeffcontext\tending0\tending1\tlabel\nC\tx\ty\t1\n"
    [example] = readers.read_choice_tsv(_write(tmp_path, "b.tsv", text))
    assert example.context == "C" and example.label == 1


# ---- errors ------------------------------------------------------------------

def _error(path, data_format, num_choices=None):
    with pytest.raises(MultipleChoiceDataError) as info:
        readers.read_examples(path, data_format, num_choices)
    assert isinstance(info.value, UserError)
    return str(info.value)


SWAG_ROW = "0,v,1,x,C.,He,gold,a,b,c,d,%s\n"
TSV_HEAD = "id\tcontext\tending0\tending1\tending2\tending3\tlabel\n"
TSV_ROW = "q\tC.\ta\tb\tc\td\t%s\n"


def _hella(label=0, **override):
    item = {"ctx_a": "A.", "ctx_b": "he", "endings": ["a", "b", "c", "d"],
            "label": label}
    item.update(override)
    return json.dumps(item) + "\n"


@pytest.mark.parametrize("data_format,text,line,phrase", [
    # A row with another number of choices.
    ("swag", SWAG_HEADER + SWAG_ROW % 0 + "1,v,1,x,C.,He,gold,a,b,c,0\n", 3,
     "found 11 fields, expected 12"),
    ("hellaswag", _hella() + _hella(endings=["a", "b", "c"]), 2,
     "found 3 endings, expected num_choices=4"),
    ("tsv", TSV_HEAD + TSV_ROW % 0 + "q\tC.\ta\tb\tc\t1\n", 3,
     "found 6 fields, expected 7"),
    # A label outside 0..N-1, or not an integer.
    ("swag", SWAG_HEADER + SWAG_ROW % 0 + SWAG_ROW % 4, 3,
     "label 4 is outside 0..3"),
    ("hellaswag", _hella(label=-1), 1, "label -1 is outside 0..3"),
    ("hellaswag", _hella(label=1.0), 1, "is not an integer"),
    ("hellaswag", _hella(label=True), 1, "is not an integer"),
    ("tsv", TSV_HEAD + TSV_ROW % 0 + TSV_ROW % "two", 3,
     "label 'two' is not an integer"),
    ("tsv", TSV_HEAD + TSV_ROW % "9", 2, "label 9 is outside 0..3"),
    # Missing columns / fields.
    ("swag", "sent2,ending0,ending1,label\nHe,a,b,0\n", 1,
     "no column 'sent1'"),
    ("swag", "sent1,sent2,ending0,label\nC,He,a,0\n", 1,
     "expected at least ending0 and ending1"),
    ("tsv", "id\tending0\tending1\tlabel\nq\ta\tb\t0\n", 1,
     "no column 'context'"),
    ("tsv", "context\tending0\tending2\tlabel\nC\ta\tb\t0\n", 1,
     "ending0, ending2; expected ending0..ending{N-1} with no gap"),
    ("tsv", "context\tcontext\tending0\tending1\nC\tC\ta\tb\n", 1,
     "column 'context' appears twice"),
    ("tsv", "context\tending0\tending1\tlable\nC\ta\tb\t0\n", 1,
     "unknown column 'lable'"),
    ("hellaswag", _hella() + json.dumps({"ctx_b": "x", "endings": ["a"] * 4})
     + "\n", 2, "no 'ctx_a' field"),
    ("hellaswag", json.dumps({"ctx_a": "x", "label": 0}) + "\n", 1,
     "field 'endings' is missing"),
    ("hellaswag", _hella(ctx_b=3), 1, "field 'ctx_b' is int"),
    # Bad JSON.
    ("hellaswag", _hella() + '{"ctx_a": "x", \n', 2, "not valid JSON"),
    ("hellaswag", _hella() + "[1, 2]\n", 2, "found a JSON list"),
    # Bad CSV quoting.
    ("swag", SWAG_HEADER + '0,v,1,x,"C." x,He,gold,a,b,c,d,0\n', 2,
     "not valid CSV"),
    # Labels on some rows only.
    ("tsv", TSV_HEAD + TSV_ROW % 1 + TSV_ROW % "", 3, "has no label, but "
     "line 2 has one"),
    ("hellaswag", _hella(label=None) + _hella(label=2), 2,
     "has a label, but line 1 has none"),
])
def test_bad_rows_name_file_and_line(tmp_path, data_format, text, line,
                                     phrase):
    path = _write(tmp_path, "bad." + data_format, text)
    message = _error(path, data_format)
    assert message.startswith("%s, line %d: " % (path, line))
    assert phrase in message


@pytest.mark.parametrize("data_format,text", [
    ("swag", SWAG_HEADER + SWAG_ROW % 0),
    ("tsv", TSV_HEAD + TSV_ROW % 0),
])
def test_num_choices_against_header(tmp_path, data_format, text):
    path = _write(tmp_path, "f." + data_format, text)
    message = _error(path, data_format, num_choices=5)
    assert message.startswith(path + ", line 1: found 4 ending columns")
    assert "expected num_choices=5" in message


def test_num_choices_against_jsonl_rows(tmp_path):
    path = _write(tmp_path, "f.jsonl", _hella())
    assert _error(path, "hellaswag", 2).startswith(
        path + ", line 1: found 4 endings, expected num_choices=2")


@pytest.mark.parametrize("data_format", readers.DATA_FORMATS)
def test_empty_and_header_only_files(tmp_path, data_format):
    for name, text in (("empty", ""), ("blank", "\n\n"),
                       ("header", {"swag": SWAG_HEADER, "tsv": TSV_HEAD,
                                   "hellaswag": ""}[data_format])):
        path = _write(tmp_path, name, text)
        message = _error(path, data_format)
        assert message.startswith(path + ": no examples")


@pytest.mark.parametrize("data_format,text", [
    ("swag", SWAG_HEADER + "0,v,1,x,Caf\u00e9.,He,gold,a,b,c,d,0\n"),
    ("hellaswag", '{"ctx_a": "Caf\u00e9.", "endings": ["a", "b"]}\n'),
    ("tsv", TSV_HEAD + "q\tCaf\u00e9.\ta\tb\tc\td\t0\n"),
])
def test_non_utf8_file(tmp_path, data_format, text):
    path = _write(tmp_path, "latin1", text, encoding="latin-1")
    message = _error(path, data_format)
    assert message.startswith(path + ", line 2" if data_format != "hellaswag"
                              else path + ", line 1")
    assert "not UTF-8" in message


def test_zip_missing_file_and_unknown_format(tmp_path):
    path = _write(tmp_path, "d.zip", b"PK\x03\x04rest")
    assert "is a zip archive" in _error(path, "tsv")
    with pytest.raises(MissingDataFileError, match="file not found"):
        readers.read_examples(str(tmp_path / "nope.csv"), "swag")
    with pytest.raises(MultipleChoiceDataError, match="--data_format=race"):
        readers.read_examples(path, "race")
    with pytest.raises(MultipleChoiceDataError, match="--num_choices=1"):
        readers.read_examples(path, "tsv", num_choices=1)
