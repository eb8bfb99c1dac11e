"""Reading and writing prose, for both integrators: a note's blocks and subjects, names
that say a subject, sentences, the wording around the owner's words, node text, updates
that edit a node as a person would, and the evidence that a unit and a node share a
subject."""
