"""Sentence-pair training instances for masked-LM and next-sentence pre-training.

Source: create_pretraining_data.py: the same document splits and the same
`random.Random` calls in the same order, so for the same corpus, vocabulary
and seed the instances equal the original's (own code: that rng call order
is what parity needs).
"""
from bert_tf1.data.io.errors import UserError
import dataclasses
import sys

CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
MASK_TOKEN = "[MASK]"


@dataclasses.dataclass
class TrainingInstance:
    """One sentence pair with its masked-LM predictions.

    Attributes:
      tokens: list of str, `[CLS] A [SEP] B [SEP]` after masking.
      segment_ids: list of int (0 or 1), same length as `tokens`.
      masked_lm_positions: list of int, sorted positions of the predictions.
      masked_lm_labels: list of str, the original token at each position.
      is_random_next: bool, B from a random document (label 1).

    Source: create_pretraining_data.py, class TrainingInstance.
    """
    tokens: list
    segment_ids: list
    masked_lm_positions: list
    masked_lm_labels: list
    is_random_next: bool


def read_documents(lines, tokenizer):
    """Groups tokenized sentences into documents.

    Args:
      lines: iterable of str, one sentence per line; a blank line starts a
        new document.
      tokenizer: a FullTokenizer.

    Returns:
      list of documents (non-empty lists of sentences, each a non-empty list
      of wordpiece tokens), in input order.

    Source: create_pretraining_data.py, create_training_instances (reading).
    """
    documents = [[]]
    for line in lines:
        line = line.strip()
        if not line:
            documents.append([])
            continue
        # Interned: a corpus in memory costs about a pointer per token.
        tokens = [sys.intern(token) for token in tokenizer.tokenize(line)]
        if tokens:
            documents[-1].append(tokens)
    return [document for document in documents if document]


def create_training_instances(documents, vocab_words, rng, max_seq_length=128,
                              dupe_factor=10, short_seq_prob=0.1,
                              masked_lm_prob=0.15, max_predictions_per_seq=20,
                              do_whole_word_mask=False, progress=None):
    """Builds the shuffled training instances for a list of documents.

    Args:
      documents: output of `read_documents` (not modified).
      vocab_words: list of str, the vocabulary in file order.
      rng: `random.Random` (the original's default seed is 12345).
      max_seq_length, dupe_factor, short_seq_prob, masked_lm_prob,
      max_predictions_per_seq, do_whole_word_mask: as the original's flags.
      progress: optional callable(done, total) after each document.

    Returns:
      list of TrainingInstance.

    Raises:
      UserError: max_seq_length < 5.

    Source: create_pretraining_data.py, create_training_instances.
    """
    if max_seq_length < 5:
        raise UserError(
            "max_seq_length must be at least 5 ([CLS] A [SEP] B [SEP] with "
            "a target length of at least 2), got %d" % max_seq_length)
    documents = list(documents)
    rng.shuffle(documents)
    total = dupe_factor * len(documents)
    done = 0
    instances = []
    for _ in range(dupe_factor):
        for document_index in range(len(documents)):
            instances.extend(create_instances_from_document(
                documents, document_index, vocab_words, rng,
                max_seq_length=max_seq_length,
                short_seq_prob=short_seq_prob,
                masked_lm_prob=masked_lm_prob,
                max_predictions_per_seq=max_predictions_per_seq,
                do_whole_word_mask=do_whole_word_mask))
            done += 1
            if progress is not None:
                progress(done, total)
    rng.shuffle(instances)
    return instances


