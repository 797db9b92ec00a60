"""The `game` kind: a repeated two-player game against finite-state opponents.

Modules: spec (the spec reader: Spec -> GameWorld, KIND), world (GameWorld, its
test games and pool matches), manual, certify (the certifier and the cross-box
check), engine (games, strategies, matches, exact optimum by dynamic programming).
"""
