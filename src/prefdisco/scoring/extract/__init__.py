"""Pull a final answer out of a free-form model response, one module per kind of answer.

Pure text functions: no model calls, and nothing here evaluates the response text. ``markup`` finds where an
answer is stated (``\\boxed{}``, "the answer is", math segments); ``numbers`` reads numbers and integer answers;
``choice`` reads a multiple-choice letter; ``text`` gives a short free-text answer and its SQuAD normalization.
"""
