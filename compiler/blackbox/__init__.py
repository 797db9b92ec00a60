"""The `blackbox` kind: a hidden function over typed inputs, explored by queries (the Oracle protocol).

Modules: spec (Spec -> BlackBoxWorld), domains (input domains, literals,
answer matching), certify (every test determined by what the turns can reveal).
"""
