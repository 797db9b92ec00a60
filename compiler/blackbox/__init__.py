"""The `blackbox` kind: a hidden function over typed inputs, explored by queries (the Oracle protocol).

Modules: spec (the spec reader: Spec -> BlackBoxWorld, KIND), world
(BlackBoxWorld and its test cases), manual, certify (every test determined by
what the turns can reveal; the cross-box check), domains (input domains,
literals, answer matching).
"""
