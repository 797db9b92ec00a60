"""The `program` kind: worlds whose probes and answers are programs in a world-defined language.

Modules: spec (Spec -> ProgramWorld), world (probe, verify, requires), manual,
certify, and the engine: surface (syntax block -> grammar), kernel (programs ->
closures), semantics (base lines and rules -> operator tables), equations
(rule reports), probegen and values_gen (generated probes and values).
"""
