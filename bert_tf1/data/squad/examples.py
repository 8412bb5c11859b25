"""SQuAD JSON reading: questions, whitespace-split contexts and answer words.

Source: run_squad.py `SquadExample`, `read_squad_examples` (malformed files
raise a UserError naming the question; empty contexts do not crash).
"""
import dataclasses

from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_json


@dataclasses.dataclass(eq=False, repr=False)
class SquadExample:
    """One SQuAD question with its whitespace-split context.

    Source: run_squad.py `SquadExample`.

    Attributes:
      qas_id: str, the question id ("id" in the JSON).
      question_text: str, the question as written.
      doc_tokens: list of str, the context split by `split_context`.
      orig_answer_text: str or None (training only; "" if impossible).
      start_position, end_position: int or None, the first and last answer
        word in `doc_tokens` (training only; -1 if impossible).
      is_impossible: bool (SQuAD 2.0, training only).
    """

    qas_id: str
    question_text: str
    doc_tokens: list
    orig_answer_text: str = None
    start_position: int = None
    end_position: int = None
    is_impossible: bool = False

    def __repr__(self):
        parts = [
            "qas_id: %s" % self.qas_id,
            "question_text: %s" % self.question_text,
            "doc_tokens: [%s]" % " ".join(self.doc_tokens),
        ]
        if self.start_position is not None:
            parts.append("start_position: %d" % self.start_position)
            parts.append("end_position: %d" % self.end_position)
            parts.append("is_impossible: %r" % self.is_impossible)
        return ", ".join(parts)

    __str__ = __repr__


def split_context(paragraph_text):
    """Splits a context into words and maps every character to its word.

    Returns:
      (doc_tokens, char_to_word_offset): the words, and per character the
      index of its word (whitespace: the word before; leading: -1).

    Source: the loop at the top of run_squad.py `read_squad_examples`.
    """
    doc_tokens = []
    char_to_word_offset = []
    prev_is_whitespace = True
    for char in paragraph_text:
        # run_squad.py `is_whitespace`: U+00A0 and other Unicode spaces
        # stay inside words.
        if char in (" ", "\t", "\r", "\n", "\u202f"):
            prev_is_whitespace = True
        else:
            if prev_is_whitespace:
                doc_tokens.append(char)
            else:
                doc_tokens[-1] += char
            prev_is_whitespace = False
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


def check_squad_json(value, path):
    """`value` if it is a JSON object with a "data" list, else UserError."""
    if not isinstance(value, dict) or not isinstance(value.get("data"), list):
        raise UserError("%s: expected a JSON object with a \"data\" list "
                        "(SQuAD format)" % path)
    return value


def load_squad_json(input_file):
    """Loads a SQuAD JSON file and returns its "data" list.

    Raises:
      UserError: not valid JSON (file, line, column), no "data" list, an
        archive or not UTF-8 (TextFileError).
    """
    return check_squad_json(read_json(input_file, "SQuAD JSON"),
                            input_file)["data"]


def _field(container, key, expected_type, input_file, where):
    """Returns container[key], raising a ValueError that says where."""
    if not isinstance(container, dict) or key not in container:
        raise UserError("%s: %s has no \"%s\" field" % (
            input_file, where, key))
    value = container[key]
    if not isinstance(value, expected_type):
        raise UserError("%s: %s: field \"%s\" should be %s, got %s" % (
            input_file, where, key, expected_type.__name__,
            type(value).__name__))
    return value


