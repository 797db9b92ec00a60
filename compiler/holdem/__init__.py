"""`kind holdem`: heads-up no-limit Texas Hold'em on pokerkit (spec, engine, bots, world, manual, certify)."""
