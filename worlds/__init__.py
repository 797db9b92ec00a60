"""World spec files shipped with worldspec (read them as data; this package holds no code)."""