def _answer_words(qa, qas_id, paragraph_text, doc_tokens,
                  char_to_word_offset, input_file):
    """Finds the training answer's first/last word, or None to skip it.

    Source: the `if not is_impossible:` branch of run_squad.py
    `read_squad_examples`.
    """
    where = "question %r" % qas_id
    answer = qa["answers"][0]
    orig_answer_text = _field(answer, "text", str, input_file,
                              where + " answer")
    answer_offset = _field(answer, "answer_start", int, input_file,
                           where + " answer")
    answer_length = len(orig_answer_text)
    # The original would index out of range here.
    if not doc_tokens or not orig_answer_text.split():
        logging.warning("Skipping question %r: empty context or answer text.",
                        qas_id)
        return None
    end_offset = answer_offset + answer_length - 1
    if answer_offset < 0 or end_offset >= len(paragraph_text):
        raise UserError(
            "%s: question %r: answer_start %d with an answer of %d "
            "characters lies outside the context (%d characters)" % (
                input_file, qas_id, answer_offset, answer_length,
                len(paragraph_text)))
    start_position = char_to_word_offset[answer_offset]
    end_position = char_to_word_offset[end_offset]
    # As the original: the answer text must be found in the span's words.
    actual_text = " ".join(doc_tokens[start_position:(end_position + 1)])
    cleaned_answer_text = " ".join(orig_answer_text.split())
    if actual_text.find(cleaned_answer_text) == -1:
        logging.warning("Could not find answer: '%s' vs. '%s'",
                        actual_text, cleaned_answer_text)
        return None
    return orig_answer_text, start_position, end_position


def read_squad_examples(input_file, is_training,
                        version_2_with_negative=False):
    """Reads a SQuAD 1.1 or 2.0 JSON file into a list of `SquadExample`.

    Args:
      input_file: path of the JSON file.
      is_training: bool; read the answers (exactly one per question) and
        align them to words, skipping unfound ones as the original.
      version_2_with_negative: bool; when training, read "is_impossible".

    Returns:
      list of SquadExample in file order.

    Raises:
      UserError: malformed JSON (file, line, column), a missing or mistyped
        field (naming the question or paragraph), a training question
        without exactly one answer, or an answer outside its context.

    Source: run_squad.py `read_squad_examples` (FLAGS.version_2_with_negative
    became an argument).
    """
    input_data = load_squad_json(input_file)
    examples = []
    seen_ids = set()
    for article_index, entry in enumerate(input_data):
        article_where = "data[%d]" % article_index
        paragraphs = _field(entry, "paragraphs", list, input_file,
                            article_where)
        for paragraph_index, paragraph in enumerate(paragraphs):
            where = "%s.paragraphs[%d]" % (article_where, paragraph_index)
            paragraph_text = _field(paragraph, "context", str, input_file,
                                    where)
            qas = _field(paragraph, "qas", list, input_file, where)
            doc_tokens, char_to_word_offset = split_context(paragraph_text)
            for qa_index, qa in enumerate(qas):
                qa_where = "%s.qas[%d]" % (where, qa_index)
                qas_id = _field(qa, "id", str, input_file, qa_where)
                q_where = "question %r" % qas_id
                question_text = _field(qa, "question", str, input_file,
                                       q_where)
                if qas_id in seen_ids:
                    # predictions.json is keyed by id: one would be lost.
                    logging.warning("%s: question id %r appears twice.",
                                    input_file, qas_id)
                seen_ids.add(qas_id)
                # (orig_answer_text, start_position, end_position)
                found = (None, None, None)
                is_impossible = False
                if is_training:
                    if version_2_with_negative:
                        is_impossible = _field(qa, "is_impossible", bool,
                                               input_file, q_where)
                    if not is_impossible:
                        answers = _field(qa, "answers", list, input_file,
                                         q_where)
                        if len(answers) != 1:
                            raise UserError(
                                "%s: question %r has %d answers; for "
                                "training, each question should have exactly "
                                "1 answer." % (input_file, qas_id,
                                               len(answers)))
                        found = _answer_words(qa, qas_id, paragraph_text,
                                              doc_tokens, char_to_word_offset,
                                              input_file)
                        if found is None:
                            continue
                    else:
                        found = ("", -1, -1)
                orig_answer_text, start_position, end_position = found
                examples.append(SquadExample(
                    qas_id=qas_id,
                    question_text=question_text,
                    doc_tokens=doc_tokens,
                    orig_answer_text=orig_answer_text,
                    start_position=start_position,
                    end_position=end_position,
                    is_impossible=is_impossible))
    return examples
