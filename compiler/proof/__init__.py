"""The `proof` world kind: worlds whose probes and answers are Fitch proofs, one module per job.

- `spec`: the reader (Spec -> ProofWorld) and KIND;
- `world`: ProofWorld (probe, verify, requires, variants) and its records;
- `manual`: the manual an agent reads (base rules only);
- `certify`: observability, coverage, herrings and unprovable goals;
- `formula`: first-order formulas (tuples, de Bruijn binders), their notation,
  parser and printer;
- `schema`: inference-rule schemas (`A -> B, A |- B ; distinct`), their parser,
  canonical form and matcher;
- `proofs`: Fitch proof text -> numbered lines, subproofs and citations;
- `checker`: a proof against a rule table -> a verdict naming the first bad line;
- `search`: the bounded certifier (saturation over a finite formula universe)
  and proof extraction;
- `generate`: one-rule witness proofs and the seeded probe stream.
"""
