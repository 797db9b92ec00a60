"""The built-in explorer of black boxes (issue 26): LLM-free strategies per family shape that see only what an
agent sees (a `BoxView`: the manual, the declared domains, the tests' questions, and the feedback of their own
queries). docs/explorer.md ("Black boxes") describes each strategy and what it reaches."""
