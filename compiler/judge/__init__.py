"""The `judge` kind: situation puzzles and interactive math with a hidden truth and a judge (InteractiveBench).

Modules: spec (the spec reader: Spec -> JudgeWorld, KIND), world (JudgeWorld:
moves, judge prompts, label normaliser, keyword judge, answer check), keywords
(words, numbers and answers as the keyword judge compares them), manual,
certify (every key fact reachable; the answer check accepts the reference and
rejects surface-only guesses).
"""
