"""The `game` kind: a repeated two-player game against finite-state opponents.

Modules: spec (Spec -> GameWorld), engine (games, strategies, matches, exact
optimum by dynamic programming).
"""