def create_instances_from_document(documents, document_index, vocab_words,
                                   rng, max_seq_length=128,
                                   short_seq_prob=0.1, masked_lm_prob=0.15,
                                   max_predictions_per_seq=20,
                                   do_whole_word_mask=False):
    """list of TrainingInstance cut from documents[document_index] (other
    arguments as create_training_instances).

    Source: create_pretraining_data.py, create_instances_from_document.
    """
    document = documents[document_index]
    max_num_tokens = max_seq_length - 3
    target_seq_length = max_num_tokens
    if rng.random() < short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)

    instances = []
    current_chunk = []
    current_length = 0
    i = 0
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            a_end = 1
            if len(current_chunk) >= 2:
                a_end = rng.randint(1, len(current_chunk) - 1)
            tokens_a = [t for sentence in current_chunk[:a_end]
                        for t in sentence]
            tokens_b = []
            # Short-circuit as in the original: a one-sentence chunk draws
            # no number here.
            is_random_next = len(current_chunk) == 1 or rng.random() < 0.5
            if is_random_next:
                target_b_length = target_seq_length - len(tokens_a)
                for _ in range(10):
                    random_document_index = rng.randint(
                        0, len(documents) - 1)
                    if random_document_index != document_index:
                        break
                random_document = documents[random_document_index]
                random_start = rng.randint(0, len(random_document) - 1)
                for sentence in random_document[random_start:]:
                    tokens_b.extend(sentence)
                    if len(tokens_b) >= target_b_length:
                        break
                # The sentences after A were not used: read them again.
                i -= len(current_chunk) - a_end
            else:
                for sentence in current_chunk[a_end:]:
                    tokens_b.extend(sentence)
            truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
            if not tokens_a or not tokens_b:
                raise AssertionError(
                    "empty segment after truncation (max_seq_length=%d)"
                    % max_seq_length)

            tokens = [CLS_TOKEN, *tokens_a, SEP_TOKEN, *tokens_b, SEP_TOKEN]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            tokens, positions, labels = create_masked_lm_predictions(
                tokens, masked_lm_prob, max_predictions_per_seq, vocab_words,
                rng, do_whole_word_mask=do_whole_word_mask)
            instances.append(TrainingInstance(
                tokens=tokens, segment_ids=segment_ids,
                masked_lm_positions=positions, masked_lm_labels=labels,
                is_random_next=is_random_next))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


def num_masked_lm_predictions(num_tokens, masked_lm_prob,
                              max_predictions_per_seq):
    """min(max_predictions_per_seq, max(1, round(num_tokens *
    masked_lm_prob))): how many positions the original masks.

    Source: create_pretraining_data.py, create_masked_lm_predictions.
    """
    return min(max_predictions_per_seq,
               max(1, int(round(num_tokens * masked_lm_prob))))


def create_masked_lm_predictions(tokens, masked_lm_prob,
                                 max_predictions_per_seq, vocab_words, rng,
                                 do_whole_word_mask=False):
    """Chooses and replaces the masked-LM positions of one sequence.

    Args:
      tokens: list of str, `[CLS] A [SEP] B [SEP]` (not modified); the
        other arguments as create_training_instances.

    Returns:
      (output_tokens, masked_lm_positions sorted, masked_lm_labels).

    Source: create_pretraining_data.py, create_masked_lm_predictions.
    """
    cand_indexes = []
    for i, token in enumerate(tokens):
        if token == CLS_TOKEN or token == SEP_TOKEN:
            continue
        if (do_whole_word_mask and cand_indexes
                and token.startswith("##")):
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
    rng.shuffle(cand_indexes)

    output_tokens = list(tokens)
    num_to_predict = num_masked_lm_predictions(
        len(tokens), masked_lm_prob, max_predictions_per_seq)

    masked = []
    covered = set()
    for index_set in cand_indexes:
        if len(masked) >= num_to_predict:
            break
        if len(masked) + len(index_set) > num_to_predict:
            continue
        if any(index in covered for index in index_set):
            continue
        for index in index_set:
            covered.add(index)
            if rng.random() < 0.8:
                masked_token = MASK_TOKEN
            elif rng.random() < 0.5:
                masked_token = tokens[index]
            else:
                masked_token = vocab_words[rng.randint(0, len(vocab_words) - 1)]
            output_tokens[index] = masked_token
            masked.append((index, tokens[index]))

    masked.sort(key=lambda item: item[0])
    positions = [index for index, _ in masked]
    labels = [label for _, label in masked]
    return output_tokens, positions, labels


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """Shortens a pair in place to max_num_tokens tokens (the longer one, B
    on ties; front or back by `rng.random() < 0.5`).

    Source: create_pretraining_data.py, truncate_seq_pair.
    """
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()
