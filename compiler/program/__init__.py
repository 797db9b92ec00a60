"""The `program` kind: worlds whose probes and answers are programs in a world-defined language.

Modules: spec (the reader: Spec -> ProgramWorld, KIND), world (ProgramWorld: probe,
verify, requires, variants), manual, certify, and the engine: surface (syntax
block -> strict LALR grammar), kernel (programs -> closures), semantics (base
lines and rules -> operator tables that know each target's rule id), equations
(rule reports), probegen and values_gen (generated probes and values).
"""
