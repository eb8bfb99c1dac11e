"""The extract step: changed notes in, memory units out (the model's extractor, the
day-note template, repeats of a note, what each reading gave)."""
