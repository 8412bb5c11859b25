"""The next-sentence demo task (demos/multiple_choice.sh): `sentence_split`,
`corpus_documents`, `next_sentence_task` (build and write it) and
`next_sentence_analysis` (what the model got right, by row kind)."""
