"""A slice of a SQuAD file, e.g. a training file made from a dev set.

    python -m bert_tf1.data.squad.subset INPUT OUTPUT [--first_answer_only]
        [--skip_questions N] [--max_questions N]

INPUT is a SQuAD JSON file or a zip holding one. `--first_answer_only` keeps
each question's first answer (run_squad.py trains on exactly one). Written
atomically; a bad input is one line on stderr and exit status 1.
"""
import argparse
import json
import os
import sys
import zipfile

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.results import write_text_atomically
from bert_tf1.data.io.text_files import read_json
from bert_tf1.data.squad.examples import check_squad_json


def read_squad_file(path):
    """The SQuAD JSON object of `path` (a .json, or a .zip holding one).

    Raises:
        UserError: unreadable, not JSON, no "data" list, or a zip without
            exactly one .json member.
    """
    text = None  # A plain .json: read_json reads it.
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                members = [name for name in archive.namelist()
                           if name.endswith(".json")
                           and not name.startswith("__MACOSX/")]
                if len(members) != 1:
                    raise UserError(f"{path}: expected one .json file in the "
                                    f"zip, found {members or 'none'}")
                text = archive.read(members[0]).decode("utf-8")
        return check_squad_json(read_json(path, "SQuAD JSON", text), path)
    except (OSError, UnicodeDecodeError, zipfile.BadZipFile) as error:
        raise UserError(f"{path}: cannot be read: {error}") from None


def squad_subset(squad, skip_questions=0, max_questions=None,
                 first_answer_only=False):
    """The questions `skip_questions` .. `skip_questions + max_questions - 1`
    of a SQuAD JSON object, in a new object of the same format.

    Returns:
        (dict, number of questions kept).
    """
    end = None if max_questions is None else skip_questions + max_questions
    index, kept_count, articles = 0, 0, []
    for article in squad["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = []
            for qa in paragraph["qas"]:
                if index >= skip_questions and (end is None or index < end):
                    qa = dict(qa)
                    if first_answer_only and qa.get("answers"):
                        qa["answers"] = qa["answers"][:1]
                    qas.append(qa)
                index += 1
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
                kept_count += len(qas)
        if paragraphs:
            articles.append(dict(article, paragraphs=paragraphs))
    return dict(squad, data=articles), kept_count


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bert_tf1.data.squad.subset",
        description="Write a slice of a SQuAD file (optionally one answer "
                    "per question, for training).")
    parser.add_argument("input", help="SQuAD .json, or a .zip holding one.")
    parser.add_argument("output", help="The SQuAD .json to write.")
    parser.add_argument("--skip_questions", type=int, default=0,
                        help="Questions to leave out first (default 0).")
    parser.add_argument("--max_questions", type=int, default=None,
                        help="Questions to keep (default: all the rest).")
    parser.add_argument("--first_answer_only", action="store_true",
                        help="Keep each question's first answer only (what "
                             "run_squad.py --do_train needs).")
    return parser.parse_args(argv)


def main(argv=None):
    """Command-line entry point; returns the process exit status."""
    opts = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if opts.skip_questions < 0 or (opts.max_questions is not None
                                       and opts.max_questions < 1):
            raise UserError("--skip_questions must be >= 0 and "
                            "--max_questions >= 1")
        subset, count = squad_subset(read_squad_file(opts.input),
                                     opts.skip_questions, opts.max_questions,
                                     opts.first_answer_only)
        if not count:
            raise UserError(f"{opts.input}: no question left after skipping "
                            f"{opts.skip_questions}")
        folder = os.path.dirname(opts.output)
        if folder:
            os.makedirs(folder, exist_ok=True)
        write_text_atomically(opts.output, json.dumps(subset))
    except UserError as error:
        print(f"python -m bert_tf1.data.squad.subset: error: {error}", file=sys.stderr)
        return 1
    print(f"Wrote {count} questions to {opts.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
