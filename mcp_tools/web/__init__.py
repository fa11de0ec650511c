"""The read-only web page of `code3 serve`: the bounty board, each bounty's timeline and live updates."""
