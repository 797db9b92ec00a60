"""The `proof` world kind's object language and machinery, one module per job.

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
